//! [`FenceReason`]: why a store stopped replicating an agent.

use core::fmt;

/// What a store found in the object store that made it stop replicating an agent
/// ([`Error::ReplicaFenced`]). New reasons may be added; match with a wildcard arm.
///
/// [`Error::ReplicaFenced`]: crate::Error::ReplicaFenced
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FenceReason {
    /// The place holds the replica of another agent of the same name.
    AnotherAgentOfThatName,
    /// A piece this store was writing was written by someone else meanwhile.
    PieceWrittenBySomeoneElse,
    /// The head this store wrote last was replaced by another store.
    HeadReplaced,
    /// The place holds a history that this store's log does not contain.
    HistoryNotInLog,
}

impl FenceReason {
    /// The reason in words, as messages print it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            FenceReason::AnotherAgentOfThatName => "the object store holds another agent of that name",
            FenceReason::PieceWrittenBySomeoneElse => "a piece this store was writing was written by someone else",
            FenceReason::HeadReplaced => "the head was replaced by another store",
            FenceReason::HistoryNotInLog => "the object store holds a history this store's log does not contain",
        }
    }
}

impl fmt::Display for FenceReason {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}
