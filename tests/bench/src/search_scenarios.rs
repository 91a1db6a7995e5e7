//! The search section: a corpus of texts written to every engine, then keyword searches timed
//! side by side, opens each followed by a first search, and, on cheesedb alone, durable writes
//! with the search index built and without, and vector and hybrid searches on an agent of their
//! own. Data and queries are made before each clock starts, so only the engines are timed.
//!
//! As in the other scenarios the engines take turns: each batch and each query goes to one
//! engine and then the other, the next one starting with the other engine.

use std::time::{Duration, Instant};

use crate::cheesedb_search_side::CheesedbSearchSide;
use crate::engine::OpenFigures;
use crate::failure::Failure;
use crate::figures::{median, percentile, Figures, Metric};
use crate::progress::Progress;
use crate::search_corpus::{queries, Corpus, SearchQuery, Vectors, Vocabulary, VOCABULARY_WORDS};
use crate::search_engine::SearchEngine;
use crate::size::SearchSize;
use crate::workload::PlannedNode;

/// Nodes per batch when writing a corpus.
const SETUP_BATCH_NODES: usize = 1_024;
/// Hits asked of every timed search.
const TOP: usize = 10;
/// Queries run untimed on each engine before the timed ones, so neither is timed cold.
const WARM_UP_QUERIES: usize = 10;

/// The engines of the keyword scenarios and their figures so far, in the same order.
struct Contestants<'e> {
    engines: Vec<&'e mut dyn SearchEngine>,
    figures: Vec<Figures>,
    progress: Progress,
}

impl Contestants<'_> {
    /// The engines' indexes in the order of turn `turn`: each turn starts with the next one.
    fn turns(&self, turn: usize) -> Vec<usize> {
        let count = self.engines.len();
        (0..count).map(|offset| (turn + offset) % count).collect()
    }

    fn record(&mut self, engine: usize, metric: Metric, value: f64) {
        self.figures[engine].insert(metric, value);
    }
}

/// What the search section needs: the engines, the agent for vectors, the work.
pub struct SearchRun<'e> {
    /// cheesedb's searched agent, fresh.
    pub cheesedb: &'e mut CheesedbSearchSide,
    /// The engine compared with, fresh, if any.
    pub other: Option<&'e mut dyn SearchEngine>,
    /// Whether the other engine takes the first turn.
    pub other_first: bool,
    /// cheesedb's agent for the vector searches, fresh.
    pub vectors: &'e mut CheesedbSearchSide,
    /// How much of everything.
    pub size: SearchSize,
    /// The seed of the data.
    pub seed: u64,
}

/// Runs every search scenario; returns cheesedb's figures and the other engine's.
pub fn run_all(run: SearchRun<'_>, progress: Progress) -> Result<(Figures, Option<Figures>), Failure> {
    let SearchRun { cheesedb, other, other_first, vectors, size, seed } = run;
    let vocabulary = Vocabulary::new(VOCABULARY_WORDS, seed);
    let queries = queries(&vocabulary, size.queries.max(1), seed);
    let compared = other.is_some();
    let mut engines: Vec<&mut dyn SearchEngine> = vec![&mut *cheesedb];
    if let Some(other) = other {
        engines.insert(usize::from(!other_first), other);
    }
    let cheesedb_index = usize::from(compared && other_first);
    let figures = vec![Figures::new(); engines.len()];
    let mut contestants = Contestants { engines, figures, progress };
    let mut corpus = setup(&mut contestants, &vocabulary, &size, seed)?;
    keyword_searches(&mut contestants, &queries)?;
    opens(&mut contestants, &queries, &size)?;
    for index in 0..contestants.engines.len() {
        let disk_bytes = contestants.engines[index].disk_bytes()?;
        contestants.record(index, Metric::SearchDiskBytes, disk_bytes as f64);
    }
    let mut figures = contestants.figures;
    let other_figures = compared.then(|| figures.remove(1 - cheesedb_index));
    let mut cheesedb_figures = figures.remove(0);
    writes(cheesedb, &mut corpus, &queries[0], &size, progress, &mut cheesedb_figures)?;
    vector_searches(vectors, &vocabulary, &queries, &size, seed, progress, &mut cheesedb_figures)?;
    Ok((cheesedb_figures, other_figures))
}

/// Writes the corpus to each engine in batches, checking the ids each hands out; returns the
/// generator, ready for the extra writes.
fn setup<'v>(
    contestants: &mut Contestants<'_>,
    vocabulary: &'v Vocabulary,
    size: &SearchSize,
    seed: u64,
) -> Result<Corpus<'v>, Failure> {
    let mut corpus = Corpus::new(vocabulary, size.memories, seed);
    let nodes = size.memories + crate::search_corpus::lots_for(size.memories);
    let total = nodes * contestants.engines.len() as u64;
    let phase = contestants.progress.phase("", "search: writing the corpus", Some(total));
    let mut busy = vec![Duration::ZERO; contestants.engines.len()];
    for turn in 0.. {
        let first_id = corpus.next_id();
        let batch = corpus.next_batch(SETUP_BATCH_NODES);
        if batch.is_empty() {
            break;
        }
        for index in contestants.turns(turn) {
            let engine = &mut *contestants.engines[index];
            let started = Instant::now();
            let ids = engine.write_batch(&batch)?;
            busy[index] += started.elapsed();
            check_ids(engine.name(), &ids, first_id, batch.len())?;
            phase.advance(batch.len() as u64);
        }
    }
    drop(phase);
    for index in contestants.turns(0) {
        let engine = &mut *contestants.engines[index];
        let _phase = contestants.progress.phase(engine.name(), "search: finishing the corpus", None);
        let started = Instant::now();
        engine.finish_setup()?;
        busy[index] += started.elapsed();
    }
    let text_bytes_per_memory = corpus.text_bytes() as f64 / size.memories.max(1) as f64;
    for (index, busy) in busy.into_iter().enumerate() {
        contestants.record(index, Metric::SearchSetupMemoriesPerSecond, rate(size.memories as usize, busy));
        if contestants.engines[index].name() == "cheesedb" {
            contestants.record(index, Metric::SearchTextBytesPerMemory, text_bytes_per_memory);
        }
    }
    Ok(corpus)
}

fn check_ids(engine: &str, ids: &[u64], first_id: u64, count: usize) -> Result<(), Failure> {
    if ids.first() != Some(&first_id) || ids.len() != count {
        return Err(Failure::new(format!(
            "{engine} gave ids from {:?} where {first_id} was planned: the engines would not hold the same texts",
            ids.first()
        )));
    }
    Ok(())
}

/// The top 10 of every query on every engine, each search timed alone. Every engine must find
/// as many hits for each query (all of them, up to 10), so a wrong search cannot pass as a
/// fast one.
fn keyword_searches(contestants: &mut Contestants<'_>, queries: &[SearchQuery]) -> Result<(), Failure> {
    let count = contestants.engines.len();
    let phase = contestants.progress.phase("", "search: keyword top 10", Some((queries.len() * count) as u64));
    for query in queries.iter().cycle().take(WARM_UP_QUERIES) {
        for engine in contestants.engines.iter_mut() {
            engine.search(query, TOP)?;
        }
    }
    let mut seconds = vec![Vec::with_capacity(queries.len()); count];
    let mut hits = vec![0usize; count];
    for (turn, query) in queries.iter().enumerate() {
        let mut found: Vec<Option<usize>> = vec![None; count];
        for index in contestants.turns(turn) {
            let started = Instant::now();
            let ids = contestants.engines[index].search(query, TOP)?;
            seconds[index].push(started.elapsed().as_secs_f64());
            hits[index] += ids.len();
            found[index] = Some(ids.len());
            phase.advance(1);
        }
        if let (Some(first), Some(index)) = (found[0], found.iter().position(|hits| *hits != found[0])) {
            return Err(Failure::new(format!(
                "{} found {first} texts for \"{}\" where {} found {}",
                contestants.engines[0].name(),
                query.text(),
                contestants.engines[index].name(),
                found[index].unwrap_or(0)
            )));
        }
    }
    for index in 0..count {
        contestants.record(index, Metric::SearchKeywordMedianSeconds, median(&mut seconds[index]));
        contestants.record(index, Metric::SearchKeywordP99Seconds, percentile(&mut seconds[index], 0.99));
        contestants.record(index, Metric::SearchHitsCount, hits[index] as f64);
    }
    Ok(())
}

/// Opens timed, each followed by a first search: cheesedb builds its index then.
fn opens(contestants: &mut Contestants<'_>, queries: &[SearchQuery], size: &SearchSize) -> Result<(), Failure> {
    let count = contestants.engines.len();
    let repeats = size.open_repeats.max(1);
    let phase = contestants.progress.phase("", "search: open, then a first search", Some((repeats * count) as u64));
    let mut opens: Vec<Vec<OpenFigures>> = vec![Vec::with_capacity(repeats); count];
    for round in 0..repeats {
        let query = &queries[round % queries.len()];
        for index in contestants.turns(round) {
            opens[index].push(contestants.engines[index].reopen_and_search(query)?);
            phase.advance(1);
        }
    }
    let memories = size.memories.max(1) as f64;
    for (index, opens) in opens.iter().enumerate() {
        let mut open_seconds: Vec<f64> = opens.iter().map(|open| open.agent_open.as_secs_f64()).collect();
        contestants.record(index, Metric::SearchAgentOpenSeconds, median(&mut open_seconds));
        let mut first: Vec<f64> = opens.iter().filter_map(|open| open.first_search).map(|s| s.as_secs_f64()).collect();
        if !first.is_empty() {
            contestants.record(index, Metric::SearchFirstSeconds, median(&mut first));
        }
        let mut index_bytes: Vec<f64> =
            opens.iter().filter_map(|open| open.index_heap_bytes).map(|b| b as f64).collect();
        if !index_bytes.is_empty() {
            contestants.record(index, Metric::SearchIndexBytesPerMemory, median(&mut index_bytes) / memories);
        }
        let mut growth: Vec<f64> =
            opens.iter().filter_map(|open| open.first_search_resident_growth_bytes).map(|b| b as f64).collect();
        if !growth.is_empty() {
            contestants.record(index, Metric::SearchFirstResidentBytesPerMemory, median(&mut growth) / memories);
        }
    }
    Ok(())
}

/// Durable writes one at a time on an agent whose index is built (it has been searched since it
/// was opened) and on one whose index is not, in alternating rounds: each round opens the agent
/// again, so the index starts unbuilt, and odd rounds take the built index first.
fn writes(
    cheesedb: &mut CheesedbSearchSide,
    corpus: &mut Corpus<'_>,
    query: &SearchQuery,
    size: &SearchSize,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let per_round = size.writes_per_round.max(1);
    let rounds = size.write_rounds.max(1);
    let phase = progress.phase("cheesedb", "search: writes, index built or not", Some((rounds * per_round * 2) as u64));
    let mut unsearched = Duration::ZERO;
    let mut searched = Duration::ZERO;
    let query = query.text();
    for round in 0..rounds {
        // Nodes are made in the order they are written: a memory names the lot made before it.
        cheesedb.reopen_here()?;
        if round % 2 == 0 {
            let nodes = next_nodes(corpus, per_round);
            unsearched += write_each(cheesedb, &nodes, &|| phase.advance(1))?;
            cheesedb.search_hits(&query, TOP)?;
            let nodes = next_nodes(corpus, per_round);
            searched += write_each(cheesedb, &nodes, &|| phase.advance(1))?;
        } else {
            cheesedb.search_hits(&query, TOP)?;
            let nodes = next_nodes(corpus, per_round);
            searched += write_each(cheesedb, &nodes, &|| phase.advance(1))?;
            cheesedb.reopen_here()?;
            let nodes = next_nodes(corpus, per_round);
            unsearched += write_each(cheesedb, &nodes, &|| phase.advance(1))?;
        }
    }
    let writes = rounds * per_round;
    figures.insert(Metric::SearchWritesPerSecondUnsearched, rate(writes, unsearched));
    figures.insert(Metric::SearchWritesPerSecondSearched, rate(writes, searched));
    Ok(())
}

fn next_nodes(corpus: &mut Corpus<'_>, count: usize) -> Vec<PlannedNode> {
    (0..count).map(|_| corpus.next_node()).collect()
}

fn write_each(
    cheesedb: &mut CheesedbSearchSide,
    nodes: &[PlannedNode],
    advance: &dyn Fn(),
) -> Result<Duration, Failure> {
    let mut busy = Duration::ZERO;
    for node in nodes {
        let started = Instant::now();
        cheesedb.write_one(node)?;
        busy += started.elapsed();
        advance();
    }
    Ok(busy)
}

/// An agent of its own with a vector on every memory; exact vector searches and hybrid ones
/// timed, after a check that a stored vector finds its own memory first.
fn vector_searches(
    agent: &mut CheesedbSearchSide,
    vocabulary: &Vocabulary,
    queries: &[SearchQuery],
    size: &SearchSize,
    seed: u64,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let mut corpus = Corpus::new(vocabulary, size.vectors, seed);
    let mut vectors = Vectors::new(size.vector_dimension, seed);
    let total_nodes = size.vectors + crate::search_corpus::lots_for(size.vectors);
    let phase = progress.phase("cheesedb", "vectors: writing memories with vectors", Some(total_nodes));
    let mut busy = Duration::ZERO;
    let mut probe: Option<(u64, Vec<f32>)> = None;
    loop {
        let first_id = corpus.next_id();
        let batch = corpus.next_batch(SETUP_BATCH_NODES);
        if batch.is_empty() {
            break;
        }
        let batch_vectors: Vec<Vec<f32>> =
            batch.iter().filter(|node| node.is_memory()).map(|_| vectors.next_vector()).collect();
        let started = Instant::now();
        let ids = agent.write_batch_with_vectors(&batch, &batch_vectors)?;
        busy += started.elapsed();
        check_ids("cheesedb", &ids, first_id, batch.len())?;
        if probe.is_none() {
            let first_memory = batch.iter().position(PlannedNode::is_memory);
            probe = first_memory.zip(batch_vectors.first()).map(|(position, vector)| (ids[position], vector.clone()));
        }
        phase.advance(batch.len() as u64);
    }
    drop(phase);
    figures.insert(Metric::VectorSetupMemoriesPerSecond, rate(size.vectors as usize, busy));
    if let Some((id, vector)) = probe {
        let hits = agent.search_vector(&vector, TOP)?;
        if hits.first().map(|hit| hit.id.get()) != Some(id) {
            return Err(Failure::new(format!("a search for memory {id}'s own vector did not find it first")));
        }
    }
    let query_count = size.vector_queries.max(1);
    let query_vectors: Vec<Vec<f32>> = (0..query_count).map(|_| vectors.next_vector()).collect();
    let expected_hits = TOP.min(size.vectors as usize);
    let phase = progress.phase("cheesedb", "vectors: exact top 10, hybrid top 10", Some(query_count as u64 * 2));
    let mut vector_seconds = Vec::with_capacity(query_count);
    for vector in &query_vectors {
        let started = Instant::now();
        let hits = agent.search_vector(vector, TOP)?;
        vector_seconds.push(started.elapsed().as_secs_f64());
        if hits.len() != expected_hits {
            return Err(Failure::new(format!("a vector search found {} memories, not {expected_hits}", hits.len())));
        }
        phase.advance(1);
    }
    let mut hybrid_seconds = Vec::with_capacity(query_count);
    for (vector, query) in query_vectors.iter().zip(queries.iter().cycle()) {
        let text = query.text();
        let started = Instant::now();
        agent.search_hybrid(&text, vector, TOP)?;
        hybrid_seconds.push(started.elapsed().as_secs_f64());
        phase.advance(1);
    }
    figures.insert(Metric::VectorMedianSeconds, median(&mut vector_seconds));
    figures.insert(Metric::VectorP99Seconds, percentile(&mut vector_seconds, 0.99));
    figures.insert(Metric::HybridMedianSeconds, median(&mut hybrid_seconds));
    Ok(())
}

/// Operations per second.
fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
}
