//! [`BatchGate`]: who may write to one agent while a staged batch of it is open.
//!
//! A staged batch hands out ids while it is open, and they stay final only if nothing else
//! writes to the agent before it commits. So an open batch holds its agent's gate from its first
//! step to its commit (or drop), and every other write of the agent passes the gate, waiting
//! while a batch holds it. Ordinary writes pass side by side, so group commit still joins them;
//! a batch waiting for the gate stops new writes from passing, so a stream of writes cannot
//! starve it.
//!
//! The gate belongs to the thread that opened the batch: a write on that thread outside the
//! batch would wait for a commit only that thread can make, so it is refused
//! (`Error::BatchOpen`) instead, and so is a second batch there. The batch may end on any thread.
//! A memory server serves each connection on a thread of its own, so a session's batch and its
//! thread are one.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, ThreadId};

use cheesedb_core::Error;

/// The state of one gate.
#[derive(Debug, Default)]
struct GateState {
    /// Ordinary writes passing now.
    writers: usize,
    /// The thread whose batch holds the gate.
    holder: Option<ThreadId>,
    /// Batches waiting for the gate.
    batches_waiting: usize,
}

/// One agent's gate, shared by every handle of the agent that one store (or one connected
/// store) opened.
#[derive(Debug, Default)]
pub(crate) struct BatchGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

impl BatchGate {
    /// The state, even after a panic elsewhere: it holds counts and an id, each changed whole.
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, state: MutexGuard<'a, GateState>) -> MutexGuard<'a, GateState> {
        self.changed.wait(state).unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs an ordinary write once no batch holds or waits for the gate.
    ///
    /// # Errors
    ///
    /// `Error::BatchOpen` when the batch holding the gate was opened on this thread; otherwise
    /// the error of `write`.
    pub(crate) fn write<T>(&self, write: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        let me = thread::current().id();
        {
            let mut state = self.state();
            loop {
                if state.holder == Some(me) {
                    return Err(Error::BatchOpen);
                }
                if state.holder.is_none() && state.batches_waiting == 0 {
                    break;
                }
                state = self.wait(state);
            }
            state.writers += 1;
        }
        let _passed = Passing { gate: self };
        write()
    }

    /// Holds the gate for a batch of this thread until [`BatchGate::release`], once no other
    /// write passes and no other batch holds it.
    ///
    /// # Errors
    ///
    /// `Error::BatchOpen` when a batch of this thread holds the gate already.
    pub(crate) fn hold(&self) -> Result<(), Error> {
        let me = thread::current().id();
        let mut state = self.state();
        if state.holder == Some(me) {
            return Err(Error::BatchOpen);
        }
        state.batches_waiting += 1;
        while state.holder.is_some() || state.writers > 0 {
            state = self.wait(state);
        }
        state.batches_waiting -= 1;
        state.holder = Some(me);
        Ok(())
    }

    /// Lets go of the gate a batch holds, whichever thread ends it.
    pub(crate) fn release(&self) {
        self.state().holder = None;
        self.changed.notify_all();
    }

    /// Whether the batch holding the gate is one of this thread.
    pub(crate) fn held_here(&self) -> bool {
        self.state().holder == Some(thread::current().id())
    }
}

/// An ordinary write passing the gate; when it ends (or panics), the gate hears of it.
struct Passing<'gate> {
    gate: &'gate BatchGate,
}

impl Drop for Passing<'_> {
    fn drop(&mut self) {
        self.gate.state().writers -= 1;
        self.gate.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    #[test]
    fn a_write_of_another_thread_waits_for_a_held_batch() {
        let gate = Arc::new(BatchGate::default());
        gate.hold().unwrap();
        let (started, started_seen) = mpsc::channel();
        let written = Arc::new(AtomicBool::new(false));
        let writer = {
            let (gate, written) = (gate.clone(), written.clone());
            std::thread::spawn(move || {
                started.send(()).unwrap();
                gate.write(|| {
                    written.store(true, Ordering::SeqCst);
                    Ok(())
                })
            })
        };
        started_seen.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!written.load(Ordering::SeqCst), "the write passed a held gate");
        gate.release();
        writer.join().unwrap().unwrap();
        assert!(written.load(Ordering::SeqCst));
    }

    #[test]
    fn the_batch_thread_is_refused_rather_than_left_waiting_for_itself() {
        let gate = BatchGate::default();
        gate.hold().unwrap();
        assert!(gate.held_here());
        assert_eq!(gate.write(|| Ok(())), Err(Error::BatchOpen));
        assert_eq!(gate.hold(), Err(Error::BatchOpen));
        gate.release();
        assert!(!gate.held_here());
        assert_eq!(gate.write(|| Ok(1)), Ok(1));
    }

    #[test]
    fn writes_pass_together_and_a_batch_waits_for_them() {
        let gate = Arc::new(BatchGate::default());
        assert_eq!(gate.write(|| gate.write(|| Ok(2))), Ok(2), "two writes pass at once");
        let (inside, inside_seen) = mpsc::channel();
        let finished = Arc::new(AtomicBool::new(false));
        let writer = {
            let (gate, finished) = (gate.clone(), finished.clone());
            std::thread::spawn(move || {
                gate.write(|| {
                    inside.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(50));
                    finished.store(true, Ordering::SeqCst);
                    Ok(())
                })
            })
        };
        inside_seen.recv().unwrap();
        gate.hold().unwrap();
        assert!(finished.load(Ordering::SeqCst), "the batch held the gate during a write");
        gate.release();
        writer.join().unwrap().unwrap();
    }

    #[test]
    fn a_batch_ended_on_another_thread_lets_the_gate_go() {
        let gate = Arc::new(BatchGate::default());
        gate.hold().unwrap();
        let ender = gate.clone();
        std::thread::spawn(move || ender.release()).join().unwrap();
        assert_eq!(gate.write(|| Ok(())), Ok(()));
    }
}
