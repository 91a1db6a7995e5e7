//! The facts an [`Error`](crate::Error) carries besides numbers, paths and names: each a small
//! enum with its words, so that a caller (the command line, the MCP server, the Python package,
//! a client across the socket) tells errors apart by value, never by reading a message.

mod fence_reason;
mod internal_rule;
mod limit;
mod message_problem;
mod name_problem;
mod storage_backend;
mod storage_operation;

pub use fence_reason::FenceReason;
pub use internal_rule::InternalRule;
pub use limit::Limit;
pub use message_problem::MessageProblem;
pub use name_problem::NameProblem;
pub use storage_backend::StorageBackend;
pub use storage_operation::StorageOperation;
