//! The thread that writes the access logs: request threads hand it their entries and go on.
//!
//! Each agent's log is one hash chain, so its appends are serialized; done on the threads that
//! serve requests, every write of an agent would queue behind the log's lock and its file write.
//! One writer thread takes that off their path. The queue is bounded: when the writer falls
//! behind, request threads wait for room rather than let memory grow.

use std::collections::HashSet;
use std::sync::mpsc::{self, Receiver, SyncSender};

use crate::access_log::{AccessEntry, AccessLogs};
use crate::failure::Failure;

/// Entries waiting for the writer at most; a server killed with SIGKILL loses those.
const QUEUED_ENTRIES_MAX: usize = 1024;

enum Message {
    /// An entry for the log of `agent_name`.
    Entry { agent_name: String, entry: AccessEntry },
    /// Sync every log, answer, and stop.
    Finish(mpsc::Sender<()>),
}

/// The way to the writer thread.
#[derive(Debug)]
pub struct AccessRecorder {
    queue: SyncSender<Message>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Message")
    }
}

impl AccessRecorder {
    /// Starts the thread writing to `logs`.
    pub fn start(logs: AccessLogs) -> Result<AccessRecorder, Failure> {
        let (queue, received) = mpsc::sync_channel(QUEUED_ENTRIES_MAX);
        std::thread::Builder::new()
            .name(String::from("cheesedb-access-log"))
            .spawn(move || write_entries(&logs, &received))
            .map_err(|error| Failure::new(format!("cannot start the thread writing the access log: {error}")))?;
        Ok(AccessRecorder { queue })
    }

    /// Hands `entry` for the log of `agent_name` to the writer, waiting only when its queue is
    /// full.
    pub fn append(&self, agent_name: String, entry: AccessEntry) {
        // The writer only stops at `finish`, after every request thread ended.
        let _ = self.queue.send(Message::Entry { agent_name, entry });
    }

    /// Waits until every entry handed over is written and synced, and stops the writer.
    pub fn finish(&self) {
        let (done, finished) = mpsc::channel();
        if self.queue.send(Message::Finish(done)).is_ok() {
            let _ = finished.recv();
        }
    }
}

/// Writes what comes in until told to finish. A failed append does not undo the request, whose
/// work is done: it is reported on standard error, once per agent until an append succeeds.
fn write_entries(logs: &AccessLogs, received: &Receiver<Message>) {
    let mut reported: HashSet<String> = HashSet::new();
    for message in received {
        match message {
            Message::Entry { agent_name, entry } => match logs.append(&agent_name, &entry) {
                Ok(()) => {
                    if !reported.is_empty() {
                        reported.remove(&agent_name);
                    }
                }
                Err(failure) => {
                    if reported.insert(agent_name) {
                        eprintln!("cheesedb serve: an access log could not be written: {}", failure.message());
                    }
                }
            },
            Message::Finish(done) => {
                if let Err(failure) = logs.sync() {
                    eprintln!("cheesedb serve: the access logs could not be synced: {}", failure.message());
                }
                let _ = done.send(());
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_handed_over_is_written_by_finish() {
        let folder = tempfile::tempdir().unwrap();
        let recorder = AccessRecorder::start(AccessLogs::open(folder.path()).unwrap()).unwrap();
        for number in 0..3000u64 {
            let entry = AccessEntry {
                time_unix_ms: number,
                pid: 1,
                uid: 2,
                operation: String::from("get"),
                ids: vec![number],
                outcome: String::from("ok"),
            };
            recorder.append(String::from("alice"), entry);
        }
        recorder.finish();
        let log = crate::access_log::read(folder.path(), "alice", &crate::access_log::Limits::default()).unwrap();
        assert_eq!(log.entries.len(), 3000);
    }
}
