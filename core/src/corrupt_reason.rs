//! Why stored bytes failed a check: one reason per check, for every file the engine reads.
//!
//! The codecs, the log scan and the engine all report damage with a [`CorruptReason`], so a
//! caller (or a test) can tell which check failed without reading a message.

use core::fmt;

/// Which check of stored bytes failed. New reasons may be added; match with a wildcard arm.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CorruptReason {
    /// Catalog cut short.
    CatalogCutShort,
    /// Catalog checksum mismatch.
    CatalogChecksumMismatch,
    /// Not a cheesedb file (bad magic).
    BadMagic,
    /// Unsupported format version.
    UnsupportedFormatVersion,
    /// Not a catalog file.
    NotACatalogFile,
    /// Catalog lists too many agents.
    CatalogListsTooManyAgents,
    /// Agent name is not UTF-8.
    AgentNameNotUtf8,
    /// Agent number out of range.
    AgentNumberOutOfRange,
    /// Bytes left over after the catalog.
    BytesLeftOverAfterCatalog,
    /// Erase journal cut short.
    EraseJournalCutShort,
    /// Erase journal checksum mismatch.
    EraseJournalChecksumMismatch,
    /// Not an erase journal of this format version.
    EraseJournalOfAnotherFormatVersion,
    /// Reserved erase journal bytes set.
    ReservedEraseJournalBytesSet,
    /// Bytes left over after the erase journal's overwrites.
    BytesLeftOverAfterEraseJournal,
    /// Erase journal overwrite cut short.
    EraseJournalOverwriteCutShort,
    /// Erase journal overwrite larger than a record.
    EraseJournalOverwriteLargerThanRecord,
    /// Erase journal overwrite past the largest offset.
    EraseJournalOverwritePastLargestOffset,
    /// Record cut short.
    RecordCutShort,
    /// Impossible record length.
    ImpossibleRecordLength,
    /// Record checksum mismatch.
    RecordChecksumMismatch,
    /// Bytes left over after the record body.
    BytesLeftOverAfterRecordBody,
    /// Record body cut short.
    RecordBodyCutShort,
    /// Reserved bits set.
    ReservedBitsSet,
    /// Erased flag on a record without content.
    ErasedFlagOnRecordWithoutContent,
    /// Label is not UTF-8.
    LabelNotUtf8,
    /// Unknown recall mode.
    UnknownRecallMode,
    /// Unknown removal.
    UnknownRemoval,
    /// A member record names no role there is.
    UnknownRole,
    /// A member record does not name the member that wrote it.
    MemberRecordWithoutAuthor,
    /// An agent's own log holds a record of a space (authored, or a member record).
    SpaceRecordInAnAgentLog,
    /// A space's log holds a change that names no author.
    SpaceRecordWithoutAuthor,
    /// A space's record was written by an agent whose role did not allow it then.
    AuthorWithoutTheRole,
    /// A space's log holds a shared node, which only an agent's log may hold.
    SharedNodeInASpace,
    /// A shared node's id is not the next id of the log.
    SharedNodeIdOutOfOrder,
    /// An agent holds a shared node of a space the catalog does not list.
    SharedNodeOfUnknownSpace,
    /// Unknown record kind.
    UnknownRecordKind,
    /// Legs cut short.
    LegsCutShort,
    /// Content cut short.
    ContentCutShort,
    /// Tracked parents empty, more than a leg may hold, repeated or out of order.
    TrackedParentsMalformed,
    /// A tracked parent is missing from a leg of its memory.
    TrackedParentNotInEveryLeg,
    /// A snapshot's shared nodes are not exactly the shared nodes of its graph, or not in order.
    SnapshotSharedNodesDoNotMatchGraph,
    /// The ids of a recall of several: none, cut short, not strictly ascending, or not each in
    /// its shortest form.
    RecalledIdsMalformed,
    /// Erased content padded with bytes other than zeros.
    ErasedContentPaddingNotZero,
    /// Segment header cut short.
    SegmentHeaderCutShort,
    /// Segment header checksum mismatch.
    SegmentHeaderChecksumMismatch,
    /// Not a segment file.
    NotASegmentFile,
    /// Unexpected segment header layout.
    UnexpectedSegmentHeaderLayout,
    /// Snapshot cut short.
    SnapshotCutShort,
    /// Snapshot body shorter than its counts.
    SnapshotBodyShorterThanCounts,
    /// Snapshot body longer than its counts.
    SnapshotBodyLongerThanCounts,
    /// Snapshot unreadable.
    SnapshotUnreadable,
    /// Snapshot header checksum mismatch.
    SnapshotHeaderChecksumMismatch,
    /// Not a snapshot of this format version.
    SnapshotOfAnotherFormatVersion,
    /// Snapshot of another layout.
    SnapshotOfAnotherLayout,
    /// Reserved snapshot bytes set.
    ReservedSnapshotBytesSet,
    /// Snapshot counts impossibly large.
    SnapshotCountsImpossiblyLarge,
    /// Snapshot too large for this machine.
    SnapshotTooLargeForThisMachine,
    /// Snapshot body checksum mismatch.
    SnapshotBodyChecksumMismatch,
    /// Segment file missing.
    SegmentFileMissing,
    /// Segment header belongs elsewhere in the log.
    SegmentHeaderBelongsElsewhere,
    /// Segment file missing after a seal.
    SegmentFileMissingAfterSeal,
    /// Log ends before the snapshot's point: committed records are missing.
    LogEndsBeforeSnapshotPoint,
    /// Active segment ends within the space its writes keep free: the file was cut.
    ActiveSegmentCutInsideWriteMargin,
    /// Sealed segment does not end with its seal.
    SealedSegmentDoesNotEndWithSeal,
    /// Damaged record before a commit marker.
    DamagedRecordBeforeCommitMarker,
    /// Lot id out of order.
    LotIdOutOfOrder,
    /// Memory id out of order.
    MemoryIdOutOfOrder,
    /// Memory without a leg.
    MemoryWithoutLeg,
    /// Memory built on a dead or unknown parent.
    MemoryOnDeadOrUnknownParent,
    /// Memory with an empty leg.
    MemoryWithEmptyLeg,
    /// Recall of an unknown id.
    RecallOfUnknownId,
    /// Vector of a node that is unknown or was recalled before it.
    VectorOfDeadOrUnknownNode,
    /// Vector whose bytes are not a whole number of f32 numbers, or hold no number.
    VectorBytesNotNumbers,
    /// Vector of another dimension than the other alive vectors of the agent.
    VectorDimensionDiffers,
    /// Record belongs to another agent or segment.
    RecordBelongsElsewhere,
    /// Record is not a lot or memory.
    RecordNotLotOrMemory,
    /// Record holds another id.
    RecordHoldsAnotherId,
    /// Erased content is back on disk.
    ErasedContentBackOnDisk,
    /// Content does not match its digest.
    ContentDoesNotMatchDigest,
    /// Record outside its write.
    RecordOutsideWrite,
    /// A redaction in place would change more than the frame and the text.
    RedactionChangesMoreThanFrameAndText,
    /// No commit marker after the record.
    NoCommitMarkerAfterRecord,
    /// Erase journal overwrite past the end of its segment.
    EraseJournalOverwritePastSegmentEnd,
    /// Record is not inside a committed write.
    RecordNotInsideCommittedWrite,
    /// Write too large.
    WriteTooLarge,
    /// Commit marker does not match its batch.
    CommitMarkerDoesNotMatchBatch,
    /// Erase journal of another agent.
    EraseJournalOfAnotherAgent,
    /// Erase journal names a segment that does not exist.
    EraseJournalNamesMissingSegment,
    /// Uncommitted bytes in a segment being rewritten.
    UncommittedBytesInRewrittenSegment,
    /// Snapshot belongs to another agent or segment.
    SnapshotBelongsElsewhere,
    /// Snapshot asks to erase text the log does not show erased.
    SnapshotErasesTextLogDoesNotErase,
    /// Snapshot segment cannot be opened.
    SnapshotSegmentCannotBeOpened,
    /// Snapshot segment cannot be measured.
    SnapshotSegmentCannotBeMeasured,
    /// Snapshot point lies outside its segment.
    SnapshotPointLiesOutsideSegment,
    /// Snapshot segment header unreadable.
    SnapshotSegmentHeaderUnreadable,
    /// Snapshot does not match the segment it starts.
    SnapshotDoesNotMatchSegmentItStarts,
    /// Snapshot point inside the header.
    SnapshotPointInsideHeader,
    /// Snapshot commit marker unreadable.
    SnapshotCommitMarkerUnreadable,
    /// Snapshot name holds no plain file (a folder, a link, or another kind of entry).
    SnapshotNotAPlainFile,
    /// No commit marker at the snapshot point.
    NoCommitMarkerAtSnapshotPoint,
    /// Snapshot does not match the hash chain at its point.
    SnapshotDiffersFromHashChain,
    /// Uncommitted bytes after the last commit marker.
    UncommittedBytesAfterLastCommit,
    /// Segment seal out of place.
    SegmentSealOutOfPlace,
    /// Log differs from the state it was opened with.
    LogDiffersFromOpenedState,
    /// The graph in memory differs from the log.
    GraphDiffersFromLog,
    /// Snapshot child rows do not match its node count.
    SnapshotChildRowsDoNotMatchNodeCount,
    /// Snapshot child rows do not match its edge count.
    SnapshotChildRowsDoNotMatchEdgeCount,
    /// Snapshot child rows out of order.
    SnapshotChildRowsOutOfOrder,
    /// Snapshot names a child that is not a node.
    SnapshotNamesChildNotNode,
    /// Snapshot leg ends do not match its node count.
    SnapshotLegEndsDoNotMatchNodeCount,
    /// Snapshot leg ends out of order or not at the last word.
    SnapshotLegEndsOutOfOrder,
    /// Snapshot names a parent that is not a node.
    SnapshotNamesParentNotNode,
    /// Snapshot holds too many nodes.
    SnapshotHoldsTooManyNodes,
    /// Snapshot node has unknown flags.
    SnapshotNodeHasUnknownFlags,
    /// Record after the seal.
    RecordAfterSeal,
    /// Seal is not alone in its batch or names the wrong segment.
    SealNotAloneOrWrongSegment,
    /// Record sequence out of order.
    RecordSequenceOutOfOrder,
    /// Catalog missing while agent folders exist.
    CatalogMissingWhileAgentFoldersExist,
    /// Key file header names another kind, slot size or agent.
    KeyFileHeaderMismatch,
    /// Key file header checksum mismatch.
    KeyFileHeaderChecksumMismatch,
    /// Key file cut short.
    KeyFileCutShort,
    /// Key file missing (the key table or the epoch file of an encrypted agent).
    KeyFileMissing,
    /// Key slot checksum mismatch.
    KeySlotChecksumMismatch,
    /// Epoch slot checksum mismatch.
    EpochSlotChecksumMismatch,
    /// Epoch key does not open with this token.
    EpochKeyDoesNotOpen,
    /// Record sealed under an epoch the agent never had.
    EpochOfRecordUnknown,
    /// Sealed content malformed.
    SealedContentMalformed,
    /// Sealed content does not open (changed, or moved from elsewhere).
    SealedContentDoesNotOpen,
    /// Key slot does not open (changed, or moved from elsewhere).
    KeySlotDoesNotOpen,
    /// Key missing for a node whose content is readable.
    KeyMissingForReadableNode,
    /// Key still present for an erased node.
    KeyKeptForErasedNode,
    /// Sealed record in a plaintext agent.
    SealedRecordInPlaintextAgent,
    /// Plaintext record in an encrypted agent.
    PlaintextRecordInEncryptedAgent,
    /// Sealed lot with a label in the clear.
    SealedLotWithLabelInTheClear,
    /// Replica head cut short.
    ReplicaHeadCutShort,
    /// Replica head checksum mismatch.
    ReplicaHeadChecksumMismatch,
    /// Not a replica head of this format version.
    NotAReplicaHead,
    /// Reserved replica head bytes set.
    ReservedReplicaHeadBytesSet,
    /// Replica head lists too many pieces.
    ReplicaHeadListsTooManyPieces,
    /// Replica head's agent name is empty or too long.
    ReplicaHeadNameOutOfRange,
    /// Bytes left over after the replica head's pieces.
    BytesLeftOverAfterReplicaHead,
    /// Replica piece names no file of an agent.
    ReplicaPieceOfNoAgentFile,
    /// Replica piece is empty or ends before it starts.
    ReplicaPieceEmptyOrBackwards,
    /// Replica pieces of a file leave a gap or overlap.
    ReplicaPiecesNotContiguous,
    /// Replica piece missing from the object store.
    ReplicaPieceMissing,
    /// Replica piece differs from the digest its head keeps.
    ReplicaPieceDigestMismatch,
    /// Replica head holds less history than was already applied.
    ReplicaHeadWentBackwards,
    /// Replica head names another agent than the one it replicates.
    ReplicaHeadOfAnotherAgent,
    /// Replica no longer extends the history already applied.
    ReplicaHistoryDiverged,
    /// Replica's files do not verify to its head's fingerprint.
    ReplicaDoesNotVerifyToItsHead,
    /// Replica head grants a token hash that another agent holds.
    ReplicaHeadGrantsAnotherAgentsToken,
    /// Replica head claims the number of another agent.
    ReplicaHeadClaimsAnotherAgentsNumber,
    /// Replica head's encrypted flag disagrees with the key files it lists.
    ReplicaHeadFlagsDisagreeWithItsFiles,
    /// Two agents of the catalog have one token hash.
    CatalogTokenHashHeldTwice,
}

impl CorruptReason {
    /// The reason in words, as messages print it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            CorruptReason::ReplicaHeadCutShort => "replica head cut short",
            CorruptReason::ReplicaHeadChecksumMismatch => "replica head checksum mismatch",
            CorruptReason::NotAReplicaHead => "not a replica head of this format version",
            CorruptReason::ReservedReplicaHeadBytesSet => "reserved replica head bytes set",
            CorruptReason::ReplicaHeadListsTooManyPieces => "replica head lists too many pieces",
            CorruptReason::ReplicaHeadNameOutOfRange => "replica head's agent name is empty or too long",
            CorruptReason::BytesLeftOverAfterReplicaHead => "bytes left over after the replica head's pieces",
            CorruptReason::ReplicaPieceOfNoAgentFile => "replica piece names no file of an agent",
            CorruptReason::ReplicaPieceEmptyOrBackwards => "replica piece is empty or ends before it starts",
            CorruptReason::ReplicaPiecesNotContiguous => "replica pieces of a file leave a gap or overlap",
            CorruptReason::ReplicaPieceMissing => "replica piece missing from the object store",
            CorruptReason::ReplicaPieceDigestMismatch => "replica piece differs from the digest its head keeps",
            CorruptReason::ReplicaHeadWentBackwards => "replica head holds less history than was already applied",
            CorruptReason::ReplicaHeadOfAnotherAgent => "replica head names another agent than the one it replicates",
            CorruptReason::ReplicaHistoryDiverged => "replica no longer extends the history already applied",
            CorruptReason::ReplicaDoesNotVerifyToItsHead => "replica's files do not verify to its head's fingerprint",
            CorruptReason::ReplicaHeadGrantsAnotherAgentsToken => {
                "replica head grants a token that opens another agent (its token hash is another agent's)"
            }
            CorruptReason::ReplicaHeadClaimsAnotherAgentsNumber => "replica head claims the number of another agent",
            CorruptReason::ReplicaHeadFlagsDisagreeWithItsFiles => {
                "replica head's encrypted flag disagrees with the key files it lists"
            }
            CorruptReason::CatalogTokenHashHeldTwice => "two agents of the catalog have one token hash",
            CorruptReason::CatalogCutShort => "catalog cut short",
            CorruptReason::CatalogChecksumMismatch => "catalog checksum mismatch",
            CorruptReason::BadMagic => "not a cheesedb file (bad magic)",
            CorruptReason::UnsupportedFormatVersion => "unsupported format version",
            CorruptReason::NotACatalogFile => "not a catalog file",
            CorruptReason::CatalogListsTooManyAgents => "catalog lists too many agents",
            CorruptReason::AgentNameNotUtf8 => "agent name is not UTF-8",
            CorruptReason::AgentNumberOutOfRange => "agent number out of range",
            CorruptReason::BytesLeftOverAfterCatalog => "bytes left over after the catalog",
            CorruptReason::EraseJournalCutShort => "erase journal cut short",
            CorruptReason::EraseJournalChecksumMismatch => "erase journal checksum mismatch",
            CorruptReason::EraseJournalOfAnotherFormatVersion => "not an erase journal of this format version",
            CorruptReason::ReservedEraseJournalBytesSet => "reserved erase journal bytes set",
            CorruptReason::BytesLeftOverAfterEraseJournal => "bytes left over after the erase journal's overwrites",
            CorruptReason::EraseJournalOverwriteCutShort => "erase journal overwrite cut short",
            CorruptReason::EraseJournalOverwriteLargerThanRecord => "erase journal overwrite larger than a record",
            CorruptReason::EraseJournalOverwritePastLargestOffset => "erase journal overwrite past the largest offset",
            CorruptReason::RecordCutShort => "record cut short",
            CorruptReason::ImpossibleRecordLength => "impossible record length",
            CorruptReason::RecordChecksumMismatch => "record checksum mismatch",
            CorruptReason::BytesLeftOverAfterRecordBody => "bytes left over after the record body",
            CorruptReason::RecordBodyCutShort => "record body cut short",
            CorruptReason::ReservedBitsSet => "reserved bits set",
            CorruptReason::ErasedFlagOnRecordWithoutContent => "erased flag on a record without content",
            CorruptReason::LabelNotUtf8 => "label is not UTF-8",
            CorruptReason::UnknownRecallMode => "unknown recall mode",
            CorruptReason::UnknownRemoval => "unknown removal",
            CorruptReason::UnknownRole => "unknown role",
            CorruptReason::MemberRecordWithoutAuthor => "a member record without its author",
            CorruptReason::SpaceRecordInAnAgentLog => "a space's record in an agent's log",
            CorruptReason::SpaceRecordWithoutAuthor => "a space's record without its author",
            CorruptReason::AuthorWithoutTheRole => "a space's record by an agent whose role did not allow it",
            CorruptReason::SharedNodeInASpace => "a shared node in a space's log",
            CorruptReason::SharedNodeIdOutOfOrder => "shared node id out of order",
            CorruptReason::SharedNodeOfUnknownSpace => "a shared node of a space the catalog does not list",
            CorruptReason::UnknownRecordKind => "unknown record kind",
            CorruptReason::LegsCutShort => "legs cut short",
            CorruptReason::ContentCutShort => "content cut short",
            CorruptReason::TrackedParentsMalformed => {
                "tracked parents empty, more than a leg may hold, repeated or out of order"
            }
            CorruptReason::TrackedParentNotInEveryLeg => "a tracked parent is missing from a leg of its memory",
            CorruptReason::SnapshotSharedNodesDoNotMatchGraph => {
                "a snapshot's shared nodes are not those of its graph, or out of order"
            }
            CorruptReason::RecalledIdsMalformed => {
                "the ids of a recall of several are none, cut short, out of order or not in shortest form"
            }
            CorruptReason::ErasedContentPaddingNotZero => "erased content padded with bytes other than zeros",
            CorruptReason::SegmentHeaderCutShort => "segment header cut short",
            CorruptReason::SegmentHeaderChecksumMismatch => "segment header checksum mismatch",
            CorruptReason::NotASegmentFile => "not a segment file",
            CorruptReason::UnexpectedSegmentHeaderLayout => "unexpected segment header layout",
            CorruptReason::SnapshotCutShort => "snapshot cut short",
            CorruptReason::SnapshotBodyShorterThanCounts => "snapshot body shorter than its counts",
            CorruptReason::SnapshotBodyLongerThanCounts => "snapshot body longer than its counts",
            CorruptReason::SnapshotUnreadable => "snapshot unreadable",
            CorruptReason::SnapshotHeaderChecksumMismatch => "snapshot header checksum mismatch",
            CorruptReason::SnapshotOfAnotherFormatVersion => "not a snapshot of this format version",
            CorruptReason::SnapshotOfAnotherLayout => "snapshot of another layout",
            CorruptReason::ReservedSnapshotBytesSet => "reserved snapshot bytes set",
            CorruptReason::SnapshotCountsImpossiblyLarge => "snapshot counts impossibly large",
            CorruptReason::SnapshotTooLargeForThisMachine => "snapshot too large for this machine",
            CorruptReason::SnapshotBodyChecksumMismatch => "snapshot body checksum mismatch",
            CorruptReason::SegmentFileMissing => "segment file missing",
            CorruptReason::SegmentHeaderBelongsElsewhere => "segment header belongs elsewhere in the log",
            CorruptReason::SegmentFileMissingAfterSeal => "segment file missing after a seal",
            CorruptReason::LogEndsBeforeSnapshotPoint => {
                "log ends before the snapshot's point: committed records are missing"
            }
            CorruptReason::ActiveSegmentCutInsideWriteMargin => {
                "active segment ends within the space its writes keep free: the file was cut"
            }
            CorruptReason::SealedSegmentDoesNotEndWithSeal => "sealed segment does not end with its seal",
            CorruptReason::DamagedRecordBeforeCommitMarker => "damaged record before a commit marker",
            CorruptReason::LotIdOutOfOrder => "lot id out of order",
            CorruptReason::MemoryIdOutOfOrder => "memory id out of order",
            CorruptReason::MemoryWithoutLeg => "memory without a leg",
            CorruptReason::MemoryOnDeadOrUnknownParent => "memory built on a dead or unknown parent",
            CorruptReason::MemoryWithEmptyLeg => "memory with an empty leg",
            CorruptReason::RecallOfUnknownId => "recall of an unknown id",
            CorruptReason::VectorOfDeadOrUnknownNode => "vector of a dead or unknown node",
            CorruptReason::VectorBytesNotNumbers => "vector bytes are not a whole number of numbers",
            CorruptReason::VectorDimensionDiffers => "vector dimension differs from the other alive vectors",
            CorruptReason::RecordBelongsElsewhere => "record belongs to another agent or segment",
            CorruptReason::RecordNotLotOrMemory => "record is not a lot or memory",
            CorruptReason::RecordHoldsAnotherId => "record holds another id",
            CorruptReason::ErasedContentBackOnDisk => "erased content is back on disk",
            CorruptReason::ContentDoesNotMatchDigest => "content does not match its digest",
            CorruptReason::RecordOutsideWrite => "record outside its write",
            CorruptReason::RedactionChangesMoreThanFrameAndText => {
                "a redaction in place would change more than the frame and the text"
            }
            CorruptReason::NoCommitMarkerAfterRecord => "no commit marker after the record",
            CorruptReason::EraseJournalOverwritePastSegmentEnd => "erase journal overwrite past the end of its segment",
            CorruptReason::RecordNotInsideCommittedWrite => "record is not inside a committed write",
            CorruptReason::WriteTooLarge => "write too large",
            CorruptReason::CommitMarkerDoesNotMatchBatch => "commit marker does not match its batch",
            CorruptReason::EraseJournalOfAnotherAgent => "erase journal of another agent",
            CorruptReason::EraseJournalNamesMissingSegment => "erase journal names a segment that does not exist",
            CorruptReason::UncommittedBytesInRewrittenSegment => "uncommitted bytes in a segment being rewritten",
            CorruptReason::SnapshotBelongsElsewhere => "snapshot belongs to another agent or segment",
            CorruptReason::SnapshotErasesTextLogDoesNotErase => {
                "snapshot asks to erase text the log does not show erased"
            }
            CorruptReason::SnapshotSegmentCannotBeOpened => "snapshot segment cannot be opened",
            CorruptReason::SnapshotSegmentCannotBeMeasured => "snapshot segment cannot be measured",
            CorruptReason::SnapshotPointLiesOutsideSegment => "snapshot point lies outside its segment",
            CorruptReason::SnapshotSegmentHeaderUnreadable => "snapshot segment header unreadable",
            CorruptReason::SnapshotDoesNotMatchSegmentItStarts => "snapshot does not match the segment it starts",
            CorruptReason::SnapshotPointInsideHeader => "snapshot point inside the header",
            CorruptReason::SnapshotCommitMarkerUnreadable => "snapshot commit marker unreadable",
            CorruptReason::SnapshotNotAPlainFile => {
                "snapshot is not a plain file (a folder, a link or another entry), so left alone"
            }
            CorruptReason::NoCommitMarkerAtSnapshotPoint => "no commit marker at the snapshot point",
            CorruptReason::SnapshotDiffersFromHashChain => "snapshot does not match the hash chain at its point",
            CorruptReason::UncommittedBytesAfterLastCommit => "uncommitted bytes after the last commit marker",
            CorruptReason::SegmentSealOutOfPlace => "segment seal out of place",
            CorruptReason::LogDiffersFromOpenedState => "log differs from the state it was opened with",
            CorruptReason::GraphDiffersFromLog => "the graph in memory differs from the log",
            CorruptReason::SnapshotChildRowsDoNotMatchNodeCount => "snapshot child rows do not match its node count",
            CorruptReason::SnapshotChildRowsDoNotMatchEdgeCount => "snapshot child rows do not match its edge count",
            CorruptReason::SnapshotChildRowsOutOfOrder => "snapshot child rows out of order",
            CorruptReason::SnapshotNamesChildNotNode => "snapshot names a child that is not a node",
            CorruptReason::SnapshotLegEndsDoNotMatchNodeCount => "snapshot leg ends do not match its node count",
            CorruptReason::SnapshotLegEndsOutOfOrder => "snapshot leg ends out of order or not at the last word",
            CorruptReason::SnapshotNamesParentNotNode => "snapshot names a parent that is not a node",
            CorruptReason::SnapshotHoldsTooManyNodes => "snapshot holds too many nodes",
            CorruptReason::SnapshotNodeHasUnknownFlags => "snapshot node has unknown flags",
            CorruptReason::RecordAfterSeal => "record after the seal",
            CorruptReason::SealNotAloneOrWrongSegment => "seal is not alone in its batch or names the wrong segment",
            CorruptReason::RecordSequenceOutOfOrder => "record sequence out of order",
            CorruptReason::CatalogMissingWhileAgentFoldersExist => "catalog missing while agent folders exist",
            CorruptReason::KeyFileHeaderMismatch => "key file header names another kind, slot size or agent",
            CorruptReason::KeyFileHeaderChecksumMismatch => "key file header checksum mismatch",
            CorruptReason::KeyFileCutShort => "key file cut short",
            CorruptReason::KeyFileMissing => "key file missing",
            CorruptReason::KeySlotChecksumMismatch => "key slot checksum mismatch",
            CorruptReason::EpochSlotChecksumMismatch => "epoch slot checksum mismatch",
            CorruptReason::EpochKeyDoesNotOpen => "epoch key does not open with this token",
            CorruptReason::EpochOfRecordUnknown => "record sealed under an epoch the agent never had",
            CorruptReason::SealedContentMalformed => "sealed content malformed",
            CorruptReason::SealedContentDoesNotOpen => {
                "sealed content does not open (changed, or moved from elsewhere)"
            }
            CorruptReason::KeySlotDoesNotOpen => "key slot does not open (changed, or moved from elsewhere)",
            CorruptReason::KeyMissingForReadableNode => "key missing for a node whose content is readable",
            CorruptReason::KeyKeptForErasedNode => "key still present for an erased node",
            CorruptReason::SealedRecordInPlaintextAgent => "sealed record in a plaintext agent",
            CorruptReason::PlaintextRecordInEncryptedAgent => "plaintext record in an encrypted agent",
            CorruptReason::SealedLotWithLabelInTheClear => "sealed lot with a label in the clear",
        }
    }
}

impl fmt::Display for CorruptReason {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}

impl core::error::Error for CorruptReason {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_corrupt_error_names_its_reason_in_the_words_of_the_check() {
        let error =
            Error::Corrupt { file: "catalog".into(), offset: 12, reason: CorruptReason::CatalogChecksumMismatch };
        assert_eq!(alloc::format!("{error}"), "corrupt data in catalog at offset 12: catalog checksum mismatch");
        assert_eq!(CorruptReason::BadMagic.describe(), "not a cheesedb file (bad magic)");
    }
}
