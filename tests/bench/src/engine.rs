//! What the scenarios ask of an engine under test, so cheesedb and SQLite run the very same code.

use std::time::Duration;

use cheesedb::{Mode, Removal};

use crate::failure::Failure;
use crate::workload::PlannedNode;

/// What opening the data again took, and what it cost in RAM where the engine can tell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpenFigures {
    /// Opening the store or database file.
    pub store_open: Duration,
    /// Opening the agent, ready to serve (for SQLite, nothing beyond the open above).
    pub agent_open: Duration,
    /// Bytes of RAM the engine's in-memory structures hold after the open.
    pub structure_heap_bytes: Option<u64>,
    /// Growth of the process's resident memory across the open.
    pub resident_growth_bytes: Option<u64>,
    /// Log records the open replayed, rather than loaded from a snapshot.
    pub records_replayed: Option<u64>,
    /// The first search after the open, when the open was asked to make one.
    pub first_search: Option<Duration>,
    /// Bytes of RAM the search index holds after that first search, where the engine tells.
    pub index_heap_bytes: Option<u64>,
    /// Growth of the process's resident memory across that first search.
    pub first_search_resident_growth_bytes: Option<u64>,
}

/// An engine holding one agent's data, with every write durable before it returns.
pub trait Engine {
    /// The engine's name in reports.
    fn name(&self) -> &'static str;

    /// Writes `nodes` in one transaction with one durable commit; returns their ids, in order.
    fn write_batch(&mut self, nodes: &[PlannedNode]) -> Result<Vec<u64>, Failure>;

    /// Writes one node, committed durably on its own; returns its id.
    fn write_one(&mut self, node: &PlannedNode) -> Result<u64, Failure>;

    /// `count` handles for as many threads, writing to the same agent at once, each write
    /// committed alone: the engine's best way to take writes from several threads.
    fn concurrent_writers(&mut self, count: usize) -> Result<Vec<Box<dyn ConcurrentWriter>>, Failure>;

    /// Recalls `id`; returns the memories removed because of it, ascending.
    fn recall(&mut self, id: u64, mode: Mode, removal: Removal) -> Result<Vec<u64>, Failure>;

    /// What a recall would remove, writing nothing, ascending: the recall's computation
    /// without its durable write.
    fn preview_recall(&mut self, id: u64, mode: Mode) -> Result<Vec<u64>, Failure>;

    /// The alive memories, ascending.
    fn alive_memories(&mut self) -> Result<Vec<u64>, Failure>;

    /// Closes everything and opens it again, timing the open.
    fn reopen(&mut self) -> Result<OpenFigures, Failure>;

    /// Runs the engine's own full check; returns the bytes it covered.
    fn verify(&mut self) -> Result<u64, Failure>;

    /// Rewrites the files without the data of recalled nodes.
    fn compact(&mut self) -> Result<(), Failure>;

    /// Bytes of every file the engine keeps.
    fn disk_bytes(&self) -> Result<u64, Failure>;
}

/// One thread's handle to the agent under test.
pub trait ConcurrentWriter: Send {
    /// Writes one node, committed durably on its own.
    fn write_one(&mut self, node: &PlannedNode) -> Result<(), Failure>;
}
