//! How big a run is: the data and how many operations each scenario times.

use crate::workload::Shape;

/// The data of a run and the work of each scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// The size's name in reports.
    pub name: &'static str,
    /// The data written at setup.
    pub shape: Shape,
    /// Nodes per batch at setup.
    pub setup_batch_nodes: usize,
    /// Durable writes timed one by one.
    pub single_writes: usize,
    /// Batches of 64 memories.
    pub batches_of_64: usize,
    /// Batches of 1,024 memories.
    pub batches_of_1024: usize,
    /// Threads writing to the one agent at once.
    pub threads: usize,
    /// Writes by each of those threads, each committed alone.
    pub writes_per_thread: usize,
    /// Opens timed (the median is reported).
    pub open_repeats: usize,
    /// Verifies timed (the median is reported).
    pub verify_repeats: usize,
    /// The search section.
    pub search: SearchSize,
}

/// The data of the search section and the work of its scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchSize {
    /// Memories in the searched agent (lots come on top, one per 100 memories).
    pub memories: u64,
    /// Keyword queries timed on each engine.
    pub queries: usize,
    /// Memories with a vector in the agent of the vector searches.
    pub vectors: u64,
    /// Numbers in each vector.
    pub vector_dimension: usize,
    /// Vector searches timed, and as many hybrid ones.
    pub vector_queries: usize,
    /// Rounds of the write comparison: in each, writes with the index built and without.
    pub write_rounds: usize,
    /// Durable writes of each kind in each round.
    pub writes_per_round: usize,
    /// Opens timed, each followed by a first search (the median is reported).
    pub open_repeats: usize,
}

/// The dimension of the vectors: that of common small embedding models.
const VECTOR_DIMENSION: usize = 384;

/// What one recall scenario removes: a family of 10,000 memories.
const RECALLED_FAMILY_MEMORIES: u64 = 10_000;
/// Witnesses of that family: kept by Fair, removed by Strict.
const RECALLED_FAMILY_WITNESSES: u64 = 1_000;

/// 1M memories in one agent.
pub const FULL: Size = Size {
    name: "full",
    shape: Shape {
        memories: 1_000_000,
        lots: 100_000,
        families: 4,
        family_memories: RECALLED_FAMILY_MEMORIES,
        family_witnesses: RECALLED_FAMILY_WITNESSES,
    },
    setup_batch_nodes: 1_024,
    single_writes: 2_000,
    batches_of_64: 100,
    batches_of_1024: 20,
    threads: 8,
    writes_per_thread: 500,
    open_repeats: 5,
    verify_repeats: 3,
    search: SearchSize {
        memories: 1_000_000,
        queries: 300,
        vectors: 100_000,
        vector_dimension: VECTOR_DIMENSION,
        vector_queries: 100,
        write_rounds: 10,
        writes_per_round: 200,
        open_repeats: 5,
    },
};

/// A size that finishes in about two minutes with SQLite on a two-core machine.
pub const QUICK: Size = Size {
    name: "quick",
    shape: Shape {
        memories: 100_000,
        lots: 10_000,
        families: 4,
        family_memories: RECALLED_FAMILY_MEMORIES,
        family_witnesses: RECALLED_FAMILY_WITNESSES,
    },
    setup_batch_nodes: 1_024,
    single_writes: 500,
    batches_of_64: 30,
    batches_of_1024: 5,
    threads: 8,
    writes_per_thread: 100,
    open_repeats: 3,
    verify_repeats: 3,
    search: SearchSize {
        memories: 100_000,
        queries: 200,
        vectors: 20_000,
        vector_dimension: VECTOR_DIMENSION,
        vector_queries: 50,
        write_rounds: 10,
        writes_per_round: 50,
        open_repeats: 3,
    },
};

/// A tiny size that only shows every scenario runs, in seconds.
pub const SMOKE: Size = Size {
    name: "smoke",
    shape: Shape { memories: 2_000, lots: 200, families: 4, family_memories: 100, family_witnesses: 10 },
    setup_batch_nodes: 256,
    single_writes: 20,
    batches_of_64: 2,
    batches_of_1024: 1,
    threads: 8,
    writes_per_thread: 5,
    open_repeats: 1,
    verify_repeats: 1,
    search: SearchSize {
        memories: 2_000,
        queries: 30,
        vectors: 500,
        vector_dimension: VECTOR_DIMENSION,
        vector_queries: 10,
        write_rounds: 2,
        writes_per_round: 10,
        open_repeats: 1,
    },
};

impl Size {
    /// Memories written by the write scenarios after setup.
    pub fn extra_memories(&self) -> u64 {
        (self.single_writes
            + self.batches_of_64 * 64
            + self.batches_of_1024 * 1_024
            + self.threads * self.writes_per_thread) as u64
    }
}
