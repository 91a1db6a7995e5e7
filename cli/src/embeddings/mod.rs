//! Embeddings from an OpenAI-compatible server, for the hybrid search of the command and the
//! MCP server. The engine never computes a vector: it stores and compares the ones given.
//!
//! - [`config`]: reading `embed.conf`.
//! - [`client`]: asking the server for the vectors of some texts.
//! - [`attach`]: giving a lot or memory just written its vector, without ever losing the write.

pub mod attach;
pub mod client;
pub mod config;
