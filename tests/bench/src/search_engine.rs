//! What the search scenarios ask of an engine under test, so cheesedb and SQLite FTS5 run the
//! very same code.

use crate::engine::OpenFigures;
use crate::failure::Failure;
use crate::search_corpus::SearchQuery;
use crate::workload::PlannedNode;

/// An engine holding a corpus of texts it searches by keyword, every write durable.
pub trait SearchEngine {
    /// The engine's name in reports.
    fn name(&self) -> &'static str;

    /// Writes `nodes` in one transaction with one durable commit; returns their ids, in order.
    fn write_batch(&mut self, nodes: &[PlannedNode]) -> Result<Vec<u64>, Failure>;

    /// Whatever the engine does once its corpus is written, before it is searched.
    fn finish_setup(&mut self) -> Result<(), Failure>;

    /// The ids of the best `limit` texts holding any word of `query`, by BM25, best first.
    fn search(&mut self, query: &SearchQuery, limit: usize) -> Result<Vec<u64>, Failure>;

    /// Closes everything and opens it again, timing the open and then a first search for
    /// `first_query` (its hits are not kept).
    fn reopen_and_search(&mut self, first_query: &SearchQuery) -> Result<OpenFigures, Failure>;

    /// Bytes of every file the engine keeps.
    fn disk_bytes(&self) -> Result<u64, Failure>;
}
