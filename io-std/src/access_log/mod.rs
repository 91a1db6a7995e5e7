//! The access log: per agent, an append-only record of who did what through the memory server.
//!
//! Each entry holds when a request was served, the client's process and user ids (from the
//! socket's peer credentials), the operation, the ids involved and the outcome (`ok` or the
//! kind of error). It never holds content or labels, so erasing a memory leaves nothing to
//! remove here.
//!
//! The entries of an agent form one hash chain, like the memory log: each names the hash of the
//! one before it and carries its own, and each file's header says which hash its chain starts
//! after, so an entry edited, removed or moved is found by [`read`], which names the file and
//! the entry. The chain runs on across files: the log is rotated at [`ROTATE_AT_BYTES`] and
//! keeps [`OLD_FILES_KEPT`] older files, so an agent's log never takes much more than
//! `(OLD_FILES_KEPT + 1) * ROTATE_AT_BYTES` on disk.
//!
//! A newest file that does not verify is never appended to: the writer goes on in a new file
//! whose header records the break, and [`read`] reports it (see [`writer`]).
//!
//! What the chain cannot show: the newest entries cut off at a line's end, or the newest files
//! removed, look like a log that simply ends there; and anyone able to rewrite the files can
//! recompute every hash. Keep a copy of a recent entry's hash elsewhere to pin the log down.
//!
//! Deleting an agent keeps its access log: it holds no content, and it is the record of who
//! used the agent, up to whoever deleted it. `cheesedb log NAME` still reads it; removing its
//! files removes it. An agent made later under the same name continues the same chain.
//!
//! Files live in `access/` in the data folder, named after the agent (see [`file_name`]), mode
//! 0600, opened without following a link. Appends are not synced one by one (see [`writer`]):
//! a machine crash can cost the last entries, never the chain.

mod chain;
mod damage;
mod entry;
pub mod file_name;
mod folder;
mod logs;
mod reader;
mod record;
mod scan;
pub mod writer;

pub use reader::{log_files, read, ReadError};
// The memory server writes through these, and the tests look at damage in detail.
#[allow(unused_imports)]
pub use {
    damage::{DamageKind, LogDamage},
    entry::AccessEntry,
    folder::ACCESS_FOLDER,
    logs::{AccessLogError, AccessLogs},
    reader::{LogBreak, TornEntry, VerifiedEntry, VerifiedLog},
    record::DamageNote,
};

/// An agent's newest log file is rotated before an entry would take it past this size.
pub const ROTATE_AT_BYTES: u64 = 1 << 20;
/// How many files an agent's log keeps besides the newest one.
pub const OLD_FILES_KEPT: u64 = 4;
/// The most ids one entry lists; past it, only their count is kept.
pub const IDS_PER_ENTRY_MAX: usize = 256;
/// The longest operation name or outcome an entry keeps.
pub const NAME_MAX_BYTES: usize = 64;
/// An upper bound on one entry's line, whatever the request was.
pub const ENTRY_MAX_BYTES: u64 = 8 * 1024;
/// An upper bound on a header's line, whatever the agent's name.
pub const HEADER_MAX_BYTES: u64 = 4 * 1024;

/// When files are rotated, and how many are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The newest file is rotated before an entry would take it past this size.
    pub rotate_at_bytes: u64,
    /// Files kept besides the newest.
    pub old_files_kept: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { rotate_at_bytes: ROTATE_AT_BYTES, old_files_kept: OLD_FILES_KEPT }
    }
}

impl Limits {
    /// The limits raised where needed so that a header and one entry always fit in a file.
    #[must_use]
    pub fn bounded(self) -> Limits {
        Limits { rotate_at_bytes: self.rotate_at_bytes.max(HEADER_MAX_BYTES + ENTRY_MAX_BYTES), ..self }
    }

    /// The most bytes a file written within these limits can hold.
    pub fn file_max_bytes(&self) -> u64 {
        self.bounded().rotate_at_bytes.saturating_add(ENTRY_MAX_BYTES)
    }

    /// The most bytes an agent's whole log can take on disk, with one file more than kept left
    /// by a crash during rotation.
    #[allow(dead_code, reason = "the bound the access log tests hold the files to")]
    pub fn total_max_bytes(&self) -> u64 {
        self.file_max_bytes().saturating_mul(self.old_files_kept.saturating_add(2))
    }
}
