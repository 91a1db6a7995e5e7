//! [`Grouping`]: writers that arrive while a sync is under way are written together, with one
//! sync, by one of them.
//!
//! Each writer queues its write. If no writer is leading, it leads: it takes the queue, has the
//! group committed (each write checked on its own, the rest written as one batch with one
//! sync), hands every writer its result and wakes them. Otherwise it sleeps until a leader has
//! finished and looks again: either its result is there, or it leads the next group. While one
//! group syncs, the next queues up, so the busier the log, the more writes share each sync.

use std::sync::{Arc, Condvar, Mutex};

use cheesedb_core::{Error, Id};

use crate::mutex::{lock, LOCK_POISONED};

/// The most writes one group commits, so a group stays well inside the batch limits.
const GROUP_MAX_WRITES: usize = 1024;

type Outcome = Arc<Mutex<Option<Result<Id, Error>>>>;

/// One queued write and where its result goes.
struct Request<W> {
    write: W,
    outcome: Outcome,
}

struct Queue<W> {
    requests: Vec<Request<W>>,
    /// Whether a writer is committing a group right now.
    leading: bool,
}

/// The queue of writes of one log waiting to be grouped.
pub(crate) struct Grouping<W> {
    queue: Mutex<Queue<W>>,
    group_done: Condvar,
}

impl<W> Default for Grouping<W> {
    fn default() -> Grouping<W> {
        Grouping { queue: Mutex::new(Queue { requests: Vec::new(), leading: false }), group_done: Condvar::new() }
    }
}

impl<W> Grouping<W> {
    /// Queues `write` and waits for its result; a writer that leads a group has it written by
    /// `commit`, which answers each write of the group, in order.
    pub(crate) fn submit(&self, write: W, commit: impl Fn(&[W]) -> Vec<Result<Id, Error>>) -> Result<Id, Error> {
        let outcome: Outcome = Arc::default();
        let mut queue = lock(&self.queue)?;
        queue.requests.push(Request { write, outcome: outcome.clone() });
        loop {
            if let Some(result) = lock(&outcome)?.take() {
                return result;
            }
            if queue.leading {
                queue = self.group_done.wait(queue).map_err(|_| LOCK_POISONED)?;
                continue;
            }
            queue.leading = true;
            let count = queue.requests.len().min(GROUP_MAX_WRITES);
            let group: Vec<Request<W>> = queue.requests.drain(..count).collect();
            drop(queue);
            let (writes, outcomes): (Vec<W>, Vec<Outcome>) =
                group.into_iter().map(|request| (request.write, request.outcome)).unzip();
            let committed = commit(&writes);
            for (index, outcome) in outcomes.iter().enumerate() {
                let result = committed.get(index).cloned().unwrap_or(Err(Error::Internal {
                    what: cheesedb_core::InternalRule::CommittedBatchAnswersEveryWrite,
                }));
                // Poisoning cannot leave a slot half-written; take it back rather than leave a
                // writer without its answer.
                *outcome.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(result);
            }
            // Whatever happened, the next writer must be able to lead.
            queue = self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            queue.leading = false;
            self.group_done.notify_all();
        }
    }

    /// How many writes wait in the queue, for tests that hold a group at its sync.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.queue.lock().map_or(0, |queue| queue.requests.len())
    }
}
