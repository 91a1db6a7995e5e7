//! Group commit for an agent: its writers that arrive while a sync is under way are written
//! together, with one sync, by one of them (see [`Grouping`]).

use std::sync::{Arc, Mutex};

use cheesedb_core::{AgentEngine, Error, Id, InternalRule, Leg, ReadSet, Report, Storage};

use crate::batch_gate::BatchGate;
use crate::compactor::Compactor;
use crate::grouping::Grouping;
use crate::mutex::lock;

/// A write as queued: owned, since the writer waits but its borrow cannot cross threads.
enum Write {
    Lot { label: String, content: Vec<u8> },
    Memory { content: Vec<u8>, legs: Vec<Leg>, reads: ReadSet },
}

/// One agent's engine with its queue of writes waiting to be grouped.
pub(crate) struct GroupedEngine<S: Storage> {
    pub(crate) engine: Mutex<AgentEngine<S>>,
    grouping: Grouping<Write>,
    /// Whether the engine is encrypted, which stays so for its life: answered without the lock.
    pub(crate) encrypted: bool,
    /// What the open found and did, for a forked process, which must not take the lock.
    pub(crate) report_at_open: Report,
    /// Who may write while a staged batch of the agent is open: every handle of it passes here.
    pub(crate) gate: Arc<BatchGate>,
    /// The agent's automatic compaction, and its open handles, whose last one stops it.
    pub(crate) compactor: Compactor,
}

impl<S: Storage> GroupedEngine<S> {
    /// The engine, once no handle shares it any more.
    pub(crate) fn into_engine(self) -> Result<AgentEngine<S>, Error> {
        self.engine.into_inner().map_err(|_| Error::Poisoned)
    }

    pub(crate) fn new(engine: AgentEngine<S>) -> GroupedEngine<S> {
        let encrypted = engine.is_encrypted();
        let report_at_open = engine.report();
        GroupedEngine {
            engine: Mutex::new(engine),
            grouping: Grouping::default(),
            encrypted,
            report_at_open,
            gate: Arc::default(),
            compactor: Compactor::default(),
        }
    }

    /// Adds a lot through the group.
    pub(crate) fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.submit(Write::Lot { label: label.to_owned(), content: content.to_vec() })
    }

    /// Adds a memory with read tracking through the group.
    pub(crate) fn remember_tracked(&self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        self.submit(Write::Memory { content: content.to_vec(), legs: legs.to_vec(), reads: reads.clone() })
    }

    fn submit(&self, write: Write) -> Result<Id, Error> {
        self.grouping.submit(write, |group| match lock(&self.engine) {
            Ok(mut engine) => commit_group(&mut engine, group),
            Err(error) => group.iter().map(|_| Err(error.clone())).collect(),
        })
    }
}

/// Writes a group as one batch; returns each write's result, in order.
fn commit_group<S: Storage>(engine: &mut AgentEngine<S>, group: &[Write]) -> Vec<Result<Id, Error>> {
    let mut outcomes: Vec<Result<Id, Error>> = Vec::with_capacity(group.len());
    let committed = engine.batch(|batch| {
        for write in group {
            let outcome = match write {
                Write::Lot { label, content } => batch.add_lot(label, content),
                Write::Memory { content, legs, reads } => batch.remember_tracked(content, legs, reads),
            };
            outcomes.push(outcome);
        }
        Ok(())
    });
    let mut outcomes = outcomes.into_iter();
    group
        .iter()
        .map(|_| {
            // A write that was admitted (or never looked at) fails with the batch if the batch
            // could not be written; a refused write keeps its own reason.
            match (&committed, outcomes.next()) {
                (Err(error), None | Some(Ok(_))) => Err(error.clone()),
                (_, Some(outcome)) => outcome,
                (Ok(()), None) => Err(Error::Internal { what: InternalRule::CommittedBatchAnswersEveryWrite }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::{mpsc, Condvar};
    use std::time::{Duration, Instant};

    use cheesedb_core::{Options, StorageFile, StoreEngine};

    use super::*;
    use crate::files::FileStorage;

    /// How long a test waits for something another thread must do before it calls it a hang.
    const PATIENCE: Duration = Duration::from_secs(20);

    /// While armed, each file sync stops until the test says how it ends.
    #[derive(Default)]
    struct Gate {
        state: Mutex<GateState>,
        changed: Condvar,
    }

    #[derive(Default)]
    struct GateState {
        armed: bool,
        /// Syncs that have stopped at the gate so far.
        arrived: usize,
        /// How the sync waiting at the gate ends: `Some(true)` fails it.
        verdict: Option<bool>,
    }

    impl Gate {
        fn pass(&self) -> std::io::Result<()> {
            let mut state = self.state.lock().unwrap();
            if !state.armed {
                return Ok(());
            }
            state.arrived += 1;
            self.changed.notify_all();
            let mut state = self.changed.wait_while(state, |state| state.verdict.is_none()).unwrap();
            let fail = state.verdict.take() == Some(true);
            if fail {
                return Err(std::io::Error::other("the disk refused the sync"));
            }
            Ok(())
        }

        fn wait_for_arrivals(&self, arrivals: usize) {
            let state = self.state.lock().unwrap();
            let (_state, timeout) =
                self.changed.wait_timeout_while(state, PATIENCE, |state| state.arrived < arrivals).unwrap();
            assert!(!timeout.timed_out(), "no sync reached the gate");
        }

        fn decide(&self, fail: bool) {
            self.state.lock().unwrap().verdict = Some(fail);
            self.changed.notify_all();
        }
    }

    #[derive(Clone)]
    struct GatedStorage {
        inner: FileStorage,
        gate: Arc<Gate>,
    }

    struct GatedFile {
        inner: <FileStorage as Storage>::File,
        gate: Arc<Gate>,
    }

    impl Storage for GatedStorage {
        type File = GatedFile;
        type Error = std::io::Error;
        fn open_file(&self, path: &str, create: bool) -> std::io::Result<GatedFile> {
            Ok(GatedFile { inner: self.inner.open_file(path, create)?, gate: self.gate.clone() })
        }
        fn exists(&self, path: &str) -> std::io::Result<bool> {
            self.inner.exists(path)
        }
        fn list(&self, folder: &str) -> std::io::Result<Vec<String>> {
            self.inner.list(folder)
        }
        fn create_folder(&self, path: &str) -> std::io::Result<()> {
            self.inner.create_folder(path)
        }
        fn remove_folder(&self, path: &str) -> std::io::Result<()> {
            self.inner.remove_folder(path)
        }
        fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
            self.inner.rename(from, to)
        }
        fn remove_file(&self, path: &str) -> std::io::Result<()> {
            self.inner.remove_file(path)
        }
        fn sync_folder(&self, folder: &str) -> std::io::Result<()> {
            self.inner.sync_folder(folder)
        }
        fn fill_random(&self, out: &mut [u8]) -> std::io::Result<()> {
            self.inner.fill_random(out)
        }
    }

    impl StorageFile for GatedFile {
        type Error = std::io::Error;
        fn len(&self) -> std::io::Result<u64> {
            self.inner.len()
        }
        fn read_at(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
            self.inner.read_at(offset, out)
        }
        fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
            self.inner.write_at(offset, bytes)
        }
        fn sync(&mut self) -> std::io::Result<()> {
            self.gate.pass()?;
            self.inner.sync()
        }
        fn set_len(&mut self, length: u64) -> std::io::Result<()> {
            self.inner.set_len(length)
        }
    }

    /// Starts a writer on its own thread; its result arrives on the returned channel.
    fn writer(shared: &Arc<GroupedEngine<GatedStorage>>, name: &str) -> mpsc::Receiver<Result<Id, Error>> {
        let (sender, receiver) = mpsc::channel();
        let shared = shared.clone();
        let content = name.as_bytes().to_vec();
        std::thread::spawn(move || sender.send(shared.add_lot("writer", &content)));
        receiver
    }

    fn wait_for_queued(shared: &GroupedEngine<GatedStorage>, queued: usize) {
        let started = Instant::now();
        while shared.grouping.queued() < queued {
            assert!(started.elapsed() < PATIENCE, "the writers never queued");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn answer(receiver: &mpsc::Receiver<Result<Id, Error>>) -> Result<Id, Error> {
        receiver.recv_timeout(PATIENCE).expect("a writer hung")
    }

    #[test]
    fn a_failed_sync_fails_every_writer_of_its_group_and_poisons_the_agent() {
        let folder = tempfile::tempdir().unwrap();
        let gate = Arc::new(Gate::default());
        let storage = GatedStorage { inner: FileStorage::new(folder.path()), gate: gate.clone() };
        // No zeros written ahead: each durable write is then exactly one sync at the gate (a
        // stretch of zeros that keeps the write margin would be synced on its own).
        let options = Options::default().preallocate_bytes(0);
        let mut store = StoreEngine::open(storage, options).unwrap();
        let token = store.create_agent("alice").unwrap();
        let engine = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let shared = Arc::new(GroupedEngine::new(engine));
        gate.state.lock().unwrap().armed = true;

        // The first writer leads alone and holds its sync while three more queue behind it.
        let first = writer(&shared, "first");
        gate.wait_for_arrivals(1);
        let group: Vec<_> = ["second", "third", "fourth"].iter().map(|name| writer(&shared, name)).collect();
        wait_for_queued(&shared, 3);
        gate.decide(false);
        assert_eq!(answer(&first), Ok(Id::from(1)));

        // The three are one group: one of them leads it, the others wait on its sync, which
        // fails while a fifth writer queues behind it.
        gate.wait_for_arrivals(2);
        let late = writer(&shared, "late");
        wait_for_queued(&shared, 1);
        gate.decide(true);
        for receiver in &group {
            let result = answer(receiver);
            assert!(matches!(result, Err(Error::OutcomeUnknown { .. })), "a writer of the failed group got {result:?}");
        }
        assert_eq!(answer(&late), Err(Error::Poisoned));
        assert_eq!(shared.add_lot("after", b"after"), Err(Error::Poisoned));
        assert_eq!(gate.state.lock().unwrap().arrived, 2, "nothing was synced after the failure");
    }
}
