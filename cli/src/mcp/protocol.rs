//! JSON-RPC 2.0 framing as MCP uses it over stdio: one message per line, bounded in size.
//!
//! The MCP SDK understands the messages; this module is the part in front of it: lines of at
//! most [`LINE_MAX_BYTES`], telling requests from notifications, and the error replies to lines
//! that are not a message at all (the SDK would drop those without an answer).

use std::collections::BTreeMap;
use std::io::{self, BufRead};

use serde_json::value::RawValue;
use serde_json::{json, Value};

/// The largest message accepted. A longer line is answered with an error and skipped without
/// being held in memory, and the server keeps serving.
pub const LINE_MAX_BYTES: usize = 4 * 1024 * 1024;

/// The JSON-RPC error codes this server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The line is not JSON.
    Parse = -32700,
    /// The JSON is not a valid request (wrong `jsonrpc`, bad id, a batch, too large).
    InvalidRequest = -32600,
    /// The method's parameters are wrong (no tool name, an unknown tool).
    InvalidParams = -32602,
}

/// A JSON-RPC error to send back: code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// The code.
    pub code: ErrorCode,
    /// What was wrong, for the client's logs.
    pub message: String,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into() }
    }
}

/// A request's id exactly as the client wrote it (a string, or a number of any size), so the
/// response carries the very same id: read as a JSON number, a large integer would come back
/// as a rounded float.
#[derive(Debug, Clone)]
pub struct RequestId(Box<RawValue>);

impl RequestId {
    /// The id of a response to a message whose id could not be read.
    pub fn null() -> RequestId {
        RequestId(RawValue::NULL.to_owned())
    }

    /// The id as JSON text.
    pub fn as_json(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for RequestId {
    fn eq(&self, other: &RequestId) -> bool {
        self.as_json() == other.as_json()
    }
}

/// One incoming line, understood.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: it gets exactly one response.
    Request {
        /// The id to echo (a string or a number).
        id: RequestId,
        /// The method.
        method: String,
        /// The parameters, if any.
        params: Option<Value>,
    },
    /// A notification: it gets no response, whatever it says.
    Notification {
        /// The method.
        method: String,
    },
    /// A response to a request of ours; this server sends none, so it is ignored.
    Response,
    /// Not a valid message: answered with this error, with `id` when one could be read.
    Invalid {
        /// The request's id, or null.
        id: RequestId,
        /// Why it is invalid.
        error: RpcError,
    },
}

/// Understands one line of input.
pub fn classify(line: &[u8]) -> Incoming {
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(error) => {
            let error = RpcError::new(ErrorCode::Parse, format!("the line is not valid JSON: {error}"));
            return Incoming::Invalid { id: RequestId::null(), error };
        }
    };
    let Value::Object(mut object) = message else {
        let what = if message.is_array() {
            "batches are not supported; send one message per line"
        } else {
            "a message must be a JSON object"
        };
        return Incoming::Invalid { id: RequestId::null(), error: RpcError::new(ErrorCode::InvalidRequest, what) };
    };
    let id = object.remove("id");
    let id_is_usable = matches!(&id, Some(Value::String(_) | Value::Number(_)));
    let exact_id = if id_is_usable { raw_id(line) } else { None };
    let invalid = |exact_id: &Option<RequestId>, message: &str| Incoming::Invalid {
        id: exact_id.clone().unwrap_or_else(RequestId::null),
        error: RpcError::new(ErrorCode::InvalidRequest, message),
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid(&exact_id, "\"jsonrpc\" must be \"2.0\"");
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return invalid(&exact_id, "\"method\" must be a string"),
        None if id_is_usable && (object.contains_key("result") || object.contains_key("error")) => {
            return Incoming::Response
        }
        None => return invalid(&exact_id, "a request needs a \"method\""),
    };
    match id {
        None => Incoming::Notification { method },
        Some(Value::String(_) | Value::Number(_)) => {
            let id = exact_id.unwrap_or_else(RequestId::null);
            Incoming::Request { id, method, params: object.remove("params") }
        }
        Some(_) => invalid(&None, "\"id\" must be a string or a number"),
    }
}

/// The id of a message as written, when the line is a JSON object that has one.
fn raw_id(line: &[u8]) -> Option<RequestId> {
    let mut fields: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(line).ok()?;
    fields.remove("id").map(RequestId)
}

/// A response line: the id exactly as the request had it, then `body` (`result` or `error`).
pub fn response(id: &RequestId, field: &str, body: &Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{},"{field}":{body}}}"#, id.as_json())
}

/// A success response, as one line of JSON without its line end.
pub fn result_response(id: &RequestId, result: &Value) -> String {
    response(id, "result", result)
}

/// An error response, as one line of JSON without its line end. The message never repeats a
/// token, whatever the client sent.
pub fn error_response(id: &RequestId, error: &RpcError) -> String {
    let message = cheesedb::conceal_token_digits(&error.message);
    response(id, "error", &json!({ "code": error.code as i32, "message": message }))
}

/// One line read from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line within the size limit, without its line ending.
    Complete(Vec<u8>),
    /// A line over the size limit; its bytes were skipped, not kept.
    TooLong,
}

/// Reads the next line of at most `max_bytes`; `None` at the end of input. A longer line is
/// read to its end and dropped, so one huge message cannot exhaust memory or end the session.
pub fn read_line(reader: &mut impl BufRead, max_bytes: usize) -> io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            if !read_any {
                return Ok(None);
            }
            break;
        }
        read_any = true;
        let (taken, ended) = match available.iter().position(|byte| *byte == b'\n') {
            Some(position) => (position, true),
            None => (available.len(), false),
        };
        if !too_long {
            if line.len() + taken > max_bytes {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(&available[..taken]);
            }
        }
        reader.consume(if ended { taken + 1 } else { taken });
        if ended {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Line::Complete(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let request = classify(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
        let seven = RequestId(RawValue::from_string("7".into()).unwrap());
        assert_eq!(request, Incoming::Request { id: seven, method: "ping".into(), params: None });
        let notification = classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(notification, Incoming::Notification { method: "notifications/initialized".into() });
        assert_eq!(classify(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#), Incoming::Response);
    }

    #[test]
    fn malformed_messages_get_the_right_code() {
        let code = |line: &[u8]| match classify(line) {
            Incoming::Invalid { error, .. } => Some(error.code),
            _ => None,
        };
        assert_eq!(code(b"{not json"), Some(ErrorCode::Parse));
        assert_eq!(code(b"[1,2]"), Some(ErrorCode::InvalidRequest));
        assert_eq!(code(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), Some(ErrorCode::InvalidRequest));
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#), Some(ErrorCode::InvalidRequest));
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1,"method":5}"#), Some(ErrorCode::InvalidRequest));
    }

    #[test]
    fn the_id_of_an_invalid_request_is_echoed_when_usable() {
        let Incoming::Invalid { id, .. } = classify(br#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#) else { panic!() };
        assert_eq!(id.as_json(), "3");
    }

    #[test]
    fn ids_are_echoed_exactly_as_written() {
        for written in
            ["123456789012345678901234567890", "-9223372036854775809", "18446744073709551616", r#""a\u00e9b""#, "0"]
        {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{written},"method":"ping"}}"#);
            let Incoming::Request { id, .. } = classify(line.as_bytes()) else { panic!("{line}") };
            let answer = result_response(&id, &json!({}));
            assert_eq!(answer, format!(r#"{{"jsonrpc":"2.0","id":{written},"result":{{}}}}"#));
        }
    }

    #[test]
    fn lines_over_the_limit_are_skipped_and_reading_goes_on() {
        let mut input = Vec::new();
        input.extend(vec![b'x'; 100]);
        input.extend_from_slice(b"\nshort\r\nlast");
        let mut reader = io::BufReader::with_capacity(16, &input[..]);
        assert_eq!(read_line(&mut reader, 10).unwrap(), Some(Line::TooLong));
        assert_eq!(read_line(&mut reader, 10).unwrap(), Some(Line::Complete(b"short".to_vec())));
        assert_eq!(read_line(&mut reader, 10).unwrap(), Some(Line::Complete(b"last".to_vec())));
        assert_eq!(read_line(&mut reader, 10).unwrap(), None);
    }
}
