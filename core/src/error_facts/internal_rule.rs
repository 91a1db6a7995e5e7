//! [`InternalRule`]: a rule the engine keeps for itself.

use core::fmt;

/// A rule the engine keeps for itself, found broken ([`Error::Internal`]): a bug of cheesedb, not
/// of the caller or the disk. New rules may be added; match with a wildcard arm.
///
/// [`Error::Internal`]: crate::Error::Internal
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum InternalRule {
    /// The active segment is open while the agent is in use.
    ActiveSegmentOpenWhileInUse,
    /// A lot or memory that was written has an id.
    WrittenEntryHasId,
    /// Shared nodes are written only in an agent's own log, never in a space's.
    SharedNodesOnlyInAnAgent,
    /// A lot or memory collected into a batch has an id.
    CollectedWriteHasId,
    /// A committed batch answers every write that joined it.
    CommittedBatchAnswersEveryWrite,
    /// The search index exists once it was built.
    SearchIndexBuilt,
    /// Every segment has its part of the search index.
    EverySegmentIndexed,
    /// Every segment has an outcome of its check.
    EverySegmentChecked,
    /// A sealed segment is asked for only by a number the agent has.
    SealedSegmentNumberKnown,
    /// A segment offset fits in a `usize`.
    SegmentOffsetFitsInMemory,
    /// A segment offset fits in 32 bits.
    SegmentOffsetFitsIn32Bits,
    /// A segment number fits in 16 bits.
    SegmentNumberFitsIn16Bits,
    /// A count the limits bound fits in 32 bits.
    BoundedCountFitsIn32Bits,
    /// A byte count the limits bound fits in a `usize`.
    BoundedByteCountFitsInMemory,
    /// A node id is between 1 and the node limit.
    NodeIdWithinLimit,
    /// A memory's parents are older than it.
    ParentsOlderThanMemory,
    /// The walk that finds a node's trust ends with its start known.
    TrustWalkKnowsItsStart,
    /// The record of a lot is a lot.
    LotRecordIsLot,
    /// Only lots and memories make new nodes.
    OnlyLotsAndMemoriesAreNewNodes,
    /// Only records of the hash chain are copied.
    OnlyChainedRecordsCopied,
    /// Member records are written only to a space's log.
    MemberRecordsOnlyInASpace,
    /// A copied record keeps its place in the sequence.
    CopiedRecordKeepsSequence,
    /// A copy goes from a plaintext agent into a new encrypted one.
    CopyIntoNewEncryptedAgent,
    /// A copy seals with the new agent's keys.
    CopySealsWithNewKeys,
    /// A key is 32 bytes.
    KeyIs32Bytes,
    /// A nonce is 24 bytes.
    NonceIs24Bytes,
    /// A node id has a slot in the key table.
    NodeIdHasKeySlot,
    /// An epoch has a slot in the epoch file.
    EpochHasSlot,
    /// An open encrypted agent has a live epoch in force.
    LiveEpochInForce,
    /// Keys are destroyed only on encrypted agents.
    KeysDestroyedOnlyWhenEncrypted,
    /// The random bytes drawn for an entry start with a salt.
    RandomBytesStartWithSalt,
    /// The random bytes drawn for an entry hold a secret and a nonce.
    RandomBytesHoldSecretAndNonce,
    /// The random bytes drawn for an entry hold a nonce.
    RandomBytesHoldNonce,
    /// The pool of random bytes holds the bytes it hands out.
    RandomPoolHoldsItsBytes,
    /// No thread panics while it holds a lock of the store.
    NoPanicWhileLocked,
    /// A request of the protocol encodes.
    RequestEncodes,
    /// A response of the protocol encodes.
    ResponseEncodes,
    /// A request the memory server sorts as a write is one.
    RequestSortedAsWriteIsOne,
    /// A request the memory server sorts as a read is one.
    RequestSortedAsReadIsOne,
    /// A batch's staging is of the same kind as its agent (open here or served).
    BatchStagingMatchesAgent,
    /// Every write of a group of a space's members has its author.
    EveryGroupedWriteHasAnAuthor,
    /// The ids of a recall of several are strictly ascending and not too many for a record.
    RecalledIdsAscending,
    /// Every member's part of a space's recall was applied or failed, none lost on the way.
    MemberPartsAllApplied,
}

impl InternalRule {
    /// The rule in words, as messages print it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            InternalRule::ActiveSegmentOpenWhileInUse => "the active segment is open while the agent is in use",
            InternalRule::WrittenEntryHasId => "a written entry has an id",
            InternalRule::SharedNodesOnlyInAnAgent => "shared nodes are written only in an agent's own log",
            InternalRule::CollectedWriteHasId => "a lot or memory collected without an id",
            InternalRule::CommittedBatchAnswersEveryWrite => "a committed batch answers every write",
            InternalRule::SearchIndexBuilt => "the search index exists once built",
            InternalRule::EverySegmentIndexed => "every segment has its part of the search index",
            InternalRule::EverySegmentChecked => "every segment has a checked outcome",
            InternalRule::SealedSegmentNumberKnown => "a sealed segment is asked for only by a number the agent has",
            InternalRule::SegmentOffsetFitsInMemory => "a segment offset fits in memory",
            InternalRule::SegmentOffsetFitsIn32Bits => "a segment offset fits in 32 bits",
            InternalRule::SegmentNumberFitsIn16Bits => "a segment number fits in 16 bits",
            InternalRule::BoundedCountFitsIn32Bits => "a bounded count fits in 32 bits",
            InternalRule::BoundedByteCountFitsInMemory => "a bounded byte count fits in memory",
            InternalRule::NodeIdWithinLimit => "a node id is between 1 and the node limit",
            InternalRule::ParentsOlderThanMemory => "a memory's parents are older than it",
            InternalRule::TrustWalkKnowsItsStart => "the trust walk ends with its start known",
            InternalRule::LotRecordIsLot => "a lot's record is a lot",
            InternalRule::OnlyLotsAndMemoriesAreNewNodes => "only lots and memories are new nodes",
            InternalRule::OnlyChainedRecordsCopied => "only chained records are copied",
            InternalRule::MemberRecordsOnlyInASpace => "member records are written only to a space's log",
            InternalRule::CopiedRecordKeepsSequence => "a copied record keeps its sequence",
            InternalRule::CopyIntoNewEncryptedAgent => "a copy goes from a plaintext agent into a new encrypted one",
            InternalRule::CopySealsWithNewKeys => "a copy seals with the new agent's keys",
            InternalRule::KeyIs32Bytes => "a key is 32 bytes",
            InternalRule::NonceIs24Bytes => "a nonce is 24 bytes",
            InternalRule::NodeIdHasKeySlot => "a node id has a key slot",
            InternalRule::EpochHasSlot => "an epoch has a slot",
            InternalRule::LiveEpochInForce => "an open encrypted agent has a live epoch in force",
            InternalRule::KeysDestroyedOnlyWhenEncrypted => "keys are destroyed on encrypted agents",
            InternalRule::RandomBytesStartWithSalt => "an entry's random bytes start with a salt",
            InternalRule::RandomBytesHoldSecretAndNonce => "an entry's random bytes hold a secret and a nonce",
            InternalRule::RandomBytesHoldNonce => "an entry's random bytes hold a nonce",
            InternalRule::RandomPoolHoldsItsBytes => "the random pool holds the bytes it hands out",
            InternalRule::NoPanicWhileLocked => "no thread panics while it holds a lock of the store",
            InternalRule::RequestEncodes => "a request encodes",
            InternalRule::ResponseEncodes => "a response encodes",
            InternalRule::RequestSortedAsWriteIsOne => "a request the server sorts as a write is one",
            InternalRule::RequestSortedAsReadIsOne => "a request the server sorts as a read is one",
            InternalRule::BatchStagingMatchesAgent => "a batch's staging matches its agent",
            InternalRule::EveryGroupedWriteHasAnAuthor => "every grouped write of a space has its author",
            InternalRule::RecalledIdsAscending => "the ids of a recall of several are ascending and fit a record",
            InternalRule::MemberPartsAllApplied => "every member's part of a space's recall has an outcome",
        }
    }
}

impl fmt::Display for InternalRule {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}
