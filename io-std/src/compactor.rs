//! [`Compactor`]: the thread of one agent's automatic compaction (see `auto_compaction`), and
//! the count of the agent's open handles, whose last one stops it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// The automatic compaction of one agent's engine: how many handles of the agent are open, and
/// the thread compacting it, if one is.
#[derive(Debug, Default)]
pub(crate) struct Compactor {
    state: Mutex<CompactorState>,
    /// Asks the thread to stop before its next segment.
    stop: Arc<AtomicBool>,
}

#[derive(Debug, Default)]
struct CompactorState {
    /// Handles of the agent open now: a thread starts only while one is, since only the end of
    /// the last one stops it.
    handles: usize,
    thread: Option<JoinHandle<()>>,
}

impl Compactor {
    fn state(&self) -> std::sync::MutexGuard<'_, CompactorState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a new handle of the agent.
    pub(crate) fn handle_opened(&self) {
        self.state().handles += 1;
    }

    /// Counts the end of a handle; at the last one, stops the thread and waits for the segment
    /// it is rewriting.
    pub(crate) fn handle_ended(&self) {
        let thread = {
            let mut state = self.state();
            state.handles = state.handles.saturating_sub(1);
            if state.handles > 0 {
                return;
            }
            self.stop.store(true, Ordering::SeqCst);
            state.thread.take()
        };
        if let Some(thread) = thread {
            // Woken, in case it is pausing.
            thread.thread().unpark();
            // A panic on the thread left the engine's lock poisoned, which every later call
            // reports: nothing more to say here.
            let _ = thread.join();
        }
    }

    /// Starts a thread with `spawn`, which is given the flag that asks it to stop, unless one
    /// is running already or no handle of the agent is open (only the end of the last one
    /// stops a thread).
    pub(crate) fn start(&self, spawn: impl FnOnce(Arc<AtomicBool>) -> std::io::Result<JoinHandle<()>>) {
        let mut state = self.state();
        let running = state.thread.as_ref().is_some_and(|thread| !thread.is_finished());
        if running || state.handles == 0 {
            return;
        }
        self.stop.store(false, Ordering::SeqCst);
        // Without a thread the compaction waits for the next recall or open: nothing is lost.
        state.thread = spawn(self.stop.clone()).ok();
    }
}
