//! A `cheesedb mcp` process driven line by line, with a timeout on every read.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use super::Cli;

/// How long a response may take before the test fails.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(15);

/// A running MCP server.
pub struct McpProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl McpProcess {
    /// Starts `cheesedb mcp AGENT` in `cli`'s data folder.
    pub fn start(cli: &Cli, agent: &str) -> McpProcess {
        McpProcess::start_with(cli, &["mcp", agent])
    }

    /// Starts `cheesedb` with `arguments` (`mcp AGENT` and options) in `cli`'s data folder.
    pub fn start_with(cli: &Cli, arguments: &[&str]) -> McpProcess {
        let mut child = cli
            .command(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        McpProcess { child, stdin, lines, next_id: 1 }
    }

    /// Sends raw bytes followed by a newline.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends a JSON message.
    pub fn send(&mut self, message: &Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    /// The next line the server wrote, which must be one JSON-RPC message.
    pub fn receive(&mut self) -> Value {
        let line = self.lines.recv_timeout(RESPONSE_TIMEOUT).expect("a response in time");
        let message: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("stdout carries JSON only: {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    /// The next line the server wrote, as written.
    pub fn receive_line(&mut self) -> String {
        self.lines.recv_timeout(RESPONSE_TIMEOUT).expect("a response in time")
    }

    /// Whether the server stays silent for `wait`.
    pub fn is_silent_for(&mut self, wait: Duration) -> bool {
        matches!(self.lines.recv_timeout(wait), Err(RecvTimeoutError::Timeout))
    }

    /// Sends a request and returns its response, checking the id is echoed.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let response = self.receive();
        assert_eq!(response["id"], json!(id), "{response}");
        response
    }

    /// The classic handshake.
    pub fn initialize(&mut self) -> Value {
        let response = self.request(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } }),
        );
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        response
    }

    /// Calls a tool and returns the `result`.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({ "name": name, "arguments": arguments }));
        response.get("result").cloned().unwrap_or_else(|| panic!("a result: {response}"))
    }

    /// Calls a tool that must succeed and returns its structured content.
    pub fn call_ok(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.call_tool(name, arguments.clone());
        assert_eq!(result["isError"], false, "{name} {arguments}: {result}");
        let text = result["content"][0]["text"].as_str().expect("a text block");
        assert_eq!(serde_json::from_str::<Value>(text).ok().as_ref(), Some(&result["structuredContent"]));
        result["structuredContent"].clone()
    }

    /// Calls a tool that must be refused and returns the reason given to the model.
    pub fn call_refused(&mut self, name: &str, arguments: Value) -> String {
        let result = self.call_tool(name, arguments.clone());
        assert_eq!(result["isError"], true, "{name} {arguments} must be refused: {result}");
        result["content"][0]["text"].as_str().expect("a reason").to_owned()
    }

    /// Closes standard input, then returns the next message the server wrote before it ended
    /// (if any) and its exit status.
    pub fn finish_reading(mut self) -> (Option<Value>, Option<i32>) {
        drop(self.stdin.take());
        let message = self.lines.recv_timeout(RESPONSE_TIMEOUT).ok();
        let status = self.child.wait().ok().and_then(|status| status.code());
        (message.and_then(|line| serde_json::from_str(&line).ok()), status)
    }

    /// Closes standard input and waits for the server to end; returns its exit status.
    pub fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.child.wait().ok().and_then(|status| status.code())
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
