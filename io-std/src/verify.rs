//! Verification with the segments checked on threads.
//!
//! Hashing dominates a verification, and every segment can be checked on its own from its
//! header (`cheesedb_core::verify`), so worker threads check segments while this thread reads
//! them in order and rebuilds the recall graph from them. The core then joins the outcomes in
//! log order, so the verdict, and the error for a damaged log, are those of the one-thread
//! `AgentEngine::verify`.

use std::num::NonZeroUsize;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread;

use cheesedb_core::verify::{check_segment, GraphReplay, SegmentFailed, SegmentOutcome, SegmentPlace};
use cheesedb_core::{AgentEngine, Error, Fingerprint, Storage};

/// A segment to check: its index in log order and its bytes, shared with the graph replay.
type Job = (usize, Arc<Vec<u8>>);

/// Verifies the whole log of `engine`, and that it passes through `kept` if given.
pub(crate) fn verify_on_threads<S: Storage>(
    engine: &AgentEngine<S>,
    kept: Option<&Fingerprint>,
) -> Result<Fingerprint, Error> {
    let places = engine.segments_to_verify()?;
    let workers = thread::available_parallelism().map_or(1, NonZeroUsize::get).min(places.len()).max(1);
    // One job waiting at most: segments in memory stay bounded by the workers plus two,
    // however long the log.
    let (jobs, queue) = mpsc::sync_channel::<Job>(1);
    let queue = Mutex::new(queue);
    let (results, answers) = mpsc::channel::<(usize, SegmentOutcome)>();
    let mut replay = engine.start_replay();
    let spare = SpareBuffers::default();
    let mut read_failure = None;
    thread::scope(|scope| {
        for _ in 0..workers {
            let results = results.clone();
            let (queue, places, spare) = (&queue, &places, &spare);
            scope.spawn(move || check_segments_from(queue, places, kept, &results, spare));
        }
        read_failure = read_and_replay(engine, &places, &jobs, &spare, &mut replay);
        drop(jobs); // the workers stop once the queue is empty
    });
    drop(results);
    let outcomes = in_log_order(places.len(), answers, read_failure);
    engine.finish_verify(kept, &places, &outcomes, &mut replay)
}

/// A worker: checks the segments it takes from the queue until the queue is closed.
fn check_segments_from(
    queue: &Mutex<Receiver<Job>>,
    places: &[SegmentPlace],
    kept: Option<&Fingerprint>,
    results: &mpsc::Sender<(usize, SegmentOutcome)>,
    spare: &SpareBuffers,
) {
    loop {
        let job = match queue.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return, // another worker panicked; its missing outcome fails the verify
        };
        let Ok((index, bytes)) = job else { return };
        let Some(place) = places.get(index) else { return };
        let outcome = check_segment(&bytes, place, kept);
        spare.give_back(bytes);
        if results.send((index, outcome)).is_err() {
            return;
        }
    }
}

/// Reads each segment in log order, hands it to the workers and replays it into the graph.
/// Stops at the first segment that cannot be read, and returns it with its error.
fn read_and_replay<S: Storage>(
    engine: &AgentEngine<S>,
    places: &[SegmentPlace],
    jobs: &SyncSender<Job>,
    spare: &SpareBuffers,
    replay: &mut GraphReplay,
) -> Option<(usize, Error)> {
    for (index, place) in places.iter().enumerate() {
        let mut bytes = spare.take();
        if let Err(error) = engine.read_segment(place, &mut bytes) {
            return Some((index, error));
        }
        let bytes = Arc::new(bytes);
        if jobs.send((index, Arc::clone(&bytes))).is_err() {
            return None; // no worker left; the missing outcomes fail the verify
        }
        replay.replay_segment(&bytes, place);
        spare.give_back(bytes);
    }
    None
}

/// Segment buffers done with, for the next segments to be read into: memory already mapped
/// is filled faster than fresh memory, and the count of buffers stays bounded.
#[derive(Default)]
struct SpareBuffers {
    buffers: Mutex<Vec<Vec<u8>>>,
}

impl SpareBuffers {
    /// A buffer done with, or a new one.
    fn take(&self) -> Vec<u8> {
        self.buffers.lock().ok().and_then(|mut buffers| buffers.pop()).unwrap_or_default()
    }

    /// Keeps `bytes` for later if this was its last user (the check or the replay, whichever
    /// finished second).
    fn give_back(&self, bytes: Arc<Vec<u8>>) {
        if let (Some(bytes), Ok(mut buffers)) = (Arc::into_inner(bytes), self.buffers.lock()) {
            buffers.push(bytes);
        }
    }
}

/// The outcomes in log order, up to the first segment without one (a segment after one that
/// could not be read is never checked).
fn in_log_order(
    count: usize,
    answers: Receiver<(usize, SegmentOutcome)>,
    read_failure: Option<(usize, Error)>,
) -> Vec<SegmentOutcome> {
    let mut slots: Vec<Option<SegmentOutcome>> = (0..count).map(|_| None).collect();
    for (index, outcome) in answers {
        if let Some(slot) = slots.get_mut(index) {
            *slot = Some(outcome);
        }
    }
    if let Some((index, error)) = read_failure {
        if let Some(slot) = slots.get_mut(index) {
            *slot = Some(Err(SegmentFailed { error, visited_end: 0, header: None }));
        }
    }
    slots.into_iter().map_while(|slot| slot).collect()
}
