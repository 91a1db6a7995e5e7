//! Group commit: writers to one agent that arrive while a sync is under way are written
//! together, with one sync, by one of them.
//!
//! Each writer queues its write. If no writer is leading, it leads: it takes the queue, validates
//! each write on its own (a refused write fails alone), writes the rest as one batch with one
//! sync, hands every writer its result and wakes them. Otherwise it sleeps until a leader has
//! finished and looks again: either its result is there, or it leads the next group. While one
//! group syncs, the next queues up, so the busier the agent, the more writes share each sync.

use std::sync::{Arc, Condvar, Mutex};

use cheesedb_core::{AgentEngine, Error, Id, Leg, Storage};

use crate::store::lock;

/// The most writes one group commits, so a group stays well inside the batch limits.
const GROUP_MAX_WRITES: usize = 1024;

type Outcome = Arc<Mutex<Option<Result<Id, Error>>>>;

/// One queued write and where its result goes.
struct Request {
    write: Write,
    outcome: Outcome,
}

/// A write as queued: owned, since the writer waits but its borrow cannot cross threads.
enum Write {
    Lot { label: String, content: Vec<u8> },
    Memory { content: Vec<u8>, legs: Vec<Leg> },
}

#[derive(Default)]
struct Queue {
    requests: Vec<Request>,
    /// Whether a writer is committing a group right now.
    leading: bool,
}

/// One agent's engine with its queue of writes waiting to be grouped.
pub(crate) struct Shared<S: Storage> {
    pub(crate) engine: Mutex<AgentEngine<S>>,
    queue: Mutex<Queue>,
    group_done: Condvar,
}

impl<S: Storage> Shared<S> {
    pub(crate) fn new(engine: AgentEngine<S>) -> Shared<S> {
        Shared { engine: Mutex::new(engine), queue: Mutex::default(), group_done: Condvar::new() }
    }

    /// Adds a lot through the group.
    pub(crate) fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.submit(Write::Lot { label: label.to_owned(), content: content.to_vec() })
    }

    /// Adds a memory through the group.
    pub(crate) fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.submit(Write::Memory { content: content.to_vec(), legs: legs.to_vec() })
    }

    fn submit(&self, write: Write) -> Result<Id, Error> {
        let outcome: Outcome = Arc::default();
        let mut queue = lock(&self.queue)?;
        queue.requests.push(Request { write, outcome: outcome.clone() });
        loop {
            if let Some(result) = lock(&outcome)?.take() {
                return result;
            }
            if queue.leading {
                queue = self.group_done.wait(queue).map_err(|_| Error::Poisoned)?;
                continue;
            }
            queue.leading = true;
            let count = queue.requests.len().min(GROUP_MAX_WRITES);
            let group: Vec<Request> = queue.requests.drain(..count).collect();
            drop(queue);
            let committed = match lock(&self.engine) {
                Ok(mut engine) => commit_group(&mut engine, &group),
                Err(error) => group.iter().map(|_| Err(error.clone())).collect(),
            };
            for (request, result) in group.iter().zip(committed) {
                // Poisoning cannot leave a slot half-written; take it back rather than leave a
                // writer without its answer.
                *request.outcome.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(result);
            }
            // Whatever happened, the next writer must be able to lead.
            queue = self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            queue.leading = false;
            self.group_done.notify_all();
        }
    }
}

/// Writes a group as one batch; returns each write's result, in order.
fn commit_group<S: Storage>(engine: &mut AgentEngine<S>, group: &[Request]) -> Vec<Result<Id, Error>> {
    let mut outcomes: Vec<Result<Id, Error>> = Vec::with_capacity(group.len());
    let committed = engine.batch(|batch| {
        for request in group {
            let outcome = match &request.write {
                Write::Lot { label, content } => batch.add_lot(label, content),
                Write::Memory { content, legs } => batch.remember(content, legs),
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
                (Ok(()), None) => Err(Error::Poisoned),
            }
        })
        .collect()
}
