//! Group commit: writers to one agent that arrive while a sync is under way are written
//! together, with one sync, by whichever of them gets the engine next.
//!
//! Each writer queues its write, then takes the engine's lock. If another writer already wrote
//! the queued write, the result is waiting; otherwise this writer leads: it takes the whole
//! queue, validates each write on its own (a refused write fails alone), writes the rest as one
//! batch with one sync, and hands every writer its result. While it syncs, the next writers
//! queue up behind the lock, so the busier the agent, the more writes share each sync.

use std::sync::{Arc, Mutex};

use cheesedb_core::{AgentEngine, Error, Id, Leg, Storage};

use crate::store::lock;

/// The most writes one group commits, so a group stays well inside the batch limits.
const GROUP_MAX_WRITES: usize = 1024;

/// One queued write and where its result goes.
struct Request {
    write: Write,
    result: Arc<Mutex<Option<Result<Id, Error>>>>,
}

/// A write as queued: owned, since the writer waits but its borrow cannot cross threads.
enum Write {
    Lot { label: String, content: Vec<u8> },
    Memory { content: Vec<u8>, legs: Vec<Leg> },
}

/// One agent's engine with its queue of writes waiting to be grouped.
pub(crate) struct Shared<S: Storage> {
    pub(crate) engine: Mutex<AgentEngine<S>>,
    queue: Mutex<Vec<Request>>,
}

impl<S: Storage> Shared<S> {
    pub(crate) fn new(engine: AgentEngine<S>) -> Shared<S> {
        Shared { engine: Mutex::new(engine), queue: Mutex::new(Vec::new()) }
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
        let result = Arc::new(Mutex::new(None));
        lock(&self.queue)?.push(Request { write, result: result.clone() });
        let mut engine = lock(&self.engine)?;
        loop {
            if let Some(outcome) = lock(&result)?.take() {
                return outcome;
            }
            let group: Vec<Request> = {
                let mut queue = lock(&self.queue)?;
                let count = queue.len().min(GROUP_MAX_WRITES);
                queue.drain(..count).collect()
            };
            commit_group(&mut engine, group)?;
        }
    }
}

/// Writes a group as one batch and hands out the results.
fn commit_group<S: Storage>(engine: &mut AgentEngine<S>, group: Vec<Request>) -> Result<(), Error> {
    let mut outcomes: Vec<Result<Id, Error>> = Vec::with_capacity(group.len());
    let committed = engine.batch(|batch| {
        for request in &group {
            let outcome = match &request.write {
                Write::Lot { label, content } => batch.add_lot(label, content),
                Write::Memory { content, legs } => batch.remember(content, legs),
            };
            outcomes.push(outcome);
        }
        Ok(())
    });
    let mut outcomes = outcomes.into_iter();
    for request in group {
        // A write that was admitted (or never looked at) fails with the batch if the batch
        // could not be written; a refused write keeps its own reason.
        let outcome = match (&committed, outcomes.next()) {
            (Err(error), None | Some(Ok(_))) => Err(error.clone()),
            (_, Some(outcome)) => outcome,
            (Ok(()), None) => Err(Error::Poisoned),
        };
        *lock(&request.result)? = Some(outcome);
    }
    Ok(())
}
