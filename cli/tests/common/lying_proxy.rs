//! A small HTTP proxy between a command and a real object store that lies in LIST answers: each
//! answer to a ListObjectsV2 request gains the keys the test chose (foreign keys, or every key
//! of the bucket, as a store that ignores the prefix would answer). Every other request and
//! answer passes unchanged; a request signed for the store stays valid, since the proxy keeps
//! its `Host` header and its bytes.
//!
//! One request per connection: the proxy answers with `Connection: close`, so the client opens
//! a new connection for the next request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The proxy, stopped when dropped.
pub struct LyingProxy {
    address: SocketAddr,
    injected: Arc<Mutex<Vec<String>>>,
    lists_altered: Arc<AtomicU64>,
    stopping: Arc<AtomicBool>,
    accepting: Option<JoinHandle<()>>,
}

impl LyingProxy {
    /// A proxy on a free loopback port in front of the object store at `upstream`
    /// (`http://127.0.0.1:PORT`), ready when this returns (it listens already).
    pub fn start(upstream: &str) -> LyingProxy {
        let upstream = upstream.strip_prefix("http://").unwrap_or(upstream).trim_end_matches('/').to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let injected = Arc::new(Mutex::new(Vec::new()));
        let lists_altered = Arc::new(AtomicU64::new(0));
        let stopping = Arc::new(AtomicBool::new(false));
        let accepting = {
            let (injected, lists_altered, stopping) = (injected.clone(), lists_altered.clone(), stopping.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let (upstream, injected, lists_altered) =
                        (upstream.clone(), injected.clone(), lists_altered.clone());
                    std::thread::spawn(move || {
                        let keys = injected.lock().unwrap().clone();
                        if let Ok(true) = relay(stream, &upstream, &keys) {
                            lists_altered.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                }
            })
        };
        LyingProxy { address, injected, lists_altered, stopping, accepting: Some(accepting) }
    }

    /// The endpoint a client is given instead of the store's.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// From now on every LIST answer also names `keys`.
    pub fn inject(&self, keys: Vec<String>) {
        *self.injected.lock().unwrap() = keys;
    }

    /// How many LIST answers were altered so far.
    pub fn lists_altered(&self) -> u64 {
        self.lists_altered.load(Ordering::SeqCst)
    }

    /// Writes `object-store.toml` into a data folder so that commands there go through the proxy.
    pub fn configure(&self, folder: &Path) {
        super::seaweed::configure_endpoint(folder, &self.endpoint());
    }
}

impl Drop for LyingProxy {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect(self.address);
        if let Some(accepting) = self.accepting.take() {
            let _ = accepting.join();
        }
    }
}

/// An HTTP message's start line and headers, and its body.
struct Message {
    start: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(found, _)| found.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }
}

/// Reads the start line and headers.
fn read_head(reader: &mut impl BufRead) -> std::io::Result<(String, Vec<(String, String)>)> {
    let mut start = String::new();
    reader.read_line(&mut start)?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            return Ok((start.trim_end().to_owned(), headers));
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
}

/// The body of a `Transfer-Encoding: chunked` message, decoded.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = raw.windows(2).position(|pair| pair == b"\r\n") else { return body };
        let size_text = String::from_utf8_lossy(&raw[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16).unwrap_or(0);
        raw = &raw[line_end + 2..];
        if size == 0 || raw.len() < size {
            return body;
        }
        body.extend_from_slice(&raw[..size]);
        raw = raw.get(size + 2..).unwrap_or_default();
    }
}

/// Forwards one request and its answer; returns whether the answer was a LIST that was altered.
fn relay(client: TcpStream, upstream: &str, injected: &[String]) -> std::io::Result<bool> {
    let mut reader = BufReader::new(client.try_clone()?);
    let (start, headers) = read_head(&mut reader)?;
    let length: usize = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let request = Message { start, headers, body };
    let is_list = request.start.starts_with("GET ") && request.start.contains("list-type=2");

    let mut server = TcpStream::connect(upstream)?;
    let mut forwarded = format!("{}\r\n", request.start).into_bytes();
    for (name, value) in request.headers.iter().filter(|(name, _)| !name.eq_ignore_ascii_case("connection")) {
        forwarded.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    forwarded.extend_from_slice(b"Connection: close\r\n\r\n");
    forwarded.extend_from_slice(&request.body);
    server.write_all(&forwarded)?;
    let mut answer_bytes = Vec::new();
    server.read_to_end(&mut answer_bytes)?;
    let mut answer_reader = BufReader::new(answer_bytes.as_slice());
    let (start, headers) = read_head(&mut answer_reader)?;
    let mut raw_body = Vec::new();
    answer_reader.read_to_end(&mut raw_body)?;
    let mut answer = Message { start, headers, body: raw_body };
    let chunked = answer.header("transfer-encoding").is_some_and(|value| value.eq_ignore_ascii_case("chunked"));
    if chunked {
        answer.body = dechunk(&answer.body);
    }
    let altered = is_list && answer.start.contains(" 200") && !injected.is_empty();
    if altered {
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        let entries: String = injected
            .iter()
            .map(|key| {
                format!(
                    "<Contents><Key>{key}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>\"0\"</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>"
                )
            })
            .collect();
        answer.body = text.replacen("</ListBucketResult>", &format!("{entries}</ListBucketResult>"), 1).into_bytes();
    }
    let rewrite_length = chunked || altered;
    let mut out = format!("{}\r\n", answer.start).into_bytes();
    for (name, value) in &answer.headers {
        let dropped = name.eq_ignore_ascii_case("connection")
            || (rewrite_length
                && (name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")));
        if !dropped {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
    }
    if rewrite_length {
        out.extend_from_slice(format!("Content-Length: {}\r\n", answer.body.len()).as_bytes());
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out.extend_from_slice(&answer.body);
    let mut client = client;
    client.write_all(&out)?;
    client.flush()?;
    Ok(altered)
}
