//! [`LeftBehind`]: a name in the store folder that cleaning up did not remove.

use alloc::string::String;

/// A file or folder that deleting an agent (or finishing an interrupted delete at open) left in
/// place: a name cheesedb did not make, a link, or anything else that is not what the engine
/// puts there. The agent is gone either way (the catalog no longer names it); the folder stays
/// only while it holds these, and each open tries again. Nothing here keeps the store or
/// another agent from working.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftBehind {
    /// The path, relative to the store folder.
    pub path: String,
    /// Why it was left.
    pub reason: String,
}
