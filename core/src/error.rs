//! The one error type of the engine. Every variant names a condition and carries its facts.

use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;

use crate::conceal::conceal_token_digits;
use crate::corrupt_reason::CorruptReason;
use crate::error_facts::{
    FenceReason, InternalRule, Limit, MessageProblem, NameProblem, StorageBackend, StorageOperation,
};
use crate::id::Id;
use crate::storage_error::{StorageError, StorageErrorKind};

/// Why an operation of cheesedb failed.
///
/// With the `serde` feature, an error encodes as itself, facts and all (the backend's error of
/// `Io` and `OutcomeUnknown` as its words): that is how the memory server sends it to a client.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
        reason: CorruptReason,
    },
    /// The storage backend failed.
    Io {
        /// What the engine was doing.
        operation: StorageOperation,
        /// The file or folder, relative to the store folder.
        path: String,
        /// What kind of failure it was (no space, permission denied, ...).
        kind: StorageErrorKind,
        /// The backend's own error, reached through `source()`.
        source: ErrorSource,
    },
    /// A write, sync or erasure failed after some of its bytes may have reached the disk: the
    /// operation may or may not have been stored. Unlike `Io` (refused, nothing written), a
    /// caller must not simply retry: check with a read (for example `get` of the next id, or
    /// `report` after reopening) first, or the same write may be stored twice. The agent is
    /// poisoned; reopening shows what the disk kept.
    OutcomeUnknown {
        /// What the engine was doing.
        operation: StorageOperation,
        /// The file or folder, relative to the store folder.
        path: String,
        /// What kind of failure it was (no space, permission denied, ...).
        kind: StorageErrorKind,
        /// The backend's own error, reached through `source()`.
        source: ErrorSource,
    },
    /// A write or sync failed earlier on this agent; it accepts no more writes until reopened.
    Poisoned,
    /// The chosen storage backend cannot be used on this machine (for example the kernel
    /// refuses io_uring); another backend may work.
    BackendUnavailable {
        /// The backend's name, as the command line spells it (`uring`).
        backend: StorageBackend,
        /// Why it cannot be used.
        reason: String,
    },
    /// A rule the engine keeps for itself was found broken: a bug of cheesedb, not of the
    /// caller or the disk. The operation stopped before it could do harm.
    Internal {
        /// Which rule.
        what: InternalRule,
    },
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
        what: Limit,
        /// Its size.
        size: u64,
        /// The largest size allowed.
        limit: u64,
    },
    /// A label or agent name is empty or otherwise unusable.
    InvalidName {
        /// What was wrong with it.
        reason: NameProblem,
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
    /// A space with this name exists already.
    SpaceExists {
        /// The name.
        name: String,
    },
    /// No space of this name has the acting agent as a member: the same answer whether the
    /// space does not exist, never had the agent, or revoked it.
    UnknownSpace {
        /// The name asked for.
        name: String,
    },
    /// The acting member's role in a space does not allow the call.
    RoleTooLow {
        /// The role it holds.
        held: crate::role::Role,
        /// The role the call needs.
        needed: crate::role::Role,
    },
    /// The change would leave a space without an admin, and so without anyone who may recall
    /// what is in it: the last admin cannot step down or be revoked.
    LastAdmin,
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
        operation: StorageOperation,
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
    /// A vector given to attach to a node or to search with cannot be used.
    InvalidVector {
        /// What is wrong with it.
        problem: VectorProblem,
    },
    /// Another write reached the agent between the steps of a staged batch, so the ids the
    /// batch handed out are no longer the next ones: nothing of the batch was written.
    BatchConflict,
    /// No memory server answers at the socket: none runs for the folder, or the path is not a
    /// socket a server listens on. Nothing was sent.
    ServerUnavailable {
        /// The socket's path.
        path: String,
        /// What connecting met, in words (such as "connection refused").
        reason: String,
    },
    /// The connection to the memory server broke before the answer came: the server stopped
    /// or timed this client out. When the request was a write, it may or may not have been
    /// stored, as with [`Error::OutcomeUnknown`]: check with a read before retrying.
    ConnectionLost {
        /// What broke, in words.
        reason: String,
        /// Whether a write was in flight, so that its outcome is unknown.
        write_in_flight: bool,
    },
    /// The memory server speaks another version of the protocol than this client.
    VersionMismatch {
        /// The client's version.
        client: u32,
        /// The server's version.
        server: u32,
    },
    /// A frame of the protocol is larger than its limit: refused before it was read or sent.
    FrameTooLarge {
        /// The frame's size.
        size_bytes: u64,
        /// The largest size allowed.
        limit_bytes: u64,
    },
    /// The peer of a connection sent bytes that are not a message of the protocol.
    MalformedMessage {
        /// What was wrong with them.
        reason: MessageProblem,
    },
    /// The memory server already serves as many connections as it allows; try again later.
    ServerBusy {
        /// The number of connections it allows.
        connections_max: u64,
    },
    /// The other end of a connection runs as a user that may not use it: a server only serves
    /// its own user and root, and a client only trusts a server of its own user or root.
    PeerRefused {
        /// The user id of the refused peer.
        uid: u32,
    },
    /// The agent is open (a handle of it is alive), and what was asked needs it closed: encrypting
    /// it rewrites all its files.
    AgentInUse {
        /// The agent's name.
        name: String,
    },
    /// The agent is encrypted already: there is nothing to convert.
    AlreadyEncrypted {
        /// The agent's name.
        name: String,
    },
    /// Another store replicates the agent to the same place in the object store (its head moved
    /// under this one, or holds a history this store's log does not contain): this store stopped
    /// shipping the agent and changed nothing there.
    ReplicaFenced {
        /// The agent's name.
        name: String,
        /// What was found.
        reason: FenceReason,
    },
    /// The object store could not be reached, or refused a request (credentials, bucket, a
    /// failed upload). Nothing is reported shipped that was not.
    ObjectStore {
        /// The object store's own words.
        detail: String,
    },
    /// The store, agent or connection was opened in another process, and this one is a child
    /// forked from it. The child holds copies of the parent's handles, open files and sockets,
    /// but not its other threads: a write from both would be given the same ids and overwrite
    /// each other, and answers on a shared connection would cross. Every call in the child is
    /// refused and nothing is written or sent; open the store (or connect) in the child.
    ForkedProcess {
        /// The id of the process that opened it.
        opening_process_id: u32,
        /// The id of this process.
        current_process_id: u32,
    },
    /// The place named in the object store holds no replica: no head and no piece of any agent
    /// (an empty or mistyped prefix, or a bucket that lost everything). Nothing was restored.
    ReplicaNotFound {
        /// The prefix that was looked in, as keys start with it (empty for the bucket's root).
        prefix: String,
    },
    /// A server that answers a write only once it is shipped (`--wait-for-ship`) stored the write
    /// in its store, but could not ship it to the object store: the write is kept and must not be
    /// made again; replication ships it once the object store answers (or, for a fenced agent,
    /// once the prefix is sorted out).
    StoredNotShipped {
        /// The id the write was given, for a write that makes a lot or memory.
        id: Option<Id>,
        /// Why it was not shipped, in the replication's words.
        reason: String,
    },
    /// The path of a server's socket is not one a client may trust: connecting there could reach
    /// the server of another folder or another user. Nothing was sent.
    SocketRefused {
        /// The socket's path.
        path: String,
        /// What is wrong with it.
        problem: SocketProblem,
    },
    /// A staged batch of this agent is open on this thread, through this handle or another
    /// handle of the agent: a write outside the batch would wait for it to end, which only this
    /// thread can bring about. Nothing was written; write through the batch, or commit or drop
    /// it first.
    BatchOpen,
    /// The operation needs the store open in this process: a store reached through a memory
    /// server does not offer it. Nothing was sent.
    NeedsLocalStore {
        /// What was asked.
        operation: LocalOperation,
    },
}

/// What only a store open in this process can do: the operations a memory server does not
/// offer through its protocol.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum LocalOperation {
    /// Judging trust under rules given with the call rather than the store's.
    TrustUnderGivenRules,
    /// A staged batch that the caller holds, rather than the handle.
    BatchHeldByCaller,
    /// Reads given to a memory written in a batch, beside those the handle tracks.
    ReadsGivenInBatch,
    /// Figures of the RAM an agent's engine holds.
    HeapFigures,
    /// Checking an agent's files without its token.
    VerifyWithoutToken,
    /// Replicating the store to an object store.
    Replication,
    /// Spaces shared between agents (served spaces are not offered yet).
    Spaces,
}

impl fmt::Display for LocalOperation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            LocalOperation::TrustUnderGivenRules => "judging trust under rules given with the call",
            LocalOperation::BatchHeldByCaller => "a staged batch held by the caller",
            LocalOperation::ReadsGivenInBatch => "reads given to a memory of a batch",
            LocalOperation::HeapFigures => "the RAM figures of an agent",
            LocalOperation::VerifyWithoutToken => "checking an agent without its token",
            LocalOperation::Replication => "replication to an object store",
            LocalOperation::Spaces => "spaces shared between agents",
        })
    }
}

/// Why a client refused a server's socket.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SocketProblem {
    /// A symbolic link stands at the socket's name: it may lead to another folder's server.
    SymbolicLink,
    /// The socket belongs to another user than the client's.
    OwnedByAnotherUser {
        /// The user id that owns it.
        owner: u32,
        /// The user id of the client.
        user: u32,
    },
}

impl fmt::Display for SocketProblem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SocketProblem::SymbolicLink => write!(
                formatter,
                "it is a symbolic link, and a client never follows one to a server (it may lead to another folder's store)"
            ),
            SocketProblem::OwnedByAnotherUser { owner, user } => {
                write!(formatter, "it is owned by user {owner}, not by this user ({user})")
            }
        }
    }
}

/// Why a vector was refused.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum VectorProblem {
    /// It has no numbers.
    Empty,
    /// The number at `position` (from 0) is infinite or not a number.
    NotFinite {
        /// Where the number is.
        position: usize,
    },
    /// Every number is zero: it has no direction, so no cosine.
    AllZero,
    /// Its dimension differs from that of the vectors the agent holds.
    DimensionMismatch {
        /// The dimension of the agent's vectors.
        expected: usize,
        /// The dimension given.
        found: usize,
    },
}

impl fmt::Display for VectorProblem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VectorProblem::Empty => write!(formatter, "it has no numbers"),
            VectorProblem::NotFinite { position } => {
                write!(formatter, "the number at position {position} is infinite or not a number")
            }
            VectorProblem::AllZero => write!(formatter, "every number is zero, so it has no direction"),
            VectorProblem::DimensionMismatch { expected, found } => {
                write!(formatter, "it has {found} dimensions, but this agent's vectors have {expected}")
            }
        }
    }
}

impl Error {
    /// Whether the error reflects damaged or tampered files rather than a bad argument.
    #[must_use]
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corrupt { .. } | Error::HistoryMismatch { .. })
    }

    /// Whether the failed operation may nevertheless have been stored (see
    /// [`Error::OutcomeUnknown`]): a caller that retries without checking may store it twice.
    #[must_use]
    pub fn is_outcome_unknown(&self) -> bool {
        matches!(self, Error::OutcomeUnknown { .. } | Error::ConnectionLost { write_in_flight: true, .. })
    }

    /// The error of a backend failure while the engine was doing `operation` on `path`: its
    /// kind comes from the backend, and the backend's error is kept as the source.
    #[must_use]
    pub fn from_storage(operation: StorageOperation, path: &str, error: impl StorageError) -> Error {
        Error::Io { operation, path: String::from(path), kind: error.kind(), source: ErrorSource::new(error) }
    }

    /// The kind of storage failure behind this error, if it is one.
    #[must_use]
    pub fn storage_kind(&self) -> Option<StorageErrorKind> {
        match self {
            Error::Io { kind, .. } | Error::OutcomeUnknown { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The kind of storage failure behind this error in std's terms: `StorageFull` when the
    /// disk or the quota is full, `PermissionDenied`, `NotFound`, `ReadOnlyFilesystem`, ...
    #[cfg(feature = "std")]
    #[must_use]
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.storage_kind().map(StorageErrorKind::to_io_kind)
    }
}

/// The backend's error kept inside an [`Error`]: shared, so that `Error` stays `Clone`.
///
/// Two sources always compare equal: errors are compared by their facts (operation, path,
/// kind), and a backend error has no equality of its own.
#[derive(Clone)]
pub struct ErrorSource(Option<Arc<dyn core::error::Error + Send + Sync>>);

impl ErrorSource {
    /// Keeps `error` as the source.
    #[must_use]
    pub fn new(error: impl StorageError) -> ErrorSource {
        ErrorSource(Some(Arc::new(error)))
    }

    /// No backend error: the engine itself found the failure.
    #[must_use]
    pub fn none() -> ErrorSource {
        ErrorSource(None)
    }

    /// The backend's error, if one is kept.
    #[must_use]
    pub fn get(&self) -> Option<&(dyn core::error::Error + Send + Sync + 'static)> {
        self.0.as_deref()
    }
}

impl PartialEq for ErrorSource {
    fn eq(&self, _other: &ErrorSource) -> bool {
        true
    }
}

impl Eq for ErrorSource {}

impl fmt::Debug for ErrorSource {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(error) => fmt::Debug::fmt(error, formatter),
            None => formatter.write_str("None"),
        }
    }
}

impl fmt::Display for ErrorSource {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(error) => fmt::Display::fmt(error, formatter),
            None => formatter.write_str("no further detail"),
        }
    }
}

/// The words of a backend's error that crossed a connection: the source of an error decoded
/// from the protocol, since the backend's error itself cannot travel.
#[cfg(feature = "serde")]
#[derive(Debug)]
struct SourceWords(String);

#[cfg(feature = "serde")]
impl fmt::Display for SourceWords {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

#[cfg(feature = "serde")]
impl core::error::Error for SourceWords {}

/// A source encodes as its words, or as nothing when the engine itself found the failure: the
/// error decoded from it prints the same message.
#[cfg(feature = "serde")]
impl serde::Serialize for ErrorSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(error) => serializer.serialize_some(&alloc::string::ToString::to_string(error)),
            None => serializer.serialize_none(),
        }
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ErrorSource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ErrorSource, D::Error> {
        let words: Option<String> = serde::Deserialize::deserialize(deserializer)?;
        Ok(ErrorSource(
            words.map(|words| -> Arc<dyn core::error::Error + Send + Sync> { Arc::new(SourceWords(words)) }),
        ))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Locked => write!(formatter, "the store folder is in use by another open store"),
            Error::Corrupt { file, offset, reason } => {
                write!(formatter, "corrupt data in {file} at offset {offset}: {reason}")
            }
            Error::Io { operation, path, kind, source } => {
                write!(formatter, "storage error{} while {operation} {path}: {source}", KindNote(*kind))
            }
            Error::OutcomeUnknown { operation, path, kind, source } => write!(
                formatter,
                "storage error{} while {operation} {path}: {source}; the write may have been stored: check before retrying",
                KindNote(*kind)
            ),
            Error::Poisoned => {
                write!(formatter, "an earlier write or sync failed; this agent accepts no writes until reopened")
            }
            Error::BackendUnavailable { backend, reason } => {
                write!(formatter, "the {backend} storage backend cannot be used here: {reason}")
            }
            Error::Internal { what } => {
                write!(formatter, "internal error of cheesedb ({what}); nothing more was done, please report it")
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
            Error::SpaceExists { name } => write!(formatter, "a space named {:?} exists", conceal_token_digits(name)),
            Error::UnknownSpace { name } => {
                write!(formatter, "no space named {:?} has this agent as a member", conceal_token_digits(name))
            }
            Error::RoleTooLow { held, needed } => {
                write!(formatter, "the agent's role in the space is {held}; this needs {needed}")
            }
            Error::LastAdmin => write!(formatter, "the space's last admin cannot step down or be revoked"),
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
            Error::InvalidVector { problem } => write!(formatter, "invalid vector: {problem}"),
            Error::BatchConflict => write!(
                formatter,
                "another write reached the agent while a staged batch was open; nothing of the batch was written"
            ),
            Error::ServerUnavailable { path, reason } => {
                write!(formatter, "no cheesedb server answers at {path}: {reason}")
            }
            Error::ConnectionLost { reason, write_in_flight: true } => write!(
                formatter,
                "the connection to the cheesedb server broke ({reason}); the write may have been stored: check before retrying"
            ),
            Error::ConnectionLost { reason, write_in_flight: false } => {
                write!(formatter, "the connection to the cheesedb server broke ({reason})")
            }
            Error::VersionMismatch { client, server } => write!(
                formatter,
                "the cheesedb server speaks protocol version {server}, this client version {client}: use matching versions"
            ),
            Error::FrameTooLarge { size_bytes, limit_bytes } => {
                write!(formatter, "a message of {size_bytes} bytes is larger than the protocol's limit of {limit_bytes}")
            }
            Error::MalformedMessage { reason } => write!(formatter, "not a message of the cheesedb protocol: {reason}"),
            Error::ServerBusy { connections_max } => write!(
                formatter,
                "the cheesedb server already serves its {connections_max} connections; try again later"
            ),
            Error::PeerRefused { uid } => write!(
                formatter,
                "refused a connection with user {uid}: a server serves only its own user and root"
            ),
            Error::AgentInUse { name } => write!(
                formatter,
                "the agent {:?} is open; close every handle of it (and stop what serves it) first",
                conceal_token_digits(name)
            ),
            Error::AlreadyEncrypted { name } => {
                write!(formatter, "the agent {:?} is encrypted already", conceal_token_digits(name))
            }
            Error::ReplicaFenced { name, reason } => write!(
                formatter,
                "stopped replicating the agent {:?}: {reason}; another store replicates it to this prefix \
                 (give each store its own prefix)",
                conceal_token_digits(name)
            ),
            Error::ObjectStore { detail } => write!(formatter, "the object store failed: {detail}"),
            Error::ForkedProcess { opening_process_id, current_process_id } => write!(
                formatter,
                "this handle was opened by process {opening_process_id}, and this process \
                 ({current_process_id}) is a fork of it: nothing was done, since two processes must never \
                 write one store or share one connection; open the store (or connect) in this process instead"
            ),
            Error::ReplicaNotFound { prefix } if prefix.is_empty() => {
                write!(formatter, "the object store holds no replica at the bucket's root: nothing to restore")
            }
            Error::ReplicaNotFound { prefix } => write!(
                formatter,
                "the object store holds no replica under {:?}: nothing to restore (is the prefix mistyped?)",
                prefix
            ),
            Error::StoredNotShipped { id: Some(id), reason } => write!(
                formatter,
                "the write is stored here as id {id} but not yet in the object store ({reason}); do not write it again: replication ships it when it can"
            ),
            Error::StoredNotShipped { id: None, reason } => write!(
                formatter,
                "the write is stored here but not yet in the object store ({reason}); do not write it again: replication ships it when it can"
            ),
            Error::SocketRefused { path, problem } => {
                write!(formatter, "refusing the server's socket {path}: {problem}; nothing was sent")
            }
            Error::BatchOpen => write!(
                formatter,
                "a batch of this agent is open on this thread: write through the batch, or end it first"
            ),
            Error::NeedsLocalStore { operation } => write!(
                formatter,
                "{operation} needs the store open in this process; a memory server does not offer it"
            ),
        }
    }
}

/// The kind of a storage failure in brackets, for messages; nothing for "other", which says
/// no more than "storage error" does.
struct KindNote(StorageErrorKind);

impl fmt::Display for KindNote {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            StorageErrorKind::Other => Ok(()),
            kind => write!(formatter, " ({kind})"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::OutcomeUnknown { source, .. } => {
                source.get().map(|error| error as &(dyn core::error::Error + 'static))
            }
            _ => None,
        }
    }
}
