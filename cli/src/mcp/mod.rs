//! The MCP server: one agent's memory served to AI apps over stdio (JSON-RPC 2.0, one message
//! per line).
//!
//! - [`protocol`]: reading bounded lines, telling requests from notifications, error replies.
//! - [`tools`]: the six tools, their schemas and what each does to the agent.
//! - [`server`]: the loop that answers each message in turn.

pub mod arguments;
pub mod protocol;
pub mod server;
pub mod tools;
