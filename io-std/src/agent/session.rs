//! What one open of a local agent keeps beside the shared engine: its read tracking and its
//! staged batch. Clones of the handle share it; another open of the agent has its own.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cheesedb_core::{ReadSet, StagedBatch};

use crate::batch_gate::BatchGate;
use crate::process::OpeningProcess;
use crate::read_tracking::ReadTracking;

/// A staged batch kept by the handle between its steps.
#[derive(Debug, Default)]
pub(crate) struct OpenStaged {
    /// The writes staged so far.
    pub(crate) staged: StagedBatch,
    /// The reads the staged memories were given, forgotten once the batch is written.
    pub(crate) reads_used: ReadSet,
    /// Whether a staged memory was given reads.
    pub(crate) remembered: bool,
}

/// One open's session.
#[derive(Debug)]
pub(crate) struct LocalSession {
    /// Shared with the handles to spaces this session opens: what they show is read too.
    pub(crate) tracking: Arc<ReadTracking>,
    /// The staged batch; while there is one, this session's opening thread holds `gate`.
    staged: Mutex<Option<OpenStaged>>,
    pub(crate) gate: Arc<BatchGate>,
    process: OpeningProcess,
}

impl LocalSession {
    /// A session of an agent whose writes pass `gate`, with read tracking off.
    pub(crate) fn new(gate: Arc<BatchGate>, process: OpeningProcess) -> LocalSession {
        LocalSession { tracking: Arc::default(), staged: Mutex::default(), gate, process }
    }

    /// The staged batch, even after a panic of a step: a step changes the batch's writes whole
    /// (the engine hands them back whatever `collect` did), and a commit checks them again.
    pub(crate) fn staged(&self) -> MutexGuard<'_, Option<OpenStaged>> {
        self.staged.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for LocalSession {
    /// A batch left open by the last handle of the session writes nothing, and lets the other
    /// writers of the agent go on. A forked child leaves the gate alone: it is the parent's.
    fn drop(&mut self) {
        if self.process.is_current() && self.staged().take().is_some() {
            self.gate.release();
        }
    }
}
