//! One JSON request and its answer over a loopback TCP connection: what the stub model and
//! embeddings servers of the tests share. Enough HTTP/1.1 for a client that sends one request
//! with a `Content-Length` and reads one answer until the connection closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct JsonRequest {
    /// The path of the request line (`/v1/embeddings`).
    pub path: String,
    /// The `Authorization` header, if sent.
    pub authorization: Option<String>,
    /// The body, parsed.
    pub body: Value,
}

/// Reads one request from `stream`, adds it to `seen`, lets `answer` decide the status and JSON
/// text, writes the answer and closes. The request is recorded before the answer is written, so
/// a client that has its answer finds its request in `seen`. Nothing is recorded if the request
/// could not be read.
pub fn exchange(
    stream: TcpStream,
    seen: &Mutex<Vec<JsonRequest>>,
    answer: impl FnOnce(&JsonRequest) -> (u16, String),
) -> Option<()> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let path = request_line.split_whitespace().nth(1)?.to_owned();
    let mut content_length = 0;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => content_length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0; content_length];
    reader.read_exact(&mut body).ok()?;
    let request = JsonRequest { path, authorization, body: serde_json::from_slice(&body).ok()? };
    let (status, text) = answer(&request);
    seen.lock().ok()?.push(request);
    let response = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        if status == 200 { "OK" } else { "Error" },
        text.len()
    );
    let mut stream = stream;
    stream.write_all(response.as_bytes()).ok()
}
