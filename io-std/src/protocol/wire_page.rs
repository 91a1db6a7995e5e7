//! A page of search hits as the protocol carries it ([`SearchPage`]'s parts), each with its
//! way back into the engine's type.

use cheesedb_core::{Found, FoundKind, Id, Ranking};
use serde::{Deserialize, Serialize};

use super::wire::WireTrust;
use cheesedb_core::Error;

/// One hit of a page ([`Found`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireFound {
    /// Its id.
    pub id: u64,
    /// How well it matched.
    pub score: f32,
    /// Lot or memory.
    pub kind: WireFoundKind,
    /// Its content.
    #[serde(with = "super::bytes")]
    pub content: Vec<u8>,
    /// Its trust level under the server's rules.
    pub trust: WireTrust,
    /// Whether it has a vector.
    pub has_vector: bool,
}

/// [`FoundKind`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireFoundKind {
    /// A lot, with its label.
    Lot {
        /// Its label.
        label: String,
    },
    /// A memory, with the parents read tracking gave it.
    Memory {
        /// Their ids, ascending.
        tracked_parents: Vec<u64>,
    },
}

/// [`Ranking`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireRanking {
    /// `Ranking::Keyword`.
    Keyword,
    /// `Ranking::Hybrid`.
    Hybrid,
    /// `Ranking::KeywordInstead`, with the error the vector got.
    KeywordInstead {
        /// Why the vector was not used.
        refused: Error,
    },
}

impl From<&Found> for WireFound {
    fn from(found: &Found) -> WireFound {
        let kind = match &found.kind {
            FoundKind::Lot { label } => WireFoundKind::Lot { label: label.clone() },
            FoundKind::Memory { tracked_parents } => {
                WireFoundKind::Memory { tracked_parents: tracked_parents.iter().map(|id| id.get()).collect() }
            }
        };
        WireFound {
            id: found.id.get(),
            score: found.score,
            kind,
            content: found.content.clone(),
            trust: found.trust.into(),
            has_vector: found.has_vector,
        }
    }
}

impl WireFound {
    /// The hit it carries.
    #[must_use]
    pub fn into_found(self) -> Found {
        let kind = match self.kind {
            WireFoundKind::Lot { label } => FoundKind::Lot { label },
            WireFoundKind::Memory { tracked_parents } => {
                FoundKind::Memory { tracked_parents: tracked_parents.into_iter().map(Id::from).collect() }
            }
        };
        Found::new(Id::from(self.id), self.score, kind, self.content, self.trust.into(), self.has_vector)
    }

    /// About how many bytes it takes in a frame: its content and label, and room for the rest.
    #[must_use]
    pub fn size_bytes(&self) -> usize {
        const FIXED_BYTES: usize = 64;
        const ID_BYTES_MAX: usize = 10;
        let kind = match &self.kind {
            WireFoundKind::Lot { label } => label.len(),
            WireFoundKind::Memory { tracked_parents } => tracked_parents.len() * ID_BYTES_MAX,
        };
        FIXED_BYTES + kind + self.content.len()
    }
}

impl From<&Ranking> for WireRanking {
    fn from(ranking: &Ranking) -> WireRanking {
        match ranking {
            Ranking::Keyword => WireRanking::Keyword,
            Ranking::Hybrid => WireRanking::Hybrid,
            Ranking::KeywordInstead { refused } => WireRanking::KeywordInstead { refused: refused.clone() },
        }
    }
}

impl WireRanking {
    /// The ranking it carries.
    #[must_use]
    pub fn into_ranking(self) -> Ranking {
        match self {
            WireRanking::Keyword => Ranking::Keyword,
            WireRanking::Hybrid => Ranking::Hybrid,
            WireRanking::KeywordInstead { refused } => Ranking::KeywordInstead { refused },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb_core::{Error, TrustLevel, VectorProblem};

    #[test]
    fn hits_and_rankings_come_back_as_they_went() {
        let lot = Found::new(
            Id::from(3),
            0.25,
            FoundKind::Lot { label: String::from("web_page") },
            b"rain".to_vec(),
            TrustLevel::Low,
            true,
        );
        let memory = Found::new(
            Id::from(9),
            -0.5,
            FoundKind::Memory { tracked_parents: vec![Id::from(1), Id::from(3)] },
            vec![0, 255],
            TrustLevel::High,
            false,
        );
        for found in [lot, memory] {
            let wire = WireFound::from(&found);
            let bytes = postcard::to_allocvec(&wire).unwrap();
            assert!(bytes.len() <= wire.size_bytes(), "{} bytes, said {}", bytes.len(), wire.size_bytes());
            assert_eq!(postcard::from_bytes::<WireFound>(&bytes).unwrap().into_found(), found);
        }
        let refused = Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected: 2, found: 3 } };
        let too_long = Error::LimitExceeded { what: cheesedb_core::Limit::VectorDimension, size: 9000, limit: 8192 };
        for ranking in [
            Ranking::Keyword,
            Ranking::Hybrid,
            Ranking::KeywordInstead { refused },
            Ranking::KeywordInstead { refused: too_long },
        ] {
            let bytes = postcard::to_allocvec(&WireRanking::from(&ranking)).unwrap();
            assert_eq!(postcard::from_bytes::<WireRanking>(&bytes).unwrap().into_ranking(), ranking);
        }
    }
}
