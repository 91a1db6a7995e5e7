//! A page of search hits with what a caller shows of each: what is asked ([`SearchQuery`]) and
//! what comes back ([`SearchPage`]), for `AgentEngine::search_page`.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Error;
use crate::id::Id;
use crate::trust::TrustLevel;

/// What a page search looks for, and which hits it may return.
///
/// ```
/// use cheesedb_core::{Id, SearchQuery, TrustLevel};
///
/// let query = SearchQuery::new("rain in Pune", 10).vector(vec![0.1, 0.7]).least_trust(TrustLevel::Normal);
/// assert_eq!((query.limit, query.least_trust), (10, TrustLevel::Normal));
/// let among = SearchQuery::new("rain", 5).among([Id::from(3), Id::from(9)]);
/// assert_eq!(among.among, Some(vec![Id::from(3), Id::from(9)]));
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    /// The words, ranked by BM25; empty finds nothing by words (a vector may still find).
    pub text: String,
    /// The query's vector: with one, words and vector are fused (a hybrid search).
    pub vector: Option<Vec<f32>>,
    /// The most hits the page holds.
    pub limit: usize,
    /// The least trust level of a hit: [`TrustLevel::Low`] (the default) keeps every hit.
    pub least_trust: TrustLevel,
    /// When set, only these lots and memories may be found (an application's own records among
    /// others of the agent, say).
    pub among: Option<Vec<Id>>,
}

impl SearchQuery {
    /// A search by the words of `text` for at most `limit` hits of any trust level.
    #[must_use]
    pub fn new(text: &str, limit: usize) -> SearchQuery {
        SearchQuery { text: String::from(text), vector: None, limit, least_trust: TrustLevel::Low, among: None }
    }

    /// This search, by words and `vector` fused.
    #[must_use]
    pub fn vector(mut self, vector: Vec<f32>) -> SearchQuery {
        self.vector = Some(vector);
        self
    }

    /// This search, keeping only hits of `level` or above.
    #[must_use]
    pub fn least_trust(mut self, level: TrustLevel) -> SearchQuery {
        self.least_trust = level;
        self
    }

    /// This search, finding only the lots and memories in `ids`.
    #[must_use]
    pub fn among(mut self, ids: impl IntoIterator<Item = Id>) -> SearchQuery {
        self.among = Some(ids.into_iter().collect());
        self
    }
}

/// What a page search found and how it ranked it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct SearchPage {
    /// The hits, best first: at most the query's limit, fewer only when no more match.
    pub found: Vec<Found>,
    /// How they were ranked.
    pub ranking: Ranking,
}

impl SearchPage {
    /// A page of these hits, ranked so (for code that rebuilds one away from the engine, such
    /// as a client of the memory server).
    #[must_use]
    pub fn new(found: Vec<Found>, ranking: Ranking) -> SearchPage {
        SearchPage { found, ranking }
    }
}

/// How a page search ranked its hits.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// BM25 over the words: the query had no vector.
    Keyword,
    /// BM25 and cosine similarity fused by reciprocal rank.
    Hybrid,
    /// BM25 alone: the query's vector could not be compared with the agent's vectors, for the
    /// reason `refused` gives (`Error::InvalidVector`, such as another dimension, or
    /// `Error::LimitExceeded` for too many numbers).
    KeywordInstead {
        /// Why the vector was not used.
        refused: Error,
    },
}

/// One alive lot or memory a page search found, with what a caller shows of it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its id.
    pub id: Id,
    /// How well it matched; higher is better (as in [`crate::Hit`]).
    pub score: f32,
    /// Lot (with its label) or memory (with the parents read tracking gave it).
    pub kind: FoundKind,
    /// Its content.
    pub content: Vec<u8>,
    /// How far it is to be believed, under the trust rules the search was given.
    pub trust: TrustLevel,
    /// Whether it has a vector.
    pub has_vector: bool,
}

/// What kind of node a hit is, with what is shown of that kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundKind {
    /// A lot.
    Lot {
        /// Its label.
        label: String,
    },
    /// A memory.
    Memory {
        /// The parents that came from read tracking (ascending), as
        /// [`crate::Node::tracked_parents`].
        tracked_parents: Vec<Id>,
    },
}

impl Found {
    /// A hit with these facts (for code that rebuilds one away from the engine).
    #[must_use]
    pub fn new(id: Id, score: f32, kind: FoundKind, content: Vec<u8>, trust: TrustLevel, has_vector: bool) -> Found {
        Found { id, score, kind, content, trust, has_vector }
    }

    /// The label of a lot; `None` for a memory.
    #[must_use]
    pub fn label(&self) -> Option<&str> {
        match &self.kind {
            FoundKind::Lot { label } => Some(label),
            FoundKind::Memory { .. } => None,
        }
    }

    /// The parents a memory got from read tracking; empty for a lot.
    #[must_use]
    pub fn tracked_parents(&self) -> &[Id] {
        match &self.kind {
            FoundKind::Lot { .. } => &[],
            FoundKind::Memory { tracked_parents } => tracked_parents,
        }
    }
}
