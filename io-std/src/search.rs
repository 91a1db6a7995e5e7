//! The search index built with the segments indexed on threads.
//!
//! Splitting the text into words and looking each up dominates the first search after open, and
//! the records of every segment can be indexed on their own (the core's `search_build`), so
//! worker threads index segments while this thread reads them in order, hands them out, and
//! joins the parts that come back. The core joins them in log order and checks what ties the
//! segments together, so the index, and the error for a damaged log, are those of the one pass
//! the core makes by itself. Every agent a store opens builds its index this way, whichever
//! call first needs it.

use std::num::NonZeroUsize;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Mutex;
use std::thread;

use cheesedb_core::internal::graph::Graph;
use cheesedb_core::internal::search_build::{index_segment, SearchIndexJoin, SearchIndexPart};
use cheesedb_core::verify::SegmentPlace;
use cheesedb_core::{AgentEngine, Error, Storage};

/// A segment to index: its index in log order and its bytes.
type Job = (usize, Vec<u8>);

/// A segment indexed: its part of the index, and its bytes, to read a later segment into.
type Answer = (SearchIndexPart, Vec<u8>);

/// Builds the search index of `engine` from parts made on threads, one per segment, joined in
/// log order.
///
/// # Errors
///
/// `Error::AgentDeleted` when the agent was deleted; the errors of reading and indexing the
/// segments are the join's, which reports the first in log order.
pub(crate) fn build_search_index_on_threads<S: Storage>(engine: &AgentEngine<S>) -> Result<SearchIndexJoin, Error> {
    let places = engine.segments_to_index()?;
    let alive = engine.alive_nodes();
    let mut join = SearchIndexJoin::new(&places);
    let workers = thread::available_parallelism().map_or(1, NonZeroUsize::get).min(places.len()).max(1);
    // One job waiting at most: segments in memory stay bounded by the workers plus two,
    // however long the log.
    let (jobs, queue) = mpsc::sync_channel::<Job>(1);
    let queue = Mutex::new(queue);
    let (results, answers) = mpsc::channel::<Answer>();
    thread::scope(|scope| {
        for _ in 0..workers {
            let results = results.clone();
            let (queue, places) = (&queue, &places);
            scope.spawn(move || index_segments_from(queue, places, alive, &results));
        }
        drop(results); // so that the answers end once every worker has stopped
        read_in_order(engine, &places, jobs, &answers, &mut join);
        for (part, _) in &answers {
            join.add(part);
        }
    });
    Ok(join)
}

/// A worker: indexes the segments it takes from the queue until the queue is closed.
fn index_segments_from(queue: &Mutex<Receiver<Job>>, places: &[SegmentPlace], alive: &Graph, results: &Sender<Answer>) {
    loop {
        let job = match queue.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return, // another worker panicked; its missing part fails the join
        };
        let Ok((index, bytes)) = job else { return };
        let Some(place) = places.get(index) else { return };
        let part = index_segment(&bytes, place, alive);
        if results.send((part, bytes)).is_err() {
            return;
        }
    }
}

/// Reads each segment in log order and hands it to the workers, joining the parts that came
/// back meanwhile and reading into their buffers (memory already mapped is filled faster than
/// fresh memory). Stops at the first segment that cannot be read, whose error becomes its part.
fn read_in_order<S: Storage>(
    engine: &AgentEngine<S>,
    places: &[SegmentPlace],
    jobs: SyncSender<Job>,
    answers: &Receiver<Answer>,
    join: &mut SearchIndexJoin,
) {
    let mut spare = Vec::new();
    for (index, place) in places.iter().enumerate() {
        while let Ok((part, bytes)) = answers.try_recv() {
            join.add(part);
            spare.push(bytes);
        }
        let mut bytes = spare.pop().unwrap_or_default();
        if let Err(error) = engine.read_segment(place, &mut bytes) {
            join.add(SearchIndexPart::unreadable(place, error));
            return;
        }
        if jobs.send((index, bytes)).is_err() {
            return; // no worker left; the missing parts fail the join
        }
    }
}
