//! A client speaking MCP to a `cheesedb mcp AGENT` process, as an app would; each tool call
//! goes through the server while it runs and opens the store itself while it is down. Read
//! tracking is on, as it is for every MCP session by default.

use serde_json::{json, Value};

use super::command_client::ids;
use super::operations::{Operations, Outcome, Read, Remembered};
use crate::common::mcp_process::McpProcess;
use crate::common::Cli;

/// One `cheesedb mcp` process.
pub struct McpClient {
    name: String,
    process: McpProcess,
}

impl McpClient {
    /// Starts `cheesedb mcp AGENT` in `cli`'s data folder and opens the session.
    pub fn start(name: String, cli: &Cli, agent: &str) -> McpClient {
        let mut process = McpProcess::start(cli, agent);
        process.initialize();
        McpClient { name, process }
    }

    /// Calls a tool: its structured content, or the reason it was refused. A refusal may come
    /// from a server killed in the middle, so a write refused has an unknown outcome.
    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        let result = self.process.call_tool(tool, arguments);
        if result["isError"] == false {
            Ok(result["structuredContent"].clone())
        } else {
            Err(result["content"][0]["text"].as_str().unwrap_or_default().to_owned())
        }
    }

    /// Ends the session; the process must exit cleanly.
    pub fn finish(self) {
        assert_eq!(self.process.finish(), Some(0), "{}: the MCP server exits cleanly", self.name);
    }
}

impl Operations for McpClient {
    fn add_lot(&mut self, label: &str, text: &str) -> Outcome<u64> {
        match self.call("add_source", json!({ "label": label, "text": text })) {
            Ok(value) => Outcome::Done(value["id"].as_u64().expect("an id")),
            Err(_) => Outcome::Unknown,
        }
    }

    fn remember(&mut self, text: &str, legs: &[Vec<u64>]) -> Outcome<Remembered> {
        match self.call("remember", json!({ "text": text, "legs": legs })) {
            Ok(value) => {
                let tracked = value.get("tracked_parents").map(ids).unwrap_or_default();
                Outcome::Done(Remembered { id: value["id"].as_u64().expect("an id"), tracked })
            }
            Err(_) => Outcome::Unknown,
        }
    }

    fn recall(&mut self, id: u64) -> Outcome<Vec<u64>> {
        match self.call("forget_source", json!({ "id": id })) {
            Ok(value) => Outcome::Done(ids(&value["removed"])),
            Err(_) => Outcome::Unknown,
        }
    }

    fn get(&mut self, id: u64) -> Outcome<Read> {
        match self.call("get", json!({ "id": id })) {
            Ok(value) => Outcome::Done(Read {
                alive: value["alive"].as_bool().unwrap_or_else(|| panic!("alive: {value}")),
                content: value["content"].as_str().map(str::to_owned),
            }),
            Err(reason) => {
                assert!(!reason.contains("has id"), "{}: acknowledged id {id} unknown: {reason}", self.name);
                Outcome::Unknown
            }
        }
    }
}
