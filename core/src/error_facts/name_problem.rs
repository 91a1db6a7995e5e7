//! [`NameProblem`]: why a name or a named value was refused.

use core::fmt;

/// Why a label, an agent name, or a value written as text (a fingerprint, a replica location)
/// was refused ([`Error::InvalidName`]). New problems may be added; match with a wildcard arm.
///
/// [`Error::InvalidName`]: crate::Error::InvalidName
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NameProblem {
    /// An agent name is empty.
    AgentNameEmpty,
    /// An agent name starts as tokens do, so a token passed as a name could be mistaken for one.
    AgentNameLikeToken,
    /// A space name holds `:` or `,`, which name a space's node in a leg (`team:3,12`).
    SpaceNameWithSeparator,
    /// A lot label is empty.
    LotLabelEmpty,
    /// A fingerprint is not written as `<records>-<64 hex digits>`.
    FingerprintMalformed,
    /// A fingerprint was given without the agent it belongs to.
    FingerprintWithoutAgent,
    /// A replica location is not written as `s3://BUCKET` or `s3://BUCKET/PREFIX`.
    ReplicaLocationMalformed,
}

impl NameProblem {
    /// The problem in words, as messages print it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            NameProblem::AgentNameEmpty => "an agent name must not be empty",
            NameProblem::AgentNameLikeToken => "an agent name must not start with \"cheesedb-\", as tokens do",
            NameProblem::SpaceNameWithSeparator => "a space name must not hold ':' or ',', which legs use",
            NameProblem::LotLabelEmpty => "a lot label must not be empty",
            NameProblem::FingerprintMalformed => "a fingerprint is <records>-<64 hex digits>",
            NameProblem::FingerprintWithoutAgent => "a fingerprint belongs to one agent: name it too",
            NameProblem::ReplicaLocationMalformed => "a replica location is s3://BUCKET or s3://BUCKET/PREFIX",
        }
    }
}

impl fmt::Display for NameProblem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}
