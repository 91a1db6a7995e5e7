//! Tests that every error a server can send reaches the client as itself: each variant of
//! [`Error`] and each variant of every fact it carries, found by reading the engine's sources so
//! that one added later cannot be left out, and the protocol version that fixes their encoding.

use cheesedb_core::{
    CorruptReason, Error, ErrorSource, FenceReason, Id, InternalRule, Limit, LocalOperation, MessageProblem,
    NameProblem, SocketProblem, StorageBackend, StorageErrorKind, StorageOperation, VectorProblem,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Response, PROTOCOL_VERSION};
use cheesedb_core::{Report, Role};

/// One error of every variant, with facts the engine really gives.
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
            operation: StorageOperation::Syncing,
            path: String::from("a"),
            kind: StorageErrorKind::NoSpace,
            source: storage(),
        },
        Error::Io {
            operation: StorageOperation::ReadingBack,
            path: String::from("a"),
            kind: StorageErrorKind::Other,
            source: ErrorSource::none(),
        },
        Error::OutcomeUnknown {
            operation: StorageOperation::Writing,
            path: String::from("b"),
            kind: StorageErrorKind::PermissionDenied,
            source: storage(),
        },
        Error::Poisoned,
        Error::BackendUnavailable { backend: StorageBackend::Uring, reason: String::from("kernel too old") },
        Error::Internal { what: InternalRule::CommittedBatchAnswersEveryWrite },
        Error::UnknownId { id: Id::from(5) },
        Error::DeadParent { id: Id::from(6) },
        Error::AlreadyRecalled { id: Id::from(7) },
        Error::NoLegs,
        Error::EmptyLeg { leg_index: 2 },
        Error::LimitExceeded { what: Limit::ContentBytes, size: 20, limit: 10 },
        Error::InvalidName { reason: NameProblem::LotLabelEmpty },
        Error::AgentExists { name: String::from("alice") },
        Error::UnknownAgent { name: String::from("bob") },
        Error::SpaceExists { name: String::from("team") },
        Error::UnknownSpace { name: String::from("crew") },
        Error::RoleTooLow { held: Role::Read, needed: Role::Write },
        Error::LastAdmin,
        Error::UnknownToken,
        Error::MalformedToken,
        Error::AgentDeleted,
        Error::ReadOnly,
        Error::RepairNeeded { operation: StorageOperation::CuttingTornEnd, path: String::from("c") },
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
        Error::MalformedMessage { reason: MessageProblem::RequestUndecodable },
        Error::ServerBusy { connections_max: 8 },
        Error::PeerRefused { uid: 1000 },
        Error::AgentInUse { name: String::from("carol") },
        Error::AlreadyEncrypted { name: String::from("dave") },
        Error::ReplicaFenced { name: String::from("erin"), reason: FenceReason::HeadReplaced },
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
    ]
}

/// The name of a value's variant, as `Debug` writes it.
fn variant_name(value: &impl std::fmt::Debug) -> String {
    let debug = format!("{value:?}");
    debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned()
}

/// The variants of the enum `name` declared in `source`: each line indented by one level that
/// starts with a capital letter inside `pub enum NAME { … }`.
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

/// The source of the engine's file `path`, below `core/src`.
fn engine_source(path: &str) -> String {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src").join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()))
}

/// `error` sent by a server and read by a client.
fn sent_and_read(error: &Error) -> Error {
    let mut body = Vec::new();
    Response::failed(error).encode_into(&mut body).unwrap();
    match Response::decode(&body).unwrap() {
        Response::Failed(read) => read,
        other => panic!("{error:?} came back as {other:?}"),
    }
}

#[test]
fn every_variant_of_the_engine_is_among_the_errors_sent() {
    let engine = declared_variants(&engine_source("error.rs"), "Error");
    assert!(engine.len() > 30, "the parse found the variants: {engine:?}");
    let covered: Vec<String> = every_error().iter().map(variant_name).collect();
    for variant in &engine {
        assert!(covered.contains(variant), "Error::{variant} is missing from every_error()");
    }
}

#[test]
fn every_error_comes_back_the_same() {
    for error in every_error() {
        let read = sent_and_read(&error);
        assert_eq!(read, error);
        assert_eq!(read.to_string(), error.to_string());
        assert_eq!(read.storage_kind(), error.storage_kind());
        assert_eq!(read.is_outcome_unknown(), error.is_outcome_unknown());
        assert_eq!(
            core::error::Error::source(&read).map(ToString::to_string),
            core::error::Error::source(&error).map(ToString::to_string),
            "{error:?} keeps the words of its source"
        );
    }
}

/// Every variant of the fact enum `T`, read from the bytes of its index: a fact enum has unit
/// variants only, which postcard encodes as their index alone. The count is read from the
/// engine's source, so a variant added later is among them.
fn every_variant<T: DeserializeOwned + Serialize + std::fmt::Debug>(file: &str, name: &str) -> Vec<T> {
    let declared = declared_variants(&engine_source(file), name);
    let index_bytes = |index: usize| postcard::to_allocvec(&u32::try_from(index).unwrap()).unwrap();
    let variants: Vec<T> = (0..declared.len())
        .map(|index| {
            let variant: T = postcard::from_bytes(&index_bytes(index))
                .unwrap_or_else(|error| panic!("{name} variant {index}: {error}"));
            assert_eq!(postcard::to_allocvec(&variant).unwrap(), index_bytes(index), "{name} variant {index}");
            variant
        })
        .collect();
    let names: Vec<String> = variants.iter().map(variant_name).collect();
    assert_eq!(names, declared, "{name} encodes its variants in the order it declares them");
    let past_the_end = index_bytes(declared.len());
    assert!(postcard::from_bytes::<T>(&past_the_end).is_err(), "{name} has no variant past the declared ones");
    variants
}

/// `fact` inside an error, sent and read, keeps its value and its words.
fn assert_fact_comes_back(error: Error, words: &str) {
    let read = sent_and_read(&error);
    assert_eq!(read, error);
    assert!(read.to_string().contains(words), "{read} names {words:?}");
}

#[test]
fn every_fact_of_every_kind_comes_back_in_its_error() {
    let path = || String::from("agent-1/segment-1.log");
    for operation in every_variant::<StorageOperation>("error_facts/storage_operation.rs", "StorageOperation") {
        let source = ErrorSource::none();
        let kind = StorageErrorKind::Other;
        assert_fact_comes_back(Error::Io { operation, path: path(), kind, source }, operation.describe());
        assert_fact_comes_back(Error::RepairNeeded { operation, path: path() }, operation.describe());
    }
    for what in every_variant::<Limit>("error_facts/limit.rs", "Limit") {
        assert_fact_comes_back(Error::LimitExceeded { what, size: 2, limit: 1 }, what.describe());
    }
    for what in every_variant::<InternalRule>("error_facts/internal_rule.rs", "InternalRule") {
        assert_fact_comes_back(Error::Internal { what }, what.describe());
    }
    for reason in every_variant::<NameProblem>("error_facts/name_problem.rs", "NameProblem") {
        assert_fact_comes_back(Error::InvalidName { reason }, reason.describe());
    }
    for reason in every_variant::<MessageProblem>("error_facts/message_problem.rs", "MessageProblem") {
        assert_fact_comes_back(Error::MalformedMessage { reason }, reason.describe());
    }
    for reason in every_variant::<FenceReason>("error_facts/fence_reason.rs", "FenceReason") {
        assert_fact_comes_back(Error::ReplicaFenced { name: String::from("alice"), reason }, reason.describe());
    }
    for backend in every_variant::<StorageBackend>("error_facts/storage_backend.rs", "StorageBackend") {
        let reason = String::from("refused");
        assert_fact_comes_back(Error::BackendUnavailable { backend, reason }, backend.describe());
    }
    for operation in every_variant::<LocalOperation>("error.rs", "LocalOperation") {
        assert_fact_comes_back(Error::NeedsLocalStore { operation }, &operation.to_string());
    }
    for reason in every_variant::<CorruptReason>("corrupt_reason.rs", "CorruptReason") {
        assert_fact_comes_back(Error::Corrupt { file: path(), offset: 0, reason }, reason.describe());
    }
    for kind in every_variant::<StorageErrorKind>("storage_error.rs", "StorageErrorKind") {
        let (operation, source) = (StorageOperation::Syncing, ErrorSource::none());
        let read = sent_and_read(&Error::OutcomeUnknown { operation, path: path(), kind, source });
        assert_eq!(read.storage_kind(), Some(kind));
    }
}

#[test]
fn the_facts_of_each_kind_have_words_of_their_own() {
    fn distinct<T: DeserializeOwned + Serialize + std::fmt::Debug>(file: &str, name: &str, words: fn(&T) -> String) {
        let mut all: Vec<String> = every_variant::<T>(file, name).iter().map(words).collect();
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count, "two variants of {name} share their words");
    }
    distinct::<StorageOperation>("error_facts/storage_operation.rs", "StorageOperation", ToString::to_string);
    distinct::<Limit>("error_facts/limit.rs", "Limit", ToString::to_string);
    distinct::<InternalRule>("error_facts/internal_rule.rs", "InternalRule", ToString::to_string);
    distinct::<NameProblem>("error_facts/name_problem.rs", "NameProblem", ToString::to_string);
    distinct::<MessageProblem>("error_facts/message_problem.rs", "MessageProblem", ToString::to_string);
    distinct::<FenceReason>("error_facts/fence_reason.rs", "FenceReason", ToString::to_string);
}

#[test]
fn a_report_comes_back_with_the_reason_its_snapshot_was_ignored() {
    let mut report = Report::default();
    report.records = 4;
    report.snapshot_ignored = Some(CorruptReason::SnapshotHeaderChecksumMismatch);
    let mut body = Vec::new();
    Response::Report(report.clone()).encode_into(&mut body).unwrap();
    let Ok(Response::Report(read)) = Response::decode(&body) else { panic!("not a report") };
    assert_eq!(read, report);
}

/// The declaration of `name` in `source` as it bears on the encoding: its variants and their
/// fields, in order, without comments and attributes, hashed (FNV-1a, 64 bits).
fn declaration_fingerprint(source: &str, name: &str) -> u64 {
    let start = source.find(&format!("pub enum {name} {{")).unwrap();
    let body = &source[start..];
    let end = body.find("\n}").unwrap();
    let declaration: Vec<&str> = body[..end]
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//") && !line.starts_with("#["))
        .collect();
    declaration
        .join("\n")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Each enum that travels inside an error, with its count of variants and the fingerprint of
/// its declaration as protocol version 10 encodes it. Postcard encodes a variant by its index and
/// the fields in order, so a client of the same version decodes exactly these: a variant or a
/// field added, removed or moved must come with a new protocol version, or a client would take
/// the server's error for bytes that are not a message.
const ENCODED_ENUMS: &[(&str, &str, usize, u64)] = &[
    ("error.rs", "Error", 46, 0x07ee_4db2_f179_40e7),
    ("error.rs", "LocalOperation", 7, 0x514b_96b5_3de6_ba50),
    ("error.rs", "SocketProblem", 2, 0x8172_ada1_80a7_8c70),
    ("error.rs", "VectorProblem", 4, 0x9ad4_58b4_3fb2_9737),
    ("corrupt_reason.rs", "CorruptReason", 154, 0xa975_5702_b4b8_5149),
    ("storage_error.rs", "StorageErrorKind", 7, 0x503b_b169_9e6d_b4d2),
    ("error_facts/storage_operation.rs", "StorageOperation", 19, 0x0835_bb16_a895_a9ff),
    ("error_facts/storage_backend.rs", "StorageBackend", 1, 0x251d_3249_f7c4_edee),
    ("error_facts/internal_rule.rs", "InternalRule", 43, 0xbd17_6e8d_4e75_a44d),
    ("error_facts/limit.rs", "Limit", 19, 0xd970_2b15_0a19_e359),
    ("error_facts/name_problem.rs", "NameProblem", 7, 0x4326_b198_ca82_23ed),
    ("error_facts/message_problem.rs", "MessageProblem", 8, 0x860f_3079_50b8_b2ab),
    ("error_facts/fence_reason.rs", "FenceReason", 4, 0xb4ef_8c4b_6171_a19f),
    ("role.rs", "Role", 4, 0xda52_666c_f9c6_deb6),
];

#[test]
fn a_change_to_the_errors_comes_with_a_new_protocol_version() {
    assert_eq!(PROTOCOL_VERSION, 10, "a new protocol version: update ENCODED_ENUMS to what it encodes");
    for (file, name, count, fingerprint) in ENCODED_ENUMS {
        let source = engine_source(file);
        let declared = declared_variants(&source, name);
        let found = (declared.len(), declaration_fingerprint(&source, name));
        assert_eq!(
            found,
            (*count, *fingerprint),
            "{name} changed its variants or fields: errors now encode differently, so raise \
             PROTOCOL_VERSION and update ENCODED_ENUMS"
        );
    }
}
