//! Texts the engine's errors hold as `&'static str`, found again on the client.
//!
//! An error crossing the socket carries its texts as strings; the client's `Error` wants
//! `&'static str`. Each text is looked up among the engine's own (a test below checks the
//! tables against the sources, so a new text cannot be forgotten); a text not found becomes a
//! fixed one rather than memory leaked for it.

use cheesedb_core::CorruptReason;

/// Every reason of damage, so a reason can be found again from its description.
const CORRUPT_REASONS: &[CorruptReason] = &[
    CorruptReason::CatalogCutShort,
    CorruptReason::CatalogChecksumMismatch,
    CorruptReason::BadMagic,
    CorruptReason::UnsupportedFormatVersion,
    CorruptReason::NotACatalogFile,
    CorruptReason::CatalogListsTooManyAgents,
    CorruptReason::AgentNameNotUtf8,
    CorruptReason::AgentNumberOutOfRange,
    CorruptReason::BytesLeftOverAfterCatalog,
    CorruptReason::EraseJournalCutShort,
    CorruptReason::EraseJournalChecksumMismatch,
    CorruptReason::EraseJournalOfAnotherFormatVersion,
    CorruptReason::ReservedEraseJournalBytesSet,
    CorruptReason::BytesLeftOverAfterEraseJournal,
    CorruptReason::EraseJournalOverwriteCutShort,
    CorruptReason::EraseJournalOverwriteLargerThanRecord,
    CorruptReason::EraseJournalOverwritePastLargestOffset,
    CorruptReason::RecordCutShort,
    CorruptReason::ImpossibleRecordLength,
    CorruptReason::RecordChecksumMismatch,
    CorruptReason::BytesLeftOverAfterRecordBody,
    CorruptReason::RecordBodyCutShort,
    CorruptReason::ReservedBitsSet,
    CorruptReason::ErasedFlagOnRecordWithoutContent,
    CorruptReason::LabelNotUtf8,
    CorruptReason::UnknownRecallMode,
    CorruptReason::UnknownRemoval,
    CorruptReason::UnknownRecordKind,
    CorruptReason::LegsCutShort,
    CorruptReason::ContentCutShort,
    CorruptReason::TrackedParentsMalformed,
    CorruptReason::TrackedParentNotInEveryLeg,
    CorruptReason::ErasedContentPaddingNotZero,
    CorruptReason::SegmentHeaderCutShort,
    CorruptReason::SegmentHeaderChecksumMismatch,
    CorruptReason::NotASegmentFile,
    CorruptReason::UnexpectedSegmentHeaderLayout,
    CorruptReason::SnapshotCutShort,
    CorruptReason::SnapshotBodyShorterThanCounts,
    CorruptReason::SnapshotBodyLongerThanCounts,
    CorruptReason::SnapshotUnreadable,
    CorruptReason::SnapshotHeaderChecksumMismatch,
    CorruptReason::SnapshotOfAnotherFormatVersion,
    CorruptReason::SnapshotOfAnotherLayout,
    CorruptReason::ReservedSnapshotBytesSet,
    CorruptReason::SnapshotCountsImpossiblyLarge,
    CorruptReason::SnapshotTooLargeForThisMachine,
    CorruptReason::SnapshotBodyChecksumMismatch,
    CorruptReason::SegmentFileMissing,
    CorruptReason::SegmentHeaderBelongsElsewhere,
    CorruptReason::SegmentFileMissingAfterSeal,
    CorruptReason::LogEndsBeforeSnapshotPoint,
    CorruptReason::ActiveSegmentCutInsideWriteMargin,
    CorruptReason::SealedSegmentDoesNotEndWithSeal,
    CorruptReason::DamagedRecordBeforeCommitMarker,
    CorruptReason::LotIdOutOfOrder,
    CorruptReason::MemoryIdOutOfOrder,
    CorruptReason::MemoryWithoutLeg,
    CorruptReason::MemoryOnDeadOrUnknownParent,
    CorruptReason::MemoryWithEmptyLeg,
    CorruptReason::RecallOfUnknownId,
    CorruptReason::VectorOfDeadOrUnknownNode,
    CorruptReason::VectorBytesNotNumbers,
    CorruptReason::VectorDimensionDiffers,
    CorruptReason::RecordBelongsElsewhere,
    CorruptReason::RecordNotLotOrMemory,
    CorruptReason::RecordHoldsAnotherId,
    CorruptReason::ErasedContentBackOnDisk,
    CorruptReason::ContentDoesNotMatchDigest,
    CorruptReason::RecordOutsideWrite,
    CorruptReason::RedactionChangesMoreThanFrameAndText,
    CorruptReason::NoCommitMarkerAfterRecord,
    CorruptReason::EraseJournalOverwritePastSegmentEnd,
    CorruptReason::RecordNotInsideCommittedWrite,
    CorruptReason::WriteTooLarge,
    CorruptReason::CommitMarkerDoesNotMatchBatch,
    CorruptReason::EraseJournalOfAnotherAgent,
    CorruptReason::EraseJournalNamesMissingSegment,
    CorruptReason::UncommittedBytesInRewrittenSegment,
    CorruptReason::SnapshotBelongsElsewhere,
    CorruptReason::SnapshotErasesTextLogDoesNotErase,
    CorruptReason::SnapshotSegmentCannotBeOpened,
    CorruptReason::SnapshotSegmentCannotBeMeasured,
    CorruptReason::SnapshotPointLiesOutsideSegment,
    CorruptReason::SnapshotSegmentHeaderUnreadable,
    CorruptReason::SnapshotDoesNotMatchSegmentItStarts,
    CorruptReason::SnapshotPointInsideHeader,
    CorruptReason::SnapshotCommitMarkerUnreadable,
    CorruptReason::SnapshotNotAPlainFile,
    CorruptReason::NoCommitMarkerAtSnapshotPoint,
    CorruptReason::SnapshotDiffersFromHashChain,
    CorruptReason::UncommittedBytesAfterLastCommit,
    CorruptReason::SegmentSealOutOfPlace,
    CorruptReason::LogDiffersFromOpenedState,
    CorruptReason::GraphDiffersFromLog,
    CorruptReason::SnapshotChildRowsDoNotMatchNodeCount,
    CorruptReason::SnapshotChildRowsDoNotMatchEdgeCount,
    CorruptReason::SnapshotChildRowsOutOfOrder,
    CorruptReason::SnapshotNamesChildNotNode,
    CorruptReason::SnapshotLegEndsDoNotMatchNodeCount,
    CorruptReason::SnapshotLegEndsOutOfOrder,
    CorruptReason::SnapshotNamesParentNotNode,
    CorruptReason::SnapshotHoldsTooManyNodes,
    CorruptReason::SnapshotNodeHasUnknownFlags,
    CorruptReason::RecordAfterSeal,
    CorruptReason::SealNotAloneOrWrongSegment,
    CorruptReason::RecordSequenceOutOfOrder,
    CorruptReason::CatalogMissingWhileAgentFoldersExist,
    CorruptReason::KeyFileHeaderMismatch,
    CorruptReason::KeyFileHeaderChecksumMismatch,
    CorruptReason::KeyFileCutShort,
    CorruptReason::KeyFileMissing,
    CorruptReason::KeySlotChecksumMismatch,
    CorruptReason::EpochSlotChecksumMismatch,
    CorruptReason::EpochKeyDoesNotOpen,
    CorruptReason::EpochOfRecordUnknown,
    CorruptReason::SealedContentMalformed,
    CorruptReason::SealedContentDoesNotOpen,
    CorruptReason::KeySlotDoesNotOpen,
    CorruptReason::KeyMissingForReadableNode,
    CorruptReason::KeyKeptForErasedNode,
    CorruptReason::SealedRecordInPlaintextAgent,
    CorruptReason::PlaintextRecordInEncryptedAgent,
    CorruptReason::SealedLotWithLabelInTheClear,
    CorruptReason::ReplicaHeadCutShort,
    CorruptReason::ReplicaHeadChecksumMismatch,
    CorruptReason::NotAReplicaHead,
    CorruptReason::ReservedReplicaHeadBytesSet,
    CorruptReason::ReplicaHeadListsTooManyPieces,
    CorruptReason::ReplicaHeadNameOutOfRange,
    CorruptReason::BytesLeftOverAfterReplicaHead,
    CorruptReason::ReplicaPieceOfNoAgentFile,
    CorruptReason::ReplicaPieceEmptyOrBackwards,
    CorruptReason::ReplicaPiecesNotContiguous,
    CorruptReason::ReplicaPieceMissing,
    CorruptReason::ReplicaPieceDigestMismatch,
    CorruptReason::ReplicaHeadWentBackwards,
    CorruptReason::ReplicaHeadOfAnotherAgent,
    CorruptReason::ReplicaHistoryDiverged,
    CorruptReason::ReplicaDoesNotVerifyToItsHead,
    CorruptReason::ReplicaHeadGrantsAnotherAgentsToken,
    CorruptReason::ReplicaHeadClaimsAnotherAgentsNumber,
    CorruptReason::ReplicaHeadFlagsDisagreeWithItsFiles,
    CorruptReason::CatalogTokenHashHeldTwice,
];

/// What the engine was doing when a storage operation failed (`Error::Io`, `OutcomeUnknown`,
/// `RepairNeeded`).
const OPERATIONS: &[&str] = &[
    "checking the permissions of",
    "checking",
    "creating",
    "cutting a torn epoch from",
    "cutting the torn end of",
    "drawing random bytes for",
    "growing",
    "listing",
    "locking",
    "measuring",
    "opening",
    "overwriting",
    "reading back",
    "reading",
    "removing",
    "renaming",
    "syncing",
    "trimming",
    "writing",
];

/// What was too large (`Error::LimitExceeded`).
const LIMITS: &[&str] = &[
    "agent name length in bytes",
    "agents in one store",
    "batch size in bytes",
    "content size in bytes",
    "label length in bytes",
    "legs of one memory",
    "parents of one leg",
    "records in one batch",
    "numbers in a vector",
    "nodes of one agent",
    "segments of one agent",
    "segment size",
    "preallocation in bytes",
    "bytes read into memory at once",
    "ids read since the last write (the read set)",
    "parents of one leg with the read set added",
    "tracked parents of one memory",
];

/// Which rule of the engine broke (`Error::Internal`).
const INTERNAL_RULES: &[&str] = &[
    "a request the server sorts as a read is one",
    "a request the server sorts as a write is one",
    "the active segment is open while the agent is in use",
    "a written entry has an id",
    "the search index exists once built",
    "no thread panics while it holds a lock of the store",
    "every segment has its part of the search index",
    "every segment has a checked outcome",
    "a segment that could not be read",
    "a segment offset fits in memory",
    "a segment offset fits in 32 bits",
    "a segment number fits in 16 bits",
    "a sealed segment is asked for only by a number the agent has",
    "a salt chunk is one salt long",
    "a node id is between 1 and the node limit",
    "a lot or memory collected without an id",
    "a committed batch answers every write",
    "a bounded count fits in 32 bits",
    "a bounded byte count fits in memory",
    "the server named a damage this client does not know",
    "the server failed in a way this client does not know",
    "a request encodes",
    "a memory's parents are older than it",
    "the trust walk ends with its start known",
    "a lot's record is a lot",
    "a response encodes",
    "a copied record keeps its sequence",
    "a copy goes from a plaintext agent into a new encrypted one",
    "a copy seals with the new agent's keys",
    "a key is 32 bytes",
    "a node id has a key slot",
    "a nonce is 24 bytes",
    "an entry's random bytes hold a nonce",
    "an entry's random bytes hold a secret and a nonce",
    "an entry's random bytes start with a salt",
    "an epoch has a slot",
    "an open encrypted agent has a live epoch in force",
    "keys are destroyed on encrypted agents",
    "only chained records are copied",
    "only lots and memories are new nodes",
    "the random pool holds the bytes it hands out",
];

/// Why a name was refused (`Error::InvalidName`).
const NAME_REASONS: &[&str] = &[
    "an agent name must not start with \"cheesedb-\", as tokens do",
    "an agent name must not be empty",
    "a lot label must not be empty",
    "a fingerprint is <records>-<64 hex digits>",
    "a replica location is s3://BUCKET or s3://BUCKET/PREFIX",
    "a fingerprint belongs to one agent: name it too",
];

/// Storage backends (`Error::BackendUnavailable`).
const BACKENDS: &[&str] = &["uring"];

/// Why bytes were not a message of the protocol (`Error::MalformedMessage`).
pub(crate) const MALFORMED_REASONS: &[&str] = &[
    "the bytes do not decode as a request",
    "the bytes do not decode as a response",
    "bytes are left over after the message",
    "the server answered with another kind of response",
    "the first request was not a hello",
    "a request before an agent was opened",
    "an agent is open on this connection already",
    "the batch is not open",
    "a batch is open: write through the batch",
];

/// Why an agent stopped being replicated (`Error::ReplicaFenced`).
const FENCE_REASONS: &[&str] = &[
    "the object store holds another agent of that name",
    "a piece this store was writing was written by someone else",
    "the head was replaced by another store",
    "the object store holds a history this store's log does not contain",
];

/// The text of `text` from `table`, or `fallback`.
fn find(table: &[&'static str], text: &str, fallback: &'static str) -> &'static str {
    table.iter().copied().find(|known| *known == text).unwrap_or(fallback)
}

/// A storage operation.
pub(crate) fn operation(text: &str) -> &'static str {
    find(OPERATIONS, text, "working on")
}

/// What passed a limit.
pub(crate) fn limit(text: &str) -> &'static str {
    find(LIMITS, text, "a value (a limit of the server)")
}

/// A rule of the engine.
pub(crate) fn internal_rule(text: &str) -> &'static str {
    find(INTERNAL_RULES, text, "a rule of the server's engine")
}

/// Why a name was refused.
pub(crate) fn name_reason(text: &str) -> &'static str {
    find(NAME_REASONS, text, "the server refused it")
}

/// A storage backend.
pub(crate) fn backend(text: &str) -> &'static str {
    find(BACKENDS, text, "chosen")
}

/// Why bytes were not a message.
pub(crate) fn malformed_reason(text: &str) -> &'static str {
    find(MALFORMED_REASONS, text, "the peer refused the message")
}

/// Why an agent stopped being replicated.
pub(crate) fn fence_reason(text: &str) -> &'static str {
    find(FENCE_REASONS, text, "the server's replica of it was fenced")
}

/// A reason of damage from its description.
pub(crate) fn corrupt_reason(text: &str) -> Option<CorruptReason> {
    CORRUPT_REASONS.iter().copied().find(|reason| reason.describe() == text)
}

/// Why a snapshot was ignored: a reason of damage's description.
pub(crate) fn snapshot_ignored(text: &str) -> &'static str {
    corrupt_reason(text).map_or("the server's snapshot could not be used", CorruptReason::describe)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// Every `.rs` file under `folder`.
    fn sources(folder: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, found);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                found.push(path);
            }
        }
    }

    /// The string literals that follow `marker` in the engine's sources (outside their tests).
    fn literals_after(marker: &str) -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for crate_folder in ["core/src", "io-std/src", "io-uring/src"] {
            sources(&root.join(crate_folder), &mut files);
        }
        let mut literals = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            for piece in code.split(marker).skip(1) {
                let piece = piece.trim_start();
                let Some(rest) = piece.strip_prefix('"') else { continue };
                let mut literal = String::new();
                let mut characters = rest.chars();
                while let Some(character) = characters.next() {
                    match character {
                        '\\' => literal.extend(characters.next()),
                        '"' => break,
                        other => literal.push(other),
                    }
                }
                literals.push(literal);
            }
        }
        literals
    }

    fn assert_all_known(marker: &str, tables: &[&[&str]]) {
        for literal in literals_after(marker) {
            assert!(
                tables.iter().any(|table| table.contains(&literal.as_str())),
                "{literal:?} (after {marker:?}) is missing from the tables of known_text.rs"
            );
        }
    }

    #[test]
    fn every_text_of_the_engine_is_known() {
        assert_all_known("limits::check(", &[LIMITS]);
        assert_all_known("what: ", &[LIMITS, INTERNAL_RULES]);
        assert_all_known("reason: ", &[NAME_REASONS, MALFORMED_REASONS]);
        assert_all_known("operation: ", &[OPERATIONS]);
        assert_all_known("io_error(", &[OPERATIONS]);
        assert_all_known("from_storage(", &[OPERATIONS]);
        assert_all_known("backend: ", &[BACKENDS]);
        assert_all_known("fence(", &[FENCE_REASONS]);
    }

    #[test]
    fn every_reason_of_damage_is_listed_once() {
        let source = include_str!("../../../core/src/corrupt_reason.rs");
        let variants = source.matches("=> \"").count() + source.matches("=> {\n").count();
        assert_eq!(CORRUPT_REASONS.len(), variants, "a reason of damage is missing from CORRUPT_REASONS");
        for reason in CORRUPT_REASONS {
            assert_eq!(corrupt_reason(reason.describe()), Some(*reason), "two reasons share a description");
        }
    }

    #[test]
    fn an_unknown_text_becomes_a_fixed_one() {
        assert_eq!(operation("syncing"), "syncing");
        assert_eq!(operation("x".repeat(1000).as_str()), "working on");
        assert_eq!(limit("content size in bytes"), "content size in bytes");
        assert_eq!(corrupt_reason("no such reason"), None);
    }
}
