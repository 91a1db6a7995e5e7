//! The thread that writes the access logs: request threads hand it their entries and go on.
//!
//! Each agent's log is one hash chain, so its appends are serialized; done on the threads that
//! serve requests, every write of an agent would queue behind the log's lock and its file write.
//! One writer thread takes that off their path. It gathers entries for a few milliseconds after
//! the first one comes in, so a stream of requests wakes it a few dozen times a second rather
//! than once per request (a wake per request cost a `get` more than its own work on a busy
//! machine). The queue is bounded: when the writer falls behind, request threads wait for room
//! rather than let memory grow.

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::serve_error::{ServeError, ServerThread};
use crate::access_log::{AccessEntry, AccessLogs};

/// Entries waiting for the writer at most; a server killed with SIGKILL loses those.
const QUEUED_ENTRIES_MAX: usize = 1024;
/// How long the writer gathers entries after the first before it writes them.
const GATHER_FOR: Duration = Duration::from_millis(20);

#[derive(Debug, Default)]
struct Queue {
    entries: Vec<(String, AccessEntry)>,
    /// Set by `finish`: write what is left, sync, stop.
    finishing: bool,
}

/// What the request threads and the writer thread share: the queue and its two wake-ups.
#[derive(Debug, Default)]
struct Handoff {
    queue: Mutex<Queue>,
    /// Wakes the writer: the first entry came in, the queue is half full, or the server stops.
    wake_writer: Condvar,
    /// Wakes request threads waiting for room.
    room: Condvar,
}

impl Handoff {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The way to the writer thread.
#[derive(Debug)]
pub struct AccessRecorder {
    handoff: Arc<Handoff>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl AccessRecorder {
    /// Starts the thread writing to `logs`.
    pub fn start(logs: AccessLogs) -> Result<AccessRecorder, ServeError> {
        let handoff = Arc::new(Handoff::default());
        let writer = std::thread::Builder::new()
            .name(String::from("cheesedb-access-log"))
            .spawn({
                let handoff = handoff.clone();
                move || write_entries(&logs, &handoff)
            })
            .map_err(|error| ServeError::Thread { thread: ServerThread::AccessLog, kind: error.kind() })?;
        Ok(AccessRecorder { handoff, writer: Mutex::new(Some(writer)) })
    }

    /// Hands `entry` for the log of `agent_name` to the writer, waiting only when the queue is
    /// full.
    pub fn append(&self, agent_name: String, entry: AccessEntry) {
        let mut queue = self.handoff.queue();
        while queue.entries.len() >= QUEUED_ENTRIES_MAX && !queue.finishing {
            self.handoff.wake_writer.notify_one();
            queue = self.handoff.room.wait(queue).unwrap_or_else(PoisonError::into_inner);
        }
        let was_empty = queue.entries.is_empty();
        queue.entries.push((agent_name, entry));
        if was_empty || queue.entries.len() >= QUEUED_ENTRIES_MAX / 2 {
            self.handoff.wake_writer.notify_one();
        }
    }

    /// Waits until every entry handed over is written and synced, and stops the writer.
    pub fn finish(&self) {
        self.handoff.queue().finishing = true;
        self.handoff.wake_writer.notify_one();
        let writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(writer) = writer {
            let _ = writer.join();
        }
    }
}

/// Takes the next entries to write: waits for the first, then gathers for [`GATHER_FOR`]
/// unless the queue fills up or the server stops. Returns them and whether to stop after.
fn next_entries(handoff: &Handoff) -> (Vec<(String, AccessEntry)>, bool) {
    let mut queue = handoff.queue();
    while queue.entries.is_empty() && !queue.finishing {
        queue = handoff.wake_writer.wait(queue).unwrap_or_else(PoisonError::into_inner);
    }
    if !queue.finishing && queue.entries.len() < QUEUED_ENTRIES_MAX / 2 {
        queue = handoff.wake_writer.wait_timeout(queue, GATHER_FOR).unwrap_or_else(PoisonError::into_inner).0;
    }
    let entries = std::mem::take(&mut queue.entries);
    let finishing = queue.finishing;
    drop(queue);
    handoff.room.notify_all();
    (entries, finishing)
}

/// Writes what comes in until told to finish. A failed append does not undo the request, whose
/// work is done: it is reported on standard error, once per agent until an append succeeds.
fn write_entries(logs: &AccessLogs, handoff: &Handoff) {
    let mut reported: HashSet<String> = HashSet::new();
    loop {
        let (entries, finishing) = next_entries(handoff);
        for (agent_name, entry) in entries {
            match logs.append(&agent_name, &entry) {
                Ok(()) => {
                    if !reported.is_empty() {
                        reported.remove(&agent_name);
                    }
                }
                Err(failure) => {
                    if reported.insert(agent_name) {
                        eprintln!("cheesedb serve: an access log could not be written: {failure}");
                    }
                }
            }
        }
        if finishing && handoff.queue().entries.is_empty() {
            if let Err(failure) = logs.sync() {
                eprintln!("cheesedb serve: the access logs could not be synced: {failure}");
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(number: u64) -> AccessEntry {
        AccessEntry {
            time_unix_ms: number,
            pid: 1,
            uid: 2,
            operation: String::from("get"),
            ids: vec![number],
            outcome: String::from("ok"),
        }
    }

    #[test]
    fn every_entry_handed_over_is_written_by_finish() {
        let folder = tempfile::tempdir().unwrap();
        let recorder = Arc::new(AccessRecorder::start(AccessLogs::open(folder.path()).unwrap()).unwrap());
        let threads: Vec<_> = (0..4u64)
            .map(|thread| {
                let recorder = recorder.clone();
                std::thread::spawn(move || {
                    (0..1000u64)
                        .for_each(|number| recorder.append(String::from("alice"), entry(thread * 1000 + number)));
                })
            })
            .collect();
        threads.into_iter().for_each(|thread| thread.join().unwrap());
        recorder.finish();
        let log = crate::access_log::read(folder.path(), "alice", &crate::access_log::Limits::default()).unwrap();
        assert_eq!(log.entries.len(), 4000);
    }

    #[test]
    fn a_lone_entry_is_written_without_waiting_for_more() {
        let folder = tempfile::tempdir().unwrap();
        let recorder = AccessRecorder::start(AccessLogs::open(folder.path()).unwrap()).unwrap();
        recorder.append(String::from("bob"), entry(1));
        std::thread::sleep(GATHER_FOR * 10);
        let log = crate::access_log::read(folder.path(), "bob", &crate::access_log::Limits::default()).unwrap();
        assert_eq!(log.entries.len(), 1, "written before finish");
        recorder.finish();
    }
}
