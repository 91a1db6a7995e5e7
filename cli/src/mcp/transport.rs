//! The stdio transport the MCP SDK serves through: one JSON-RPC message per line.
//!
//! A thread reads standard input and hands each message to the SDK; another writes what the
//! SDK sends. The reading side does what the SDK's own stdio transport does not:
//! - a line that is not a message (not JSON, a batch, a wrong `jsonrpc`, over
//!   [`LINE_MAX_BYTES`]) is answered with its JSON-RPC error, and a request whose parameters
//!   the SDK cannot read gets -32602 with its id, where the SDK would drop the line silently or
//!   answer without the id;
//! - a request id the SDK cannot hold exactly (a number beyond 64 bits, a string written with
//!   escapes) is swapped for a stand-in on the way in and written back as sent on the way out;
//! - a notification before the session starts is dropped (the SDK ends the session on one);
//! - when input ends, the requests still running are answered before the session ends.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::{mpsc as std_mpsc, Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams, JsonRpcMessage,
    RequestId as SdkRequestId, ServerJsonRpcMessage,
};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, Notify};

use crate::mcp::protocol::{
    classify, error_response, read_line, response, result_response, ErrorCode, Incoming, Line, RequestId, RpcError,
    LINE_MAX_BYTES,
};

/// How many messages may wait between the reading thread and the SDK.
const INCOMING_QUEUE_MESSAGES: usize = 64;
/// The request metadata that starts a session without `initialize` (the 2026 lifecycle).
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The request methods of the protocol (the SDK answers any other as a custom request).
const STANDARD_METHODS: [&str; 19] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
    "subscriptions/listen",
];
/// What stand-in ids start with; the counter after it makes each one unique.
const STAND_IN_PREFIX: &str = "cheesedb-exact-id-";

/// What the reading thread does with one line.
#[derive(Debug)]
pub enum Admitted {
    /// Hand this message to the SDK.
    Forward(Box<ClientJsonRpcMessage>),
    /// Write this line back at once: the line was not a message the SDK can take.
    Answer(String),
    /// Nothing to do (a blank line, a response, a notification before the session).
    Drop,
}

/// The requests handed to the SDK and not answered yet, with the ids their client wrote: what
/// both threads and the SDK's side share.
#[derive(Debug, Default)]
struct InFlightRequests {
    /// Requests handed to the SDK and not answered yet.
    pending: Mutex<HashSet<SdkRequestId>>,
    /// Told each time a request is answered.
    answered: Notify,
    /// The ids as the client wrote them, by the stand-in the SDK got instead.
    exact_ids: Mutex<HashMap<SdkRequestId, RequestId>>,
}

impl InFlightRequests {
    fn pending(&self) -> MutexGuard<'_, HashSet<SdkRequestId>> {
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn exact_ids(&self) -> MutexGuard<'_, HashMap<SdkRequestId, RequestId>> {
        self.exact_ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn settle(&self, id: &SdkRequestId) {
        if self.pending().remove(id) {
            self.answered.notify_one();
        }
    }

    async fn all_answered(&self) {
        while !self.pending().is_empty() {
            self.answered.notified().await;
        }
    }
}

/// Turns lines into messages for the SDK; holds what one session's reading needs to remember.
#[derive(Debug)]
pub struct Admission {
    in_flight: Arc<InFlightRequests>,
    /// Whether an `initialize` (or a request carrying its own protocol version) went through.
    session_started: bool,
    stand_ins_given: u64,
}

impl Admission {
    fn new(in_flight: Arc<InFlightRequests>) -> Admission {
        Admission { in_flight, session_started: false, stand_ins_given: 0 }
    }

    /// What to do with one line read from the client.
    pub fn admit(&mut self, line: Line) -> Admitted {
        let line = match line {
            Line::Complete(line) => line,
            Line::TooLong => {
                let message = format!("the message is larger than {LINE_MAX_BYTES} bytes and was skipped");
                return Admitted::Answer(error_response(
                    &RequestId::null(),
                    &RpcError::new(ErrorCode::InvalidRequest, message),
                ));
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return Admitted::Drop;
        }
        match classify(&line) {
            Incoming::Invalid { id, error } => Admitted::Answer(error_response(&id, &error)),
            // This server sends the client no requests, so no response is awaited.
            Incoming::Response => Admitted::Drop,
            Incoming::Notification { method } => self.notification(&line, &method),
            Incoming::Request { id, method, .. } => self.request(&line, id, &method),
        }
    }

    fn notification(&mut self, line: &[u8], method: &str) -> Admitted {
        if !self.session_started {
            return Admitted::Drop;
        }
        let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(line) else { return Admitted::Drop };
        if method == "notifications/cancelled" {
            // The SDK sends nothing for a cancelled request: stop waiting for its answer.
            if let Some(id) = cancelled_request(line) {
                self.in_flight.settle(&id);
            }
        }
        Admitted::Forward(Box::new(message))
    }

    fn request(&mut self, line: &[u8], id: RequestId, method: &str) -> Admitted {
        let exact = serde_json::from_str::<SdkRequestId>(id.as_json())
            .ok()
            .filter(|parsed| serde_json::to_string(parsed).is_ok_and(|written| written == id.as_json()));
        let (parsed, sdk_id, stand_in) = match exact {
            Some(sdk_id) => (serde_json::from_slice::<ClientJsonRpcMessage>(line), sdk_id, false),
            None => {
                self.stand_ins_given += 1;
                let stand_in = SdkRequestId::String(format!("{STAND_IN_PREFIX}{}", self.stand_ins_given).into());
                (with_id(line, &stand_in), stand_in, true)
            }
        };
        let problem = match &parsed {
            Ok(message) if is_misread_standard_request(message) => Some(params_problem(line, method)),
            Ok(_) => None,
            Err(error) => Some(error.to_string()),
        };
        let (Ok(message), None) = (parsed, problem.as_ref()) else {
            let message = format!("the parameters of {method:?} are not valid: {}", problem.unwrap_or_default());
            return Admitted::Answer(error_response(&id, &RpcError::new(ErrorCode::InvalidParams, message)));
        };
        if method == "initialize" || (method != "ping" && method != "server/discover" && carries_version(line)) {
            self.session_started = true;
        }
        if stand_in {
            self.in_flight.exact_ids().insert(sdk_id.clone(), id);
        }
        self.in_flight.pending().insert(sdk_id);
        Admitted::Forward(Box::new(message))
    }
}

/// Whether the SDK took a request for a method of the protocol as a custom one: it does so when
/// the parameters do not fit (a `tools/call` without a name, an `initialize` without
/// `clientInfo`), and would then answer "method not found" for a method that exists.
fn is_misread_standard_request(message: &ClientJsonRpcMessage) -> bool {
    match message {
        JsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CustomRequest(custom) => STANDARD_METHODS.contains(&custom.method.as_str()),
            _ => false,
        },
        _ => false,
    }
}

/// What is wrong with the parameters of a request for `method`, in the SDK's words when this
/// server knows the method's parameter type.
fn params_problem(line: &[u8], method: &str) -> String {
    let params = serde_json::from_slice::<Value>(line).map(|mut message| message["params"].take()).unwrap_or_default();
    let error = match method {
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        _ => None,
    };
    error.map_or_else(|| String::from("they do not fit the protocol"), |error| error.to_string())
}

/// The message of `line` with its id replaced by `id`.
fn with_id(line: &[u8], id: &SdkRequestId) -> serde_json::Result<ClientJsonRpcMessage> {
    let mut fields: Map<String, Value> = serde_json::from_slice(line)?;
    fields.insert("id".into(), serde_json::to_value(id)?);
    serde_json::from_value(Value::Object(fields))
}

/// Whether a request carries its own protocol version in `params._meta`.
fn carries_version(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line)
        .ok()
        .is_some_and(|message| message["params"]["_meta"].get(META_PROTOCOL_VERSION).is_some())
}

/// The id a `notifications/cancelled` line names.
fn cancelled_request(line: &[u8]) -> Option<SdkRequestId> {
    let message: Value = serde_json::from_slice(line).ok()?;
    serde_json::from_value(message["params"]["requestId"].clone()).ok()
}

/// A line for the writing thread, or the word to stop.
enum Outgoing {
    Line(String),
    Stop,
}

/// The transport the SDK reads from and writes to.
pub struct StdioTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: std_mpsc::Sender<Outgoing>,
    in_flight: Arc<InFlightRequests>,
}

/// The writing thread, to be stopped once the session is over.
pub struct Writer {
    outgoing: std_mpsc::Sender<Outgoing>,
    thread: JoinHandle<()>,
}

impl Writer {
    /// Writes what is still queued, then ends the thread.
    pub fn finish(self) {
        // The thread may have ended already (the client stopped reading); nothing is lost then.
        let _ = self.outgoing.send(Outgoing::Stop);
        let _ = self.thread.join();
    }
}

impl StdioTransport {
    /// Starts the reading thread on `input` and the writing thread on `output`.
    pub fn start(input: impl Read + Send + 'static, output: impl Write + Send + 'static) -> (StdioTransport, Writer) {
        let in_flight = Arc::new(InFlightRequests::default());
        let (outgoing, lines) = std_mpsc::channel();
        let writer = std::thread::spawn(move || write_lines(output, &lines));
        let (forward, incoming) = mpsc::channel(INCOMING_QUEUE_MESSAGES);
        let reader_outgoing = outgoing.clone();
        let admission = Admission::new(Arc::clone(&in_flight));
        // Not joined: it may sit in a read of standard input until the process ends.
        std::thread::spawn(move || read_messages(BufReader::new(input), admission, &forward, &reader_outgoing));
        let transport = StdioTransport { incoming, outgoing: outgoing.clone(), in_flight };
        (transport, Writer { outgoing, thread: writer })
    }

    /// One line of JSON for `message`; the answer to a request ends the wait for it.
    fn encode(&self, mut message: ServerJsonRpcMessage) -> io::Result<String> {
        let answered = match &mut message {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => {
                // Never repeat a token, whatever the client sent (an SDK error names the method).
                error.error.message = cheesedb::conceal_token_digits(&error.error.message).into();
                error.id.clone()
            }
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let exact = answered.as_ref().and_then(|id| self.in_flight.exact_ids().remove(id));
        if let Some(id) = &answered {
            self.in_flight.settle(id);
        }
        Ok(match (exact, message) {
            (Some(exact), JsonRpcMessage::Response(answer)) => {
                result_response(&exact, &serde_json::to_value(answer.result)?)
            }
            (Some(exact), JsonRpcMessage::Error(error)) => {
                response(&exact, "error", &serde_json::to_value(error.error)?)
            }
            (_, message) => serde_json::to_string(&message)?,
        })
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self.encode(item).and_then(|line| {
            self.outgoing
                .send(Outgoing::Line(line))
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client stopped reading"))
        });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        if let Some(message) = self.incoming.recv().await {
            return Some(message);
        }
        // The input ended: what is still running gets its answer before the session ends.
        self.in_flight.all_answered().await;
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn read_messages(
    mut input: impl BufRead,
    mut admission: Admission,
    forward: &mpsc::Sender<ClientJsonRpcMessage>,
    outgoing: &std_mpsc::Sender<Outgoing>,
) {
    loop {
        let line = match read_line(&mut input, LINE_MAX_BYTES) {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(error) => {
                eprintln!("cheesedb mcp: cannot read from the client: {error}");
                return;
            }
        };
        let delivered = match admission.admit(line) {
            Admitted::Forward(message) => forward.blocking_send(*message).is_ok(),
            Admitted::Answer(line) => outgoing.send(Outgoing::Line(line)).is_ok(),
            Admitted::Drop => true,
        };
        if !delivered {
            return;
        }
    }
}

fn write_lines(mut output: impl Write, lines: &std_mpsc::Receiver<Outgoing>) {
    while let Ok(Outgoing::Line(mut line)) = lines.recv() {
        line.push('\n');
        if let Err(error) = output.write_all(line.as_bytes()).and_then(|()| output.flush()) {
            eprintln!("cheesedb mcp: cannot write to the client: {error}");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn admit(admission: &mut Admission, line: &str) -> Admitted {
        admission.admit(Line::Complete(line.as_bytes().to_vec()))
    }

    fn answer(admitted: Admitted) -> Value {
        let Admitted::Answer(line) = admitted else { panic!("an answer: {admitted:?}") };
        serde_json::from_str(&line).unwrap()
    }

    #[test]
    fn notifications_wait_for_the_session_and_lines_that_are_not_messages_are_answered() {
        let mut admission = Admission::new(Arc::default());
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(admit(&mut admission, initialized), Admitted::Drop));
        assert_eq!(answer(admit(&mut admission, "{oops"))["error"]["code"], -32700);
        assert_eq!(answer(admission.admit(Line::TooLong))["error"]["code"], -32600);
        assert!(matches!(admit(&mut admission, "  "), Admitted::Drop));
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert!(matches!(admit(&mut admission, initialize), Admitted::Forward(_)));
        assert!(matches!(admit(&mut admission, initialized), Admitted::Forward(_)));
    }

    #[test]
    fn a_standard_request_with_parameters_that_do_not_fit_gets_invalid_params_with_its_id() {
        let mut admission = Admission::new(Arc::default());
        let refused = answer(admit(&mut admission, r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}"#));
        assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (json!("a"), json!(-32602)));
        assert!(refused["error"]["message"].as_str().unwrap().contains("name"), "{refused}");
        let custom = r#"{"jsonrpc":"2.0","id":2,"method":"made/up","params":{}}"#;
        assert!(matches!(admit(&mut admission, custom), Admitted::Forward(_)));
    }

    #[test]
    fn an_id_the_sdk_cannot_hold_gets_a_stand_in_and_is_answered_as_written() {
        let in_flight: Arc<InFlightRequests> = Arc::default();
        let mut admission = Admission::new(Arc::clone(&in_flight));
        let written = "123456789012345678901234567890";
        let line = format!(r#"{{"jsonrpc":"2.0","id":{written},"method":"ping"}}"#);
        let Admitted::Forward(message) = admit(&mut admission, &line) else { panic!() };
        let JsonRpcMessage::Request(request) = *message else { panic!() };
        assert!(matches!(&request.id, SdkRequestId::String(id) if id.starts_with(STAND_IN_PREFIX)));
        let (outgoing, _lines) = std_mpsc::channel();
        let (_forward, incoming) = mpsc::channel(1);
        let transport = StdioTransport { incoming, outgoing, in_flight: Arc::clone(&in_flight) };
        let reply = ServerJsonRpcMessage::response(rmcp::model::ServerResult::empty(()), request.id);
        assert_eq!(transport.encode(reply).unwrap(), format!(r#"{{"jsonrpc":"2.0","id":{written},"result":{{}}}}"#));
        assert!(in_flight.pending().is_empty() && in_flight.exact_ids().is_empty());
    }
}
