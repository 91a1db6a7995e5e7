//! The server loop: read a line, answer it, repeat until the client closes standard input.
//!
//! Standard output carries protocol messages only; anything for people goes to standard error.

use std::cell::Cell;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use cheesedb::{Error, Token};
use serde_json::{json, Value};

use crate::agent_handle::AgentHandle;
use crate::embeddings::client::Embedder;
use crate::failure::Failure;
use crate::mcp::protocol::{
    classify, error_response, negotiate_version, read_line, result_response, ErrorCode, Incoming, Line, RequestId,
    RpcError, LINE_MAX_BYTES,
};
use crate::mcp::tools::{self, Served, ToolOutcome};
use crate::session::{describe_agent, note_repairs, open_store};

/// What the server tells the model about itself when the session starts.
const INSTRUCTIONS: &str = "Long-term memory with provenance. Before you answer anything that earlier conversations or stored sources could bear on, call search_memories to find what you know. Store every source you learn from with add_source, then store what you learn with remember, naming the ids it came from as legs. If a source later proves wrong, malicious or private, forget_source DELETES it and everything learned from it. Read with search_memories, get and list_memories.";

/// One agent's memory, served.
#[derive(Debug)]
pub struct Server {
    folder: PathBuf,
    token: Token,
    agent_name: String,
    /// The embeddings server of `embed.conf`, if there is one.
    embedder: Option<Embedder>,
    /// Whether an `initialize` was answered: until then only `initialize` and `ping` are served.
    initialized: Cell<bool>,
}

impl Server {
    /// A server for the agent that `token` opens in the store at `folder`, embedding new
    /// sources, memories and queries with `embedder` when there is one.
    pub fn new(folder: &Path, token: Token, agent_name: &str, embedder: Option<Embedder>) -> Server {
        Server {
            folder: folder.to_path_buf(),
            token,
            agent_name: agent_name.to_owned(),
            embedder,
            initialized: Cell::new(false),
        }
    }

    /// Answers messages from `input` on `output` until `input` ends.
    pub fn serve(&self, mut input: impl BufRead, mut output: impl Write) -> Result<(), Failure> {
        let write_failed = |error: std::io::Error| Failure::new(format!("cannot write to the client: {error}"));
        while let Some(line) = read_line(&mut input, LINE_MAX_BYTES)
            .map_err(|error| Failure::new(format!("cannot read from the client: {error}")))?
        {
            let Some(response) = self.answer(line) else { continue };
            let mut bytes = response.into_bytes();
            bytes.push(b'\n');
            output.write_all(&bytes).and_then(|()| output.flush()).map_err(write_failed)?;
        }
        Ok(())
    }

    /// The response to one line, as one line of JSON, or `None` when none is due
    /// (notifications, blank lines).
    pub fn answer(&self, line: Line) -> Option<String> {
        let line = match line {
            Line::Complete(line) => line,
            Line::TooLong => {
                let message = format!("the message is larger than {LINE_MAX_BYTES} bytes and was skipped");
                return Some(error_response(&RequestId::null(), &RpcError::new(ErrorCode::InvalidRequest, message)));
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        match classify(&line) {
            Incoming::Request { id, method, params } => Some(match self.request(&method, params.as_ref()) {
                Ok(result) => result_response(&id, &result),
                Err(error) => error_response(&id, &error),
            }),
            Incoming::Notification { .. } | Incoming::Response => None,
            Incoming::Invalid { id, error } => Some(error_response(&id, &error)),
        }
    }

    fn request(&self, method: &str, params: Option<&Value>) -> Result<Value, RpcError> {
        // The lifecycle of the specification: initialize comes first, only ping may precede it.
        // A method this server does not have is still answered -32601 at once (below), since
        // a newer client probes with one before it initializes.
        let before_initialize = !self.initialized.get() && matches!(method, "tools/list" | "tools/call");
        if before_initialize {
            let message = format!("{method:?} before initialize: send initialize first (only ping may come before it)");
            return Err(RpcError::new(ErrorCode::InvalidRequest, message));
        }
        match method {
            "initialize" => {
                let answer = initialize(params)?;
                self.initialized.set(true);
                Ok(answer)
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tools::definitions() })),
            "tools/call" => self.call_tool(params),
            // server/discover (the newer handshake's probe) lands here too: answering at once
            // lets a client fall back to initialize without waiting for a timeout.
            _ => Err(RpcError::new(ErrorCode::MethodNotFound, format!("method {method:?} is not supported"))),
        }
    }

    fn call_tool(&self, params: Option<&Value>) -> Result<Value, RpcError> {
        let Some(Value::String(name)) = params.and_then(|params| params.get("name")) else {
            return Err(RpcError::new(ErrorCode::InvalidParams, "tools/call needs params.name, the tool's name"));
        };
        let arguments = params.and_then(|params| params.get("arguments"));
        let open = || self.open_agent();
        let served = Served { open: &open, embedder: self.embedder.as_ref() };
        Ok(match tools::call(name, arguments, &served)? {
            ToolOutcome::Done(structured) => json!({
                "content": [{ "type": "text", "text": structured.to_string() }],
                "structuredContent": structured,
                "isError": false,
            }),
            ToolOutcome::Refused(reason) => json!({
                "content": [{ "type": "text", "text": cheesedb::conceal_token_digits(&reason) }],
                "isError": true,
            }),
        })
    }

    /// Opens the store and the agent for one tool call. The caller drops both when done, so
    /// the folder lock is never held between calls.
    fn open_agent(&self) -> Result<AgentHandle, String> {
        let store = open_store(&self.folder).map_err(|failure| failure.to_string())?;
        match store.open_agent(&self.token) {
            Ok(agent) => {
                note_repairs(&self.agent_name, &agent.report());
                Ok(AgentHandle::in_process(agent, store, cheesedb::TrustRules::new()))
            }
            Err(Error::UnknownToken) => {
                Err(format!("{} was deleted; this server can no longer reach it", describe_agent(&self.agent_name)))
            }
            Err(error) => Err(tools::explain(error)),
        }
    }
}

fn initialize(params: Option<&Value>) -> Result<Value, RpcError> {
    let Some(Value::String(requested)) = params.and_then(|params| params.get("protocolVersion")) else {
        return Err(RpcError::new(ErrorCode::InvalidParams, "initialize needs params.protocolVersion"));
    };
    Ok(json!({
        "protocolVersion": negotiate_version(requested),
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": "cheesedb", "title": "cheesedb memory", "version": env!("CARGO_PKG_VERSION") },
        "instructions": INSTRUCTIONS,
    }))
}
