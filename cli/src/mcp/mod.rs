//! The MCP server: one agent's memory served to AI apps over stdio, through the official MCP
//! SDK (`rmcp`).
//!
//! - [`protocol`]: reading bounded lines, telling requests from notifications, error replies.
//! - [`transport`]: the stdio transport the SDK serves through.
//! - [`definitions`]: the six tools as `tools/list` shows them.
//! - [`tools`]: what each tool does to the agent; [`explain`]: engine errors in words for the
//!   model.
//! - [`reading`]: read tracking, what a session read joining its next memory.
//! - [`server`]: what the server tells the SDK about itself, and tool calls off the async runtime.

pub mod arguments;
pub mod definitions;
pub mod explain;
pub mod protocol;
pub mod reading;
pub mod server;
pub mod tools;
pub mod transport;
