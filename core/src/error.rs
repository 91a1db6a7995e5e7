//! The one error type of the engine. Every variant names a condition and carries its facts.

use alloc::string::String;
use core::fmt;

use crate::conceal::conceal_token_digits;
use crate::id::Id;

/// Why an operation of cheesedb failed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Another open store holds this folder (another process, or another `Store` in this one).
    Locked,
    /// Stored bytes failed a check: a checksum, a digest, the hash chain or the layout.
    /// Committed data is never cut silently; this error stops the open instead.
    Corrupt {
        /// The file, relative to the store folder.
        file: String,
        /// Where in the file the damage starts.
        offset: u64,
        /// Which check failed.
        reason: &'static str,
    },
    /// The storage backend failed.
    Io {
        /// What the engine was doing.
        operation: &'static str,
        /// The file or folder, relative to the store folder.
        path: String,
        /// The backend's own message.
        message: String,
    },
    /// A write, sync or erasure failed after some of its bytes may have reached the disk: the
    /// operation may or may not have been stored. Unlike `Io` (refused, nothing written), a
    /// caller must not simply retry: check with a read (for example `get` of the next id, or
    /// `report` after reopening) first, or the same write may be stored twice. The agent is
    /// poisoned; reopening shows what the disk kept.
    OutcomeUnknown {
        /// What the engine was doing.
        operation: &'static str,
        /// The file or folder, relative to the store folder.
        path: String,
        /// The backend's own message.
        message: String,
    },
    /// A write or sync failed earlier on this agent; it accepts no more writes until reopened.
    Poisoned,
    /// The id names no lot or memory of this agent.
    UnknownId {
        /// The id asked for.
        id: Id,
    },
    /// A parent of a new memory was recalled; recalled nodes can never be parents.
    DeadParent {
        /// The recalled parent.
        id: Id,
    },
    /// The id was already recalled (a recall is permanent; only `Removal::Erase` may repeat it).
    AlreadyRecalled {
        /// The recalled id.
        id: Id,
    },
    /// A memory was given no leg: every memory must say what it was learned from.
    NoLegs,
    /// One of a memory's legs names no parent.
    EmptyLeg {
        /// The position of the empty leg, from 0.
        leg_index: usize,
    },
    /// An argument is larger than the engine allows.
    LimitExceeded {
        /// What was too large.
        what: &'static str,
        /// Its size.
        size: u64,
        /// The largest size allowed.
        limit: u64,
    },
    /// A label or agent name is empty or otherwise unusable.
    InvalidName {
        /// What was wrong with it.
        reason: &'static str,
    },
    /// An agent with this name exists already.
    AgentExists {
        /// The name.
        name: String,
    },
    /// No agent has this name.
    UnknownAgent {
        /// The name.
        name: String,
    },
    /// The token opens no agent of this store.
    UnknownToken,
    /// The text is not a token of cheesedb.
    MalformedToken,
    /// The agent was deleted while this handle was open.
    AgentDeleted,
    /// The store was opened read-only: every write is refused before anything is attempted.
    ReadOnly,
    /// Opening read-only would need a repair that writes (a torn end to cut, an erasure to
    /// finish, leftovers to remove): nothing was changed; open the store read-write once.
    RepairNeeded {
        /// What the repair would do.
        operation: &'static str,
        /// The file or folder, relative to the store folder.
        path: String,
    },
    /// The store folder is not private to this user (writable by others, or owned by another
    /// user), and the caller did not allow that.
    FolderNotPrivate {
        /// The store folder.
        path: String,
        /// Its permission bits (such as `0o770`).
        mode: u32,
        /// The user id that owns it.
        owner: u32,
        /// The user id of this process.
        user: u32,
    },
    /// A kept fingerprint does not match this agent's history: records were rewritten or removed.
    HistoryMismatch {
        /// The record count of the kept fingerprint.
        records: u64,
    },
}

impl Error {
    /// Whether the error reflects damaged or tampered files rather than a bad argument.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corrupt { .. } | Error::HistoryMismatch { .. })
    }

    /// Whether the failed operation may nevertheless have been stored (see
    /// [`Error::OutcomeUnknown`]): a caller that retries without checking may store it twice.
    pub fn is_outcome_unknown(&self) -> bool {
        matches!(self, Error::OutcomeUnknown { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Locked => write!(formatter, "the store folder is in use by another open store"),
            Error::Corrupt { file, offset, reason } => {
                write!(formatter, "corrupt data in {file} at offset {offset}: {reason}")
            }
            Error::Io { operation, path, message } => {
                write!(formatter, "storage error while {operation} {path}: {message}")
            }
            Error::OutcomeUnknown { operation, path, message } => write!(
                formatter,
                "storage error while {operation} {path}: {message}; the write may have been stored: check before retrying"
            ),
            Error::Poisoned => {
                write!(formatter, "an earlier write or sync failed; this agent accepts no writes until reopened")
            }
            Error::UnknownId { id } => write!(formatter, "no lot or memory has id {id}"),
            Error::DeadParent { id } => {
                write!(formatter, "parent {id} was recalled and cannot be built on")
            }
            Error::AlreadyRecalled { id } => write!(formatter, "{id} was already recalled"),
            Error::NoLegs => write!(formatter, "a memory needs at least one leg (its sources)"),
            Error::EmptyLeg { leg_index } => {
                write!(formatter, "leg {leg_index} names no parent")
            }
            Error::LimitExceeded { what, size, limit } => {
                write!(formatter, "{what} is {size}, more than the limit of {limit}")
            }
            Error::InvalidName { reason } => write!(formatter, "invalid name: {reason}"),
            // A name may be a token passed in the wrong place: never repeat one.
            Error::AgentExists { name } => write!(formatter, "an agent named {:?} exists", conceal_token_digits(name)),
            Error::UnknownAgent { name } => write!(formatter, "no agent is named {:?}", conceal_token_digits(name)),
            Error::UnknownToken => write!(formatter, "the token opens no agent of this store"),
            Error::MalformedToken => write!(formatter, "the text is not a cheesedb token"),
            Error::AgentDeleted => write!(formatter, "the agent was deleted"),
            Error::ReadOnly => write!(formatter, "the store is open read-only; writes are refused"),
            Error::RepairNeeded { operation, path } => write!(
                formatter,
                "the store needs a repair ({operation} {path}) that a read-only open cannot make: open it read-write once"
            ),
            Error::FolderNotPrivate { path, mode, owner, user } if owner != user => write!(
                formatter,
                "refusing the store folder {path}: it is owned by user {owner}, not by this user ({user}); \
                 make this user its owner (chown {user} '{path}') or allow it explicitly"
            ),
            Error::FolderNotPrivate { path, mode, .. } => write!(
                formatter,
                "refusing the store folder {path}: its group or other users may write to it (mode {mode:03o}); \
                 run chmod go-w '{path}' (or chmod 700) or allow it explicitly"
            ),
            Error::HistoryMismatch { records } => {
                write!(formatter, "the history differs from the kept fingerprint at record {records}")
            }
        }
    }
}

impl core::error::Error for Error {}
