//! [`WireError`]: every [`Error`] as the protocol carries it, and back.

use cheesedb_core::{
    Error, ErrorSource, Id, LocalOperation, SocketProblem, StorageError, StorageErrorKind, VectorProblem,
};
use serde::{Deserialize, Serialize};

use super::known_text;

/// An [`Error`] as the protocol carries it: one variant for each of `Error`'s, with the same
/// facts; texts the engine keeps as `&'static str` travel as strings and are found again on
/// the client ([`WireError::into_error`]).
#[allow(missing_docs)] // Each variant and field is the `Error` variant or field of the same name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireError {
    Locked,
    Corrupt {
        file: String,
        offset: u64,
        reason: String,
    },
    Io {
        operation: String,
        path: String,
        kind: WireStorageKind,
        source: String,
    },
    OutcomeUnknown {
        operation: String,
        path: String,
        kind: WireStorageKind,
        source: String,
    },
    Poisoned,
    BackendUnavailable {
        backend: String,
        reason: String,
    },
    Internal {
        what: String,
    },
    UnknownId {
        id: u64,
    },
    DeadParent {
        id: u64,
    },
    AlreadyRecalled {
        id: u64,
    },
    NoLegs,
    EmptyLeg {
        leg_index: u64,
    },
    LimitExceeded {
        what: String,
        size: u64,
        limit: u64,
    },
    InvalidName {
        reason: String,
    },
    AgentExists {
        name: String,
    },
    UnknownAgent {
        name: String,
    },
    UnknownToken,
    MalformedToken,
    AgentDeleted,
    ReadOnly,
    RepairNeeded {
        operation: String,
        path: String,
    },
    FolderNotPrivate {
        path: String,
        mode: u32,
        owner: u32,
        user: u32,
    },
    HistoryMismatch {
        records: u64,
    },
    InvalidVector {
        problem: WireVectorProblem,
    },
    BatchConflict,
    ServerUnavailable {
        path: String,
        reason: String,
    },
    ConnectionLost {
        reason: String,
        write_in_flight: bool,
    },
    VersionMismatch {
        client: u32,
        server: u32,
    },
    FrameTooLarge {
        size_bytes: u64,
        limit_bytes: u64,
    },
    MalformedMessage {
        reason: String,
    },
    ServerBusy {
        connections_max: u64,
    },
    PeerRefused {
        uid: u32,
    },
    AgentInUse {
        name: String,
    },
    AlreadyEncrypted {
        name: String,
    },
    /// An error of a later version of the engine that this one does not know: its message.
    Other {
        message: String,
    },
    // Variants after `Other` were added later: each keeps its place, so the ones before keep
    // their encoding.
    ReplicaFenced {
        name: String,
        reason: String,
    },
    ObjectStore {
        detail: String,
    },
    StoredNotShipped {
        id: Option<u64>,
        reason: String,
    },
    SocketRefused {
        path: String,
        problem: WireSocketProblem,
    },
    ForkedProcess {
        opening_process_id: u32,
        current_process_id: u32,
    },
    ReplicaNotFound {
        prefix: String,
    },
    BatchOpen,
    NeedsLocalStore {
        operation: WireLocalOperation,
    },
}

/// A [`LocalOperation`] as the protocol carries it.
#[allow(missing_docs)] // Each variant is the `LocalOperation` of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireLocalOperation {
    TrustUnderGivenRules,
    BatchHeldByCaller,
    ReadsGivenInBatch,
    HeapFigures,
    VerifyWithoutToken,
    Replication,
}

impl From<LocalOperation> for WireLocalOperation {
    fn from(operation: LocalOperation) -> WireLocalOperation {
        match operation {
            LocalOperation::TrustUnderGivenRules => WireLocalOperation::TrustUnderGivenRules,
            LocalOperation::BatchHeldByCaller => WireLocalOperation::BatchHeldByCaller,
            LocalOperation::ReadsGivenInBatch => WireLocalOperation::ReadsGivenInBatch,
            LocalOperation::HeapFigures => WireLocalOperation::HeapFigures,
            LocalOperation::VerifyWithoutToken => WireLocalOperation::VerifyWithoutToken,
            // An operation this version does not know cannot come from its own engine.
            _ => WireLocalOperation::Replication,
        }
    }
}

impl From<WireLocalOperation> for LocalOperation {
    fn from(operation: WireLocalOperation) -> LocalOperation {
        match operation {
            WireLocalOperation::TrustUnderGivenRules => LocalOperation::TrustUnderGivenRules,
            WireLocalOperation::BatchHeldByCaller => LocalOperation::BatchHeldByCaller,
            WireLocalOperation::ReadsGivenInBatch => LocalOperation::ReadsGivenInBatch,
            WireLocalOperation::HeapFigures => LocalOperation::HeapFigures,
            WireLocalOperation::VerifyWithoutToken => LocalOperation::VerifyWithoutToken,
            WireLocalOperation::Replication => LocalOperation::Replication,
        }
    }
}

/// A [`SocketProblem`] as the protocol carries it.
#[allow(missing_docs)] // Each variant and field is the `SocketProblem` of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireSocketProblem {
    SymbolicLink,
    OwnedByAnotherUser { owner: u32, user: u32 },
}

impl From<SocketProblem> for WireSocketProblem {
    fn from(problem: SocketProblem) -> WireSocketProblem {
        match problem {
            SocketProblem::OwnedByAnotherUser { owner, user } => WireSocketProblem::OwnedByAnotherUser { owner, user },
            // A problem this version does not know cannot come from its own engine; a link is
            // the refusal that says least.
            _ => WireSocketProblem::SymbolicLink,
        }
    }
}

impl From<WireSocketProblem> for SocketProblem {
    fn from(problem: WireSocketProblem) -> SocketProblem {
        match problem {
            WireSocketProblem::SymbolicLink => SocketProblem::SymbolicLink,
            WireSocketProblem::OwnedByAnotherUser { owner, user } => SocketProblem::OwnedByAnotherUser { owner, user },
        }
    }
}

/// A [`StorageErrorKind`] as the protocol carries it.
#[allow(missing_docs)] // Each variant is the `StorageErrorKind` of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireStorageKind {
    NotFound,
    NoSpace,
    PermissionDenied,
    ReadOnly,
    Unsupported,
    Interrupted,
    Other,
}

/// A [`VectorProblem`] as the protocol carries it.
#[allow(missing_docs)] // Each variant and field is the `VectorProblem` of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireVectorProblem {
    Empty,
    NotFinite { position: u64 },
    AllZero,
    DimensionMismatch { expected: u64, found: u64 },
}

/// The text of a storage failure that crossed the socket: the source of the client's error.
#[derive(Debug)]
struct RemoteStorageError {
    message: String,
    kind: StorageErrorKind,
}

impl std::fmt::Display for RemoteStorageError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for RemoteStorageError {}

impl StorageError for RemoteStorageError {
    fn kind(&self) -> StorageErrorKind {
        self.kind
    }
}

/// A count as a `u64` (a `usize` always fits on the machines cheesedb runs on).
fn wide(count: usize) -> u64 {
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// A count from a `u64`, saturated on a machine narrower than the sender.
fn narrow(count: u64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX)
}

impl From<StorageErrorKind> for WireStorageKind {
    fn from(kind: StorageErrorKind) -> WireStorageKind {
        match kind {
            StorageErrorKind::NotFound => WireStorageKind::NotFound,
            StorageErrorKind::NoSpace => WireStorageKind::NoSpace,
            StorageErrorKind::PermissionDenied => WireStorageKind::PermissionDenied,
            StorageErrorKind::ReadOnly => WireStorageKind::ReadOnly,
            StorageErrorKind::Unsupported => WireStorageKind::Unsupported,
            StorageErrorKind::Interrupted => WireStorageKind::Interrupted,
            _ => WireStorageKind::Other,
        }
    }
}

impl From<WireStorageKind> for StorageErrorKind {
    fn from(kind: WireStorageKind) -> StorageErrorKind {
        match kind {
            WireStorageKind::NotFound => StorageErrorKind::NotFound,
            WireStorageKind::NoSpace => StorageErrorKind::NoSpace,
            WireStorageKind::PermissionDenied => StorageErrorKind::PermissionDenied,
            WireStorageKind::ReadOnly => StorageErrorKind::ReadOnly,
            WireStorageKind::Unsupported => StorageErrorKind::Unsupported,
            WireStorageKind::Interrupted => StorageErrorKind::Interrupted,
            WireStorageKind::Other => StorageErrorKind::Other,
        }
    }
}

impl From<VectorProblem> for WireVectorProblem {
    fn from(problem: VectorProblem) -> WireVectorProblem {
        match problem {
            VectorProblem::Empty => WireVectorProblem::Empty,
            VectorProblem::NotFinite { position } => WireVectorProblem::NotFinite { position: wide(position) },
            VectorProblem::AllZero => WireVectorProblem::AllZero,
            VectorProblem::DimensionMismatch { expected, found } => {
                WireVectorProblem::DimensionMismatch { expected: wide(expected), found: wide(found) }
            }
            // A problem this version does not know cannot come from its own engine.
            _ => WireVectorProblem::Empty,
        }
    }
}

impl From<WireVectorProblem> for VectorProblem {
    fn from(problem: WireVectorProblem) -> VectorProblem {
        match problem {
            WireVectorProblem::Empty => VectorProblem::Empty,
            WireVectorProblem::NotFinite { position } => VectorProblem::NotFinite { position: narrow(position) },
            WireVectorProblem::AllZero => VectorProblem::AllZero,
            WireVectorProblem::DimensionMismatch { expected, found } => {
                VectorProblem::DimensionMismatch { expected: narrow(expected), found: narrow(found) }
            }
        }
    }
}

/// The text of an error's source, for the wire.
fn source_text(source: &ErrorSource) -> String {
    source.to_string()
}

impl From<&Error> for WireError {
    fn from(error: &Error) -> WireError {
        match error.clone() {
            Error::Locked => WireError::Locked,
            Error::Corrupt { file, offset, reason } => {
                WireError::Corrupt { file, offset, reason: String::from(reason.describe()) }
            }
            Error::Io { operation, path, kind, source } => WireError::Io {
                operation: String::from(operation),
                path,
                kind: kind.into(),
                source: source_text(&source),
            },
            Error::OutcomeUnknown { operation, path, kind, source } => WireError::OutcomeUnknown {
                operation: String::from(operation),
                path,
                kind: kind.into(),
                source: source_text(&source),
            },
            Error::Poisoned => WireError::Poisoned,
            Error::BackendUnavailable { backend, reason } => {
                WireError::BackendUnavailable { backend: String::from(backend), reason }
            }
            Error::Internal { what } => WireError::Internal { what: String::from(what) },
            Error::UnknownId { id } => WireError::UnknownId { id: id.get() },
            Error::DeadParent { id } => WireError::DeadParent { id: id.get() },
            Error::AlreadyRecalled { id } => WireError::AlreadyRecalled { id: id.get() },
            Error::NoLegs => WireError::NoLegs,
            Error::EmptyLeg { leg_index } => WireError::EmptyLeg { leg_index: wide(leg_index) },
            Error::LimitExceeded { what, size, limit } => {
                WireError::LimitExceeded { what: String::from(what), size, limit }
            }
            Error::InvalidName { reason } => WireError::InvalidName { reason: String::from(reason) },
            Error::AgentExists { name } => WireError::AgentExists { name },
            Error::UnknownAgent { name } => WireError::UnknownAgent { name },
            Error::UnknownToken => WireError::UnknownToken,
            Error::MalformedToken => WireError::MalformedToken,
            Error::AgentDeleted => WireError::AgentDeleted,
            Error::ReadOnly => WireError::ReadOnly,
            Error::RepairNeeded { operation, path } => {
                WireError::RepairNeeded { operation: String::from(operation), path }
            }
            Error::FolderNotPrivate { path, mode, owner, user } => {
                WireError::FolderNotPrivate { path, mode, owner, user }
            }
            Error::HistoryMismatch { records } => WireError::HistoryMismatch { records },
            Error::InvalidVector { problem } => WireError::InvalidVector { problem: problem.into() },
            Error::BatchConflict => WireError::BatchConflict,
            Error::ServerUnavailable { path, reason } => WireError::ServerUnavailable { path, reason },
            Error::ConnectionLost { reason, write_in_flight } => WireError::ConnectionLost { reason, write_in_flight },
            Error::VersionMismatch { client, server } => WireError::VersionMismatch { client, server },
            Error::FrameTooLarge { size_bytes, limit_bytes } => WireError::FrameTooLarge { size_bytes, limit_bytes },
            Error::MalformedMessage { reason } => WireError::MalformedMessage { reason: String::from(reason) },
            Error::ServerBusy { connections_max } => WireError::ServerBusy { connections_max },
            Error::PeerRefused { uid } => WireError::PeerRefused { uid },
            Error::AgentInUse { name } => WireError::AgentInUse { name },
            Error::AlreadyEncrypted { name } => WireError::AlreadyEncrypted { name },
            Error::ReplicaFenced { name, reason } => WireError::ReplicaFenced { name, reason: String::from(reason) },
            Error::ObjectStore { detail } => WireError::ObjectStore { detail },
            Error::StoredNotShipped { id, reason } => WireError::StoredNotShipped { id: id.map(Id::get), reason },
            Error::SocketRefused { path, problem } => WireError::SocketRefused { path, problem: problem.into() },
            Error::ForkedProcess { opening_process_id, current_process_id } => {
                WireError::ForkedProcess { opening_process_id, current_process_id }
            }
            Error::ReplicaNotFound { prefix } => WireError::ReplicaNotFound { prefix },
            Error::BatchOpen => WireError::BatchOpen,
            Error::NeedsLocalStore { operation } => WireError::NeedsLocalStore { operation: operation.into() },
            // A variant added to `Error` without a mapping here fails the test
            // `every_variant_of_the_engine_has_a_wire_mapping` below.
            other => WireError::Other { message: other.to_string() },
        }
    }
}

impl WireError {
    /// The [`Error`] it carries. Texts the engine keeps as `&'static str` are found among the
    /// engine's own; one that is not (from a server of another build) becomes a fixed text.
    #[must_use]
    pub fn into_error(self) -> Error {
        match self {
            WireError::Locked => Error::Locked,
            WireError::Corrupt { file, offset, reason } => match known_text::corrupt_reason(&reason) {
                Some(reason) => Error::Corrupt { file, offset, reason },
                None => Error::Internal { what: "the server named a damage this client does not know" },
            },
            WireError::Io { operation, path, kind, source } => Error::Io {
                operation: known_text::operation(&operation),
                path,
                kind: kind.into(),
                source: ErrorSource::new(RemoteStorageError { message: source, kind: kind.into() }),
            },
            WireError::OutcomeUnknown { operation, path, kind, source } => Error::OutcomeUnknown {
                operation: known_text::operation(&operation),
                path,
                kind: kind.into(),
                source: ErrorSource::new(RemoteStorageError { message: source, kind: kind.into() }),
            },
            WireError::Poisoned => Error::Poisoned,
            WireError::BackendUnavailable { backend, reason } => {
                Error::BackendUnavailable { backend: known_text::backend(&backend), reason }
            }
            WireError::Internal { what } => Error::Internal { what: known_text::internal_rule(&what) },
            WireError::UnknownId { id } => Error::UnknownId { id: Id::from(id) },
            WireError::DeadParent { id } => Error::DeadParent { id: Id::from(id) },
            WireError::AlreadyRecalled { id } => Error::AlreadyRecalled { id: Id::from(id) },
            WireError::NoLegs => Error::NoLegs,
            WireError::EmptyLeg { leg_index } => Error::EmptyLeg { leg_index: narrow(leg_index) },
            WireError::LimitExceeded { what, size, limit } => {
                Error::LimitExceeded { what: known_text::limit(&what), size, limit }
            }
            WireError::InvalidName { reason } => Error::InvalidName { reason: known_text::name_reason(&reason) },
            WireError::AgentExists { name } => Error::AgentExists { name },
            WireError::UnknownAgent { name } => Error::UnknownAgent { name },
            WireError::UnknownToken => Error::UnknownToken,
            WireError::MalformedToken => Error::MalformedToken,
            WireError::AgentDeleted => Error::AgentDeleted,
            WireError::ReadOnly => Error::ReadOnly,
            WireError::RepairNeeded { operation, path } => {
                Error::RepairNeeded { operation: known_text::operation(&operation), path }
            }
            WireError::FolderNotPrivate { path, mode, owner, user } => {
                Error::FolderNotPrivate { path, mode, owner, user }
            }
            WireError::HistoryMismatch { records } => Error::HistoryMismatch { records },
            WireError::InvalidVector { problem } => Error::InvalidVector { problem: problem.into() },
            WireError::BatchConflict => Error::BatchConflict,
            WireError::ServerUnavailable { path, reason } => Error::ServerUnavailable { path, reason },
            WireError::ConnectionLost { reason, write_in_flight } => Error::ConnectionLost { reason, write_in_flight },
            WireError::VersionMismatch { client, server } => Error::VersionMismatch { client, server },
            WireError::FrameTooLarge { size_bytes, limit_bytes } => Error::FrameTooLarge { size_bytes, limit_bytes },
            WireError::MalformedMessage { reason } => {
                Error::MalformedMessage { reason: known_text::malformed_reason(&reason) }
            }
            WireError::ServerBusy { connections_max } => Error::ServerBusy { connections_max },
            WireError::PeerRefused { uid } => Error::PeerRefused { uid },
            WireError::AgentInUse { name } => Error::AgentInUse { name },
            WireError::AlreadyEncrypted { name } => Error::AlreadyEncrypted { name },
            WireError::Other { .. } => Error::Internal { what: "the server failed in a way this client does not know" },
            WireError::ReplicaFenced { name, reason } => {
                Error::ReplicaFenced { name, reason: known_text::fence_reason(&reason) }
            }
            WireError::ObjectStore { detail } => Error::ObjectStore { detail },
            WireError::StoredNotShipped { id, reason } => Error::StoredNotShipped { id: id.map(Id::from), reason },
            WireError::SocketRefused { path, problem } => Error::SocketRefused { path, problem: problem.into() },
            WireError::ForkedProcess { opening_process_id, current_process_id } => {
                Error::ForkedProcess { opening_process_id, current_process_id }
            }
            WireError::ReplicaNotFound { prefix } => Error::ReplicaNotFound { prefix },
            WireError::BatchOpen => Error::BatchOpen,
            WireError::NeedsLocalStore { operation } => Error::NeedsLocalStore { operation: operation.into() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb_core::CorruptReason;

    /// One error of every variant, with texts the engine really uses.
    fn every_error() -> Vec<Error> {
        let storage = || ErrorSource::new(std::io::Error::from(std::io::ErrorKind::StorageFull));
        vec![
            Error::Locked,
            Error::Corrupt {
                file: String::from("agent-1/log-1"),
                offset: 9,
                reason: CorruptReason::RecordChecksumMismatch,
            },
            Error::Io {
                operation: "syncing",
                path: String::from("a"),
                kind: StorageErrorKind::NoSpace,
                source: storage(),
            },
            Error::OutcomeUnknown {
                operation: "writing",
                path: String::from("b"),
                kind: StorageErrorKind::PermissionDenied,
                source: storage(),
            },
            Error::Poisoned,
            Error::BackendUnavailable { backend: "uring", reason: String::from("kernel too old") },
            Error::Internal { what: "a committed batch answers every write" },
            Error::UnknownId { id: Id::from(5) },
            Error::DeadParent { id: Id::from(6) },
            Error::AlreadyRecalled { id: Id::from(7) },
            Error::NoLegs,
            Error::EmptyLeg { leg_index: 2 },
            Error::LimitExceeded { what: "content size in bytes", size: 20, limit: 10 },
            Error::InvalidName { reason: "a lot label must not be empty" },
            Error::AgentExists { name: String::from("alice") },
            Error::UnknownAgent { name: String::from("bob") },
            Error::UnknownToken,
            Error::MalformedToken,
            Error::AgentDeleted,
            Error::ReadOnly,
            Error::RepairNeeded { operation: "cutting the torn end of", path: String::from("c") },
            Error::FolderNotPrivate { path: String::from("/d"), mode: 0o777, owner: 1, user: 2 },
            Error::HistoryMismatch { records: 3 },
            Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected: 3, found: 4 } },
            Error::InvalidVector { problem: VectorProblem::NotFinite { position: 1 } },
            Error::InvalidVector { problem: VectorProblem::Empty },
            Error::InvalidVector { problem: VectorProblem::AllZero },
            Error::BatchConflict,
            Error::ServerUnavailable { path: String::from("/e"), reason: String::from("refused") },
            Error::ConnectionLost { reason: String::from("closed"), write_in_flight: true },
            Error::VersionMismatch { client: 1, server: 2 },
            Error::FrameTooLarge { size_bytes: 5, limit_bytes: 4 },
            Error::MalformedMessage { reason: "the bytes do not decode as a request" },
            Error::ServerBusy { connections_max: 8 },
            Error::PeerRefused { uid: 1000 },
            Error::AgentInUse { name: String::from("carol") },
            Error::AlreadyEncrypted { name: String::from("dave") },
            Error::ReplicaFenced { name: String::from("erin"), reason: "the head was replaced by another store" },
            Error::ObjectStore { detail: String::from("connection refused") },
            Error::StoredNotShipped { id: Some(Id::from(8)), reason: String::from("the object store failed") },
            Error::StoredNotShipped { id: None, reason: String::from("the object store failed") },
            Error::SocketRefused { path: String::from("/f/cheesedb.sock"), problem: SocketProblem::SymbolicLink },
            Error::SocketRefused {
                path: String::from("/g/cheesedb.sock"),
                problem: SocketProblem::OwnedByAnotherUser { owner: 1, user: 2 },
            },
            Error::ForkedProcess { opening_process_id: 41, current_process_id: 42 },
            Error::ReplicaNotFound { prefix: String::from("backups/") },
            Error::ReplicaNotFound { prefix: String::new() },
            Error::BatchOpen,
            Error::NeedsLocalStore { operation: LocalOperation::TrustUnderGivenRules },
            Error::NeedsLocalStore { operation: LocalOperation::BatchHeldByCaller },
            Error::NeedsLocalStore { operation: LocalOperation::ReadsGivenInBatch },
            Error::NeedsLocalStore { operation: LocalOperation::HeapFigures },
            Error::NeedsLocalStore { operation: LocalOperation::VerifyWithoutToken },
            Error::NeedsLocalStore { operation: LocalOperation::Replication },
        ]
    }

    /// The name of `error`'s variant, as `Debug` writes it.
    fn variant_name(error: &impl std::fmt::Debug) -> String {
        let debug = format!("{error:?}");
        debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned()
    }

    /// The variants of the enum `name` declared in `source`: each line indented by one level
    /// that starts with a capital letter inside `pub enum NAME { … }`.
    fn declared_variants(source: &str, name: &str) -> Vec<String> {
        let start = source.find(&format!("pub enum {name} {{")).unwrap();
        let body = &source[start..];
        let end = body.find("\n}").unwrap();
        body[..end]
            .lines()
            .skip(1)
            .filter(|line| line.starts_with("    ") && !line.starts_with("     "))
            .map(str::trim)
            .filter(|line| line.starts_with(|character: char| character.is_ascii_uppercase()))
            .map(|line| line.split([' ', '{', ',', '(']).next().unwrap().to_owned())
            .collect()
    }

    /// Every variant the engine declares has a wire variant of its own, and is among
    /// [`every_error`], so the round trip below covers it: a variant added to `Error` without
    /// a mapping fails here rather than reaching a client as "an error this client does not
    /// know".
    #[test]
    fn every_variant_of_the_engine_has_a_wire_mapping() {
        let engine = declared_variants(include_str!("../../../core/src/error.rs"), "Error");
        assert!(engine.len() > 30, "the parse found the variants: {engine:?}");
        let covered: Vec<String> = every_error().iter().map(variant_name).collect();
        for variant in &engine {
            assert!(covered.contains(variant), "Error::{variant} is missing from every_error()");
        }
        for error in every_error() {
            let wire = WireError::from(&error);
            assert!(!matches!(wire, WireError::Other { .. }), "{error:?} has no wire variant of its own");
            assert_eq!(variant_name(&wire), variant_name(&error), "{error:?} crosses the wire as {wire:?}");
        }
        let problems = declared_variants(include_str!("../../../core/src/error.rs"), "SocketProblem");
        assert_eq!(problems, ["SymbolicLink", "OwnedByAnotherUser"], "a new socket problem needs a wire variant");
        let vector_problems = declared_variants(include_str!("../../../core/src/error.rs"), "VectorProblem");
        assert_eq!(vector_problems.len(), 4, "a new vector problem needs a wire variant: {vector_problems:?}");
        let operations = declared_variants(include_str!("../../../core/src/error.rs"), "LocalOperation");
        assert_eq!(operations.len(), 6, "a new local operation needs a wire variant: {operations:?}");
    }

    #[test]
    fn every_error_comes_back_the_same() {
        for error in every_error() {
            let wire = WireError::from(&error);
            let bytes = postcard::to_allocvec(&wire).unwrap();
            let back: WireError = postcard::from_bytes(&bytes).unwrap();
            let returned = back.into_error();
            assert_eq!(returned, error);
            assert_eq!(returned.to_string(), error.to_string());
            assert_eq!(returned.storage_kind(), error.storage_kind());
        }
    }

    #[test]
    fn an_unknown_text_becomes_a_fixed_one_not_leaked_memory() {
        let wire = WireError::LimitExceeded { what: "z".repeat(10_000), size: 1, limit: 0 };
        assert_eq!(
            wire.into_error(),
            Error::LimitExceeded { what: "a value (a limit of the server)", size: 1, limit: 0 }
        );
        let wire = WireError::Corrupt { file: String::new(), offset: 0, reason: String::from("?") };
        assert!(matches!(wire.into_error(), Error::Internal { .. }));
    }
}
