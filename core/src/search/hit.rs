//! One answer of a search.

use crate::id::Id;

/// A lot or memory a search found, with how well it matched.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The lot or memory.
    pub id: Id,
    /// How well it matched: higher is better. BM25 for a keyword search, the cosine for a
    /// vector search, the fused reciprocal-rank score for a hybrid one.
    pub score: f32,
}

impl Hit {
    /// A hit on `id` scoring `score`.
    #[must_use]
    pub fn new(id: Id, score: f32) -> Hit {
        Hit { id, score }
    }
}
