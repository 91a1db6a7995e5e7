//! The write gate of one agent: ordinary writes pass it together, a batch holds it alone.
//!
//! A batch staged over several requests hands out ids that stay final only if nothing else
//! writes to the agent before it commits. So a session's batch holds its agent's gate from its
//! first write to its commit, and other sessions' writes wait meanwhile; ordinary writes pass
//! the gate side by side, so group commit still joins them. A batch waiting for the gate stops
//! new writes from passing, so a stream of writes cannot starve it. A stuck batch is dropped
//! after the client timeout, which bounds every wait.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// The state of one gate.
#[derive(Debug, Default)]
struct GateState {
    /// Ordinary writes passing now.
    writers: usize,
    /// The session whose batch holds the gate.
    batch_holder: Option<u64>,
    /// Batches waiting for the gate.
    batches_waiting: usize,
}

/// One agent's gate.
#[derive(Debug, Default)]
pub struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

impl Gate {
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, state: MutexGuard<'a, GateState>) -> MutexGuard<'a, GateState> {
        self.changed.wait(state).unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs an ordinary write, after any batch that holds or waits for the gate.
    pub fn write<T>(&self, write: impl FnOnce() -> T) -> T {
        {
            let mut state = self.state();
            while state.batch_holder.is_some() || state.batches_waiting > 0 {
                state = self.wait(state);
            }
            state.writers += 1;
        }
        let outcome = write();
        let mut state = self.state();
        state.writers -= 1;
        drop(state);
        self.changed.notify_all();
        outcome
    }

    /// Holds the gate for the batch of `session` until [`Gate::release`], once no other write
    /// passes.
    pub fn hold(&self, session: u64) {
        let mut state = self.state();
        state.batches_waiting += 1;
        while state.batch_holder.is_some() || state.writers > 0 {
            state = self.wait(state);
        }
        state.batches_waiting -= 1;
        state.batch_holder = Some(session);
    }

    /// Lets go of the gate held by `session`'s batch.
    pub fn release(&self, session: u64) {
        let mut state = self.state();
        if state.batch_holder == Some(session) {
            state.batch_holder = None;
        }
        drop(state);
        self.changed.notify_all();
    }
}

/// The gates of the agents, by agent name; a gate lives while a session uses it.
#[derive(Debug, Default)]
pub struct Gates {
    gates: Mutex<HashMap<String, Arc<Gate>>>,
}

impl Gates {
    /// The gate of the agent `name`.
    pub fn of(&self, name: &str) -> Arc<Gate> {
        let mut gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        gates.retain(|_, gate| Arc::strong_count(gate) > 1);
        gates.entry(name.to_owned()).or_default().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn a_write_waits_for_a_held_batch() {
        let gate = Arc::new(Gate::default());
        gate.hold(1);
        let written = Arc::new(AtomicBool::new(false));
        let writer = {
            let (gate, written) = (gate.clone(), written.clone());
            std::thread::spawn(move || gate.write(|| written.store(true, Ordering::SeqCst)))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!written.load(Ordering::SeqCst), "the write passed a held gate");
        gate.release(1);
        writer.join().unwrap();
        assert!(written.load(Ordering::SeqCst));
    }

    #[test]
    fn writes_pass_together_and_a_batch_waits_for_them() {
        let gate = Arc::new(Gate::default());
        gate.write(|| gate.write(|| ()));
        let held = Arc::new(AtomicBool::new(false));
        let (started, finished) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let writer = {
            let (gate, started, finished) = (gate.clone(), started.clone(), finished.clone());
            std::thread::spawn(move || {
                gate.write(|| {
                    started.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(50));
                    finished.store(true, Ordering::SeqCst);
                })
            })
        };
        while !started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        gate.hold(2);
        held.store(true, Ordering::SeqCst);
        assert!(finished.load(Ordering::SeqCst), "the batch held the gate during a write");
        gate.release(2);
        writer.join().unwrap();
    }

    #[test]
    fn gates_are_shared_by_name() {
        let gates = Gates::default();
        let one = gates.of("alice");
        assert!(Arc::ptr_eq(&one, &gates.of("alice")));
        assert!(!Arc::ptr_eq(&one, &gates.of("bob")));
    }
}
