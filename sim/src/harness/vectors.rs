//! Vectors: the set-vector step (a vector with markers attached to an alive node, or one the
//! engine must refuse with the model's error), and the vectors a batch attaches.

use cheesedb_core::{Error, Id, StorageOperation};

use super::operations::{describe, WriteKind};
use super::world::{call, Called, Step, Stop, World};
use crate::canary;
use crate::model::{AgentModel, ModelWrite};

/// The dimensions an agent's vectors take, drawn whenever it has no alive vector.
const DIMENSIONS: [usize; 5] = [8, 12, 16, 24, 64];

/// The storage operations of a call that only reads: one of them failing leaves nothing
/// written and the engine usable (the search index is built by reading the log).
const READING_OPERATIONS: [StorageOperation; 5] = [
    StorageOperation::Reading,
    StorageOperation::Opening,
    StorageOperation::Measuring,
    StorageOperation::Checking,
    StorageOperation::Listing,
];

impl World {
    /// The dimension of a new vector for `model`: its agent's, or any when it has no alive one.
    pub(crate) fn vector_dimension_for(&mut self, model: &AgentModel) -> usize {
        match model.vector_dimension() {
            Some(dimension) => dimension,
            None => *self.random.pick(&DIMENSIONS).unwrap_or(&canary::VECTOR_DIMENSION_MIN),
        }
    }

    /// A fresh vector with markers, of `dimension` numbers, for agent `agent`.
    pub(crate) fn vector(&mut self, agent: usize, dimension: usize) -> Vec<f32> {
        let serial = self.next_serial_for(agent);
        canary::vector(serial, dimension, &mut self.random)
    }

    /// A vector the engine must refuse: empty, with a number that is not finite, all zeros, or
    /// (when the agent has alive vectors) of another dimension.
    pub(crate) fn invalid_vector(&mut self, agent: usize, model: &AgentModel) -> Vec<f32> {
        let dimension = self.vector_dimension_for(model);
        match self.random.below(4) {
            0 => Vec::new(),
            1 => {
                let mut vector = self.vector(agent, dimension);
                let position = self.random.index(vector.len());
                let bad = *self.random.pick(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY]).unwrap_or(&f32::NAN);
                if let Some(number) = vector.get_mut(position) {
                    *number = bad;
                }
                vector
            }
            2 => vec![0.0; dimension],
            _ => {
                let other = dimension + 4 * (1 + self.random.index(3));
                self.vector(agent, other)
            }
        }
    }

    /// Vectors for a batch of agent `agent`, two times in five: each for a node of `alive` (the
    /// alive nodes and those the batch adds), all of one dimension; rarely one more the engine
    /// must refuse.
    pub(crate) fn batch_vectors(&mut self, agent: usize, model: &AgentModel, alive: &[u64]) -> Vec<ModelWrite> {
        let mut writes = Vec::new();
        if alive.is_empty() || !self.random.chance(0.4) {
            return writes;
        }
        let dimension = self.vector_dimension_for(model);
        for _ in 0..self.random.between(1, 3) {
            let id = alive.get(self.random.index(alive.len())).copied().unwrap_or(1);
            let vector = self.vector(agent, dimension);
            writes.push(ModelWrite::Vector { id, vector });
        }
        if self.random.chance(0.05) {
            let dead: Vec<u64> = model.ids().filter(|id| !model.is_alive(*id)).collect();
            let (id, vector) = match self.random.below(3) {
                0 if !dead.is_empty() => {
                    (dead.get(self.random.index(dead.len())).copied().unwrap_or(1), self.vector(agent, dimension))
                }
                1 => (alive.last().copied().unwrap_or(1) + 1 + self.random.below(3), self.vector(agent, dimension)),
                _ => {
                    (alive.get(self.random.index(alive.len())).copied().unwrap_or(1), self.invalid_vector(agent, model))
                }
            };
            writes.push(ModelWrite::Vector { id, vector });
        }
        writes
    }

    /// Attaches a vector to a node of agent `agent`: usually a valid one to an alive node;
    /// sometimes one to a recalled or unknown node, or a vector the engine must refuse.
    pub(crate) fn set_vector(&mut self, agent: usize) -> Step {
        let model = self.slot(agent)?.model.clone();
        let alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
        let dead: Vec<u64> = model.ids().filter(|id| !model.is_alive(*id)).collect();
        let target = match self.random.below(20) {
            0 if !dead.is_empty() => dead.get(self.random.index(dead.len())).copied().unwrap_or(1),
            1 => model.next_id() + self.random.below(3),
            _ if !alive.is_empty() => alive.get(self.random.index(alive.len())).copied().unwrap_or(1),
            _ => return self.add_lot(agent),
        };
        let vector = if self.random.chance(0.1) {
            self.invalid_vector(agent, &model)
        } else {
            let dimension = self.vector_dimension_for(&model);
            self.vector(agent, dimension)
        };
        let mut after = model.clone();
        let expected = after.set_vector(target, &vector);
        let count_before = model.nodes.len() as u64;
        let label = format!("set_vector {target} ({} numbers)", vector.len());
        let (engine, storage) = self.engine(agent)?;
        let called = call(&storage, &label, || engine.set_vector(Id::from(target), &vector))?;
        match (expected, called) {
            (Ok(()), Called::Done(())) => {
                self.stats.vectors_set += 1;
                self.acknowledged(agent, after)
            }
            (Err(expected), Called::Refused(error)) if error == expected => {
                self.refused_cleanly(agent, count_before, &label)
            }
            (_, Called::Failed(error)) if self.read_failed_before_writing(agent, &error)? => Ok(()),
            (Ok(()), Called::Failed(error)) => {
                self.unacknowledged(agent, Some(error), after, WriteKind::Append, &label)
            }
            (Ok(()), Called::PowerLost) => self.unacknowledged(agent, None, after, WriteKind::Append, &label),
            // A refusal may come after the index was read; that read may fail.
            (Err(_), Called::PowerLost) => self.reopen(true),
            (Err(_), Called::Failed(error)) if error.is_corruption() => self.corruption(&error, &label),
            (expected, called) => Err(Stop::Violation(format!(
                "{label}: the model expects {expected:?}, the engine answered {}",
                describe(&called)
            ))),
        }
    }

    /// Whether `error` is a read that failed while the search index was built, before anything
    /// was written: then the call is refused, nothing is written and the engine stays usable.
    pub(crate) fn read_failed_before_writing(&mut self, agent: usize, error: &Error) -> Result<bool, Stop> {
        let Error::Io { operation, .. } = error else { return Ok(false) };
        if !READING_OPERATIONS.contains(operation) {
            return Ok(false);
        }
        let (engine, _) = self.engine(agent)?;
        if engine.is_poisoned() {
            return Ok(false);
        }
        self.stats.failures_reported += 1;
        Ok(true)
    }
}
