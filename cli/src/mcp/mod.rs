//! The MCP server: one agent's memory served to AI apps over stdio, through the official MCP
//! SDK (`rmcp`).
//!
//! - [`protocol`]: reading bounded lines, telling requests from notifications, error replies.
//! - [`transport`]: the stdio transport the SDK serves through.
//! - [`tools`]: the six tools, their schemas and what each does to the agent.
//! - [`server`]: what the server tells the SDK about itself, and tool calls off the async runtime.

pub mod arguments;
pub mod protocol;
pub mod server;
pub mod tools;
pub mod transport;
