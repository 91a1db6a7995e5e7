//! [`Limit`]: what an argument or a file passed the limit of.

use core::fmt;

/// What was larger than the engine allows ([`Error::LimitExceeded`]); the sizes are in the error.
/// New limits may be added; match with a wildcard arm.
///
/// [`Error::LimitExceeded`]: crate::Error::LimitExceeded
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Limit {
    /// The length of an agent name, in bytes.
    AgentNameBytes,
    /// The agents of one store.
    AgentsPerStore,
    /// The spaces of one store.
    SpacesPerStore,
    /// The members of one space.
    MembersPerSpace,
    /// The bytes one batch writes.
    BatchBytes,
    /// The content of one lot or memory, in bytes.
    ContentBytes,
    /// The length of a lot label, in bytes.
    LabelBytes,
    /// The legs of one memory.
    LegsPerMemory,
    /// The parents of one leg.
    ParentsPerLeg,
    /// The lots and memories one batch writes.
    RecordsPerBatch,
    /// The numbers of one vector (its dimension).
    VectorDimension,
    /// The lots and memories one agent ever holds.
    NodesPerAgent,
    /// The segment files of one agent.
    SegmentsPerAgent,
    /// The size of one segment file, in bytes.
    SegmentBytes,
    /// The zeros written ahead of the active segment's writes, in bytes.
    PreallocateBytes,
    /// The bytes of a file read into memory at once.
    ReadIntoMemoryBytes,
    /// The ids read since the last write (the read set).
    ReadSetIds,
    /// The parents of one leg once the read set is added to it.
    ParentsPerLegWithReadSet,
    /// The parents of one memory that read tracking added.
    TrackedParentsPerMemory,
}

impl Limit {
    /// What the limit is about, in words, as messages print it ("content size in bytes is 20,
    /// more than the limit of 10").
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Limit::AgentNameBytes => "agent name length in bytes",
            Limit::AgentsPerStore => "agents in one store",
            Limit::SpacesPerStore => "spaces in one store",
            Limit::MembersPerSpace => "members of one space",
            Limit::BatchBytes => "batch size in bytes",
            Limit::ContentBytes => "content size in bytes",
            Limit::LabelBytes => "label length in bytes",
            Limit::LegsPerMemory => "legs of one memory",
            Limit::ParentsPerLeg => "parents of one leg",
            Limit::RecordsPerBatch => "records in one batch",
            Limit::VectorDimension => "numbers in a vector",
            Limit::NodesPerAgent => "nodes of one agent",
            Limit::SegmentsPerAgent => "segments of one agent",
            Limit::SegmentBytes => "segment size",
            Limit::PreallocateBytes => "preallocation in bytes",
            Limit::ReadIntoMemoryBytes => "bytes read into memory at once",
            Limit::ReadSetIds => "ids read since the last write (the read set)",
            Limit::ParentsPerLegWithReadSet => "parents of one leg with the read set added",
            Limit::TrackedParentsPerMemory => "tracked parents of one memory",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}
