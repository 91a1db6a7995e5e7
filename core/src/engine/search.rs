//! Search over the agent's alive lots and memories, and the vectors attached to them.
//!
//! The index lives in RAM only and is derived from the log: built by one pass over every
//! segment the first time it is needed after open (or from parts of each segment joined in log
//! order, see `build`, which gives the same index), then kept in step by every write, recall,
//! Erase and compaction of this engine. Nothing of it is written to a file, so nothing of it
//! can outlive an Erase on disk, and a reopen or a crash can only lead to a rebuild, never to a
//! stale answer.
//!
//! Vectors are records of the log (`Body::Vector`), whose numbers are a content block: an Erase
//! redacts them in place as it redacts text, and compaction drops those of dead nodes. The
//! index remembers where each vector record still holding numbers lies, so both can find them.

pub mod build;
mod page;

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::append::Entry;
use super::AgentEngine;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::graph::Location;
use crate::id::Id;
use crate::search::{reciprocal_rank_fusion, Hit, KeywordIndex, VectorIndex};
use crate::storage::Storage;

/// Bytes of one number of a vector in a record.
const NUMBER_BYTES: usize = 4;

/// How many hits of each list a hybrid search fuses: enough that a node ranked a little below
/// the cut in one list still gains from its rank in the other.
const HYBRID_CANDIDATES_MIN: usize = 100;

/// The index of one agent, as the log says it is now.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    keywords: KeywordIndex,
    vectors: VectorIndex,
    /// For each node, where its vector records that still hold numbers lie, in log order.
    vector_records: BTreeMap<u64, Vec<Location>>,
}

impl SearchIndex {
    /// Forgets everything about nodes that just died.
    pub(crate) fn forget(&mut self, ids: impl IntoIterator<Item = u64>) {
        for id in ids {
            self.keywords.remove(id);
            self.vectors.remove(id);
        }
    }

    /// Where the vector records of `id` that still hold numbers lie.
    pub(crate) fn vector_records_of(&self, id: u64) -> &[Location] {
        self.vector_records.get(&id).map_or(&[], Vec::as_slice)
    }

    /// The vector records of `id` hold no numbers any more.
    pub(crate) fn vector_records_erased(&mut self, id: u64) {
        self.vector_records.remove(&id);
    }

    /// A segment was rewritten: its vector records now lie at `moved` (the node, its new
    /// place, and whether it still holds numbers).
    pub(crate) fn segment_rewritten(&mut self, segment: u16, moved: &[(u64, Location, bool)]) {
        for locations in self.vector_records.values_mut() {
            locations.retain(|location| location.segment != segment);
        }
        for (id, location, present) in moved {
            if *present {
                self.vector_records.entry(*id).or_default().push(*location);
            }
        }
        self.vector_records.retain(|_, locations| !locations.is_empty());
    }

    /// The dimension of the vectors of alive nodes, if there is one.
    pub(crate) fn vector_dimension(&self) -> Option<usize> {
        self.vectors.dimension()
    }

    fn vector_written(&mut self, id: u64, vector: &[f32], location: Location) {
        self.vectors.set(id, vector);
        self.vector_records.entry(id).or_default().push(location);
    }

    /// Puts the index of the segments after these ones after this one, as if one pass had gone
    /// on through them: their documents after these, a later vector of a node replacing an
    /// earlier one, their vector records after these.
    fn append(&mut self, later: SearchIndex) {
        self.keywords.append(later.keywords);
        self.vectors.append(later.vectors);
        if self.vector_records.is_empty() {
            self.vector_records = later.vector_records;
            return;
        }
        for (id, mut locations) in later.vector_records {
            self.vector_records.entry(id).or_default().append(&mut locations);
        }
    }

    /// RAM the index holds, in bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        let locations: usize = self.vector_records.values().map(|locations| locations.capacity() * 8 + 48).sum();
        self.keywords.heap_bytes() + self.vectors.heap_bytes() + locations
    }
}

/// How many numbers the stored bytes of a vector hold.
pub(crate) fn vector_dimension(bytes: &[u8]) -> usize {
    bytes.len() / NUMBER_BYTES
}

/// The numbers of a vector as a record stores them.
pub(crate) fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|number| number.to_le_bytes()).collect()
}

/// The numbers of a vector record's content, or `None` if the bytes are not whole numbers.
fn vector_numbers(bytes: &[u8]) -> Option<Vec<f32>> {
    if bytes.is_empty() || bytes.len() % NUMBER_BYTES != 0 {
        return None;
    }
    let numbers = bytes.chunks_exact(NUMBER_BYTES).map(|chunk| {
        let mut field = [0u8; NUMBER_BYTES];
        field.copy_from_slice(chunk);
        f32::from_le_bytes(field)
    });
    Some(numbers.collect())
}

impl<S: Storage> AgentEngine<S> {
    /// Lots and memories whose content holds the words of `query`, ranked by BM25 (k1 1.2,
    /// b 0.75), best first, ties by ascending id. Words are split on Unicode word boundaries
    /// and lower-cased; a hit holds at least one word of the query. Only alive nodes are
    /// found: a recalled one never, from the moment its recall returned.
    ///
    /// # Errors
    ///
    /// The errors of reading the log when the index is built (the first search after open):
    /// `Error::Io` or `Error::Corrupt`; `Error::AgentDeleted`.
    pub fn search(&mut self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        if query.is_empty() || limit == 0 {
            self.check_readable()?;
            return Ok(Vec::new());
        }
        Ok(self.search_index()?.keywords.search(query, limit))
    }

    /// Alive lots and memories with a vector, ranked by the cosine of their vector and
    /// `vector` (exactly: every vector is compared), best first, ties by ascending id.
    ///
    /// # Errors
    ///
    /// `Error::InvalidVector` if `vector` is empty, holds a number that is not finite, is all
    /// zeros, or differs in dimension from the agent's vectors; `Error::LimitExceeded` if it
    /// is longer than `limits::VECTOR_DIMENSION_MAX`; the errors of building the index, as
    /// for [`AgentEngine::search`].
    pub fn search_vector(&mut self, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        let index = self.search_index()?;
        let hits = index.vectors.search(vector, limit)?;
        Ok(hits)
    }

    /// The keyword and the vector ranking fused by reciprocal rank fusion (k = 60): each node
    /// scores the sum of 1 / (60 + its rank) over the lists it is in. Each list contributes its
    /// best `max(limit, 100)` hits.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::search_vector`].
    pub fn search_hybrid(&mut self, query: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        let candidates = limit.max(HYBRID_CANDIDATES_MIN);
        let index = self.search_index()?;
        let by_vector = index.vectors.search(vector, candidates)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let by_words = if query.is_empty() { Vec::new() } else { index.keywords.search(query, candidates) };
        Ok(reciprocal_rank_fusion(&[&by_words, &by_vector], limit))
    }

    /// Attaches `vector` to the alive lot or memory `id`, replacing any vector it had; durable
    /// before it returns. An agent's alive vectors all have one dimension: that of the first
    /// one, until none is left.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` or `Error::AlreadyRecalled` for an id that is not alive;
    /// `Error::InvalidVector` and `Error::LimitExceeded` as for
    /// [`AgentEngine::search_vector`] (replacing the only vector with one of another dimension
    /// is refused too); the errors of a write (`Error::Io`, `Error::OutcomeUnknown`,
    /// `Error::Poisoned`, `Error::ReadOnly`, `Error::AgentDeleted`) and of building the index.
    pub fn set_vector(&mut self, id: Id, vector: &[f32]) -> Result<(), Error> {
        self.check_writable()?;
        self.check_alive(id.get())?;
        self.search_index()?.vectors.check(vector)?;
        let bytes = vector_bytes(vector);
        self.write_entries(&[Entry::Vector { id: id.get(), numbers: &bytes }])?;
        Ok(())
    }

    /// Whether the alive lot or memory `id` has a vector.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` or `Error::AlreadyRecalled` for an id that is not alive; the errors
    /// of building the index.
    pub fn has_vector(&mut self, id: Id) -> Result<bool, Error> {
        self.check_alive(id.get())?;
        Ok(self.search_index()?.vectors.contains(id.get()))
    }

    /// RAM the search index holds, in bytes; 0 while it is not built.
    pub fn search_heap_bytes(&self) -> usize {
        self.search.as_ref().map_or(0, SearchIndex::heap_bytes)
    }

    /// Refuses an id that is not an alive node.
    pub(crate) fn check_alive(&self, id: u64) -> Result<(), Error> {
        self.graph.location(id)?;
        if self.graph.is_alive(id) {
            Ok(())
        } else {
            Err(Error::AlreadyRecalled { id: Id::from(id) })
        }
    }

    /// The index, built from the log first if it is not yet.
    pub(crate) fn search_index(&mut self) -> Result<&mut SearchIndex, Error> {
        self.check_readable()?;
        if self.search.is_none() {
            let built = match self.search_builder {
                Some(build) => build(self)?.finish()?,
                None => self.build_search_index()?,
            };
            self.search = Some(built);
        }
        self.search.as_mut().ok_or(Error::Internal { what: InternalRule::SearchIndexBuilt })
    }

    /// Keeps a built index in step with a record just written for node `id`.
    pub(crate) fn index_written(&mut self, id: u64, entry: &Entry<'_>, location: Location) {
        let Some(index) = self.search.as_mut() else { return };
        match *entry {
            Entry::Lot { content, .. } | Entry::Memory { content, .. } => index.keywords.add(id, content),
            Entry::Vector { numbers, .. } => {
                if let Some(numbers) = vector_numbers(numbers) {
                    index.vector_written(id, &numbers, location);
                }
            }
            Entry::Recall { .. } | Entry::RecallAll { .. } | Entry::Member { .. } | Entry::Shared { .. } => {}
        }
    }

    /// One pass over every segment, in log order: the text of every alive node, the last
    /// vector of every alive node, and where every vector record still holding numbers lies.
    fn build_search_index(&self) -> Result<SearchIndex, Error> {
        let mut index = SearchIndex::default();
        let mut bytes = Vec::new();
        for place in self.segments_to_index()? {
            self.read_segment(&place, &mut bytes)?;
            build::index_records(&mut index, &bytes, &place, &self.graph, |_| {})?;
        }
        Ok(index)
    }
}
