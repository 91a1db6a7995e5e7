//! The workload steps: each draws its arguments, computes what the model expects, calls the
//! engine inside a trace window and compares.

use std::collections::BTreeSet;

use cheesedb_core::{AgentEngine, Batch, Error, Id, Leg, Mode, ReadSet, Removal, StagedBatch, Token};

use super::labels::LABELS;
use super::sealed::encrypted_agent;
use super::world::{call, Called, Slot, Step, Stop, StoreDoubt, World};
use crate::compare::{compare_node, merge_uncertain, Mismatch};
use crate::model::{AgentModel, ModelWrite};
use crate::storage::SimStorage;

/// Which kind of write was cut short, for the crash counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Append,
    Erase,
    Compaction,
}

fn as_legs(legs: &[Vec<u64>]) -> Vec<Leg> {
    legs.iter().map(|leg| leg.iter().map(|id| Id::from(*id)).collect()).collect()
}

fn ids(ids: &[Id]) -> Vec<u64> {
    ids.iter().map(|id| id.get()).collect()
}

impl World {
    /// Legs over `alive` (and `pending` batch ids): one to three legs of one to three parents,
    /// half of them drawn from the newest nodes so chains grow deep and diamonds form.
    fn draw_legs(&mut self, alive: &[u64]) -> Vec<Vec<u64>> {
        let leg_count = 1 + self.random.weighted(&[6, 3, 1]);
        let newest = alive.get(alive.len().saturating_sub(4)..).unwrap_or_default().to_vec();
        (0..leg_count)
            .map(|_| {
                let parent_count = 1 + self.random.weighted(&[5, 3, 2]);
                (0..parent_count)
                    .filter_map(|_| {
                        let pool = if self.random.chance(0.5) { &newest } else { alive };
                        pool.get(self.random.index(pool.len())).copied()
                    })
                    .collect()
            })
            .collect()
    }

    /// Legs that must be refused: none, an empty one, a dead parent or an unknown one.
    fn draw_invalid_legs(&mut self, model: &AgentModel) -> Vec<Vec<u64>> {
        let alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
        let dead: Vec<u64> = model.ids().filter(|id| !model.is_alive(*id)).collect();
        let mut legs = self.draw_legs(&alive);
        match self.random.below(4) {
            0 => Vec::new(),
            1 => {
                let position = self.random.index(legs.len() + 1);
                legs.insert(position.min(legs.len()), Vec::new());
                legs
            }
            2 if !dead.is_empty() => {
                let parent = dead.get(self.random.index(dead.len())).copied().unwrap_or(1);
                legs.push(vec![parent]);
                legs
            }
            _ => {
                legs.push(vec![model.next_id() + self.random.below(5)]);
                legs
            }
        }
    }

    pub(super) fn label(&mut self) -> String {
        LABELS.get(self.random.index(LABELS.len())).copied().unwrap_or("source").to_string()
    }

    /// Records an unacknowledged write: it happened or not, the next reopen decides.
    fn set_doubt(&mut self, agent: usize, after: AgentModel) -> Step {
        let slot = self.slot(agent)?;
        match merge_uncertain(&slot.model, &after) {
            // The write changes only where text is (an Erase of a dead id, a compaction):
            // nothing visible but the text tells, so the model accepts either for those nodes.
            Some(merged) => slot.model = merged,
            None => slot.in_doubt = Some(after),
        }
        Ok(())
    }

    /// A write the engine did not acknowledge.
    pub(super) fn unacknowledged(
        &mut self,
        agent: usize,
        called_failed: Option<Error>,
        after: AgentModel,
        kind: WriteKind,
        label: &str,
    ) -> Step {
        let Some(error) = called_failed else {
            self.set_doubt(agent, after)?;
            match kind {
                WriteKind::Erase => self.stats.crashes_during_erase += 1,
                WriteKind::Compaction => self.stats.crashes_during_compaction += 1,
                WriteKind::Append => {}
            }
            return self.reopen(true);
        };
        if self.key_slots_failed_before_writing(agent, &error)? {
            return Ok(());
        }
        match error {
            Error::Corrupt { .. } | Error::HistoryMismatch { .. } => return self.corruption(&error, label),
            Error::Poisoned => {
                return Err(Stop::Violation(format!("{label}: refused as poisoned though no earlier write failed")))
            }
            _ => {}
        }
        self.stats.failures_reported += 1;
        let (engine, storage) = self.engine(agent)?;
        if !engine.is_poisoned() {
            return Err(Stop::Violation(format!("{label}: a write failed ({error}) but the engine is not poisoned")));
        }
        let before = storage.operation_count();
        let next = engine.add_lot("after_failure", b"must be refused");
        if next != Err(Error::Poisoned) {
            return Err(Stop::Violation(format!(
                "{label}: after a failed write ({error}) the next write returned {next:?}, not Poisoned"
            )));
        }
        if storage.operation_count() != before {
            return Err(Stop::Violation(format!("{label}: a poisoned engine still used the storage")));
        }
        // A plain storage error is a refusal: nothing of the write may ever show. Only
        // OutcomeUnknown leaves it in doubt.
        if !matches!(error, Error::Io { .. }) {
            self.set_doubt(agent, after)?;
        }
        let crash = self.random.chance(0.5);
        self.reopen(crash)
    }

    /// An acknowledged append: the model moves on.
    pub(super) fn acknowledged(&mut self, agent: usize, after: AgentModel) -> Step {
        self.stats.acknowledged_writes += 1;
        let slot = self.slot(agent)?;
        slot.before_last_write = core::mem::replace(&mut slot.model, after);
        Ok(())
    }

    pub(crate) fn add_lot(&mut self, agent: usize) -> Step {
        let label = self.label();
        let content = self.content(agent);
        let mut after = self.slot(agent)?.model.clone();
        let expected = after.add_lot(&label, &content);
        let (engine, storage) = self.engine(agent)?;
        match call(&storage, "add_lot", || engine.add_lot(&label, &content))? {
            Called::Done(id) if id.get() == expected => self.acknowledged(agent, after),
            Called::Done(id) => Err(Stop::Violation(format!("add_lot returned id {id}, the model expects {expected}"))),
            Called::Refused(error) => Err(Stop::Violation(format!("add_lot refused: {error}"))),
            Called::Failed(error) => self.unacknowledged(agent, Some(error), after, WriteKind::Append, "add_lot"),
            Called::PowerLost => self.unacknowledged(agent, None, after, WriteKind::Append, "add_lot"),
        }
    }

    pub(crate) fn remember(&mut self, agent: usize, invalid: bool) -> Step {
        let model = self.slot(agent)?.model.clone();
        let alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
        if alive.is_empty() && !invalid {
            return self.add_lot(agent);
        }
        let legs = if invalid { self.draw_invalid_legs(&model) } else { self.draw_legs(&alive) };
        let content = self.content(agent);
        // What the workload read since its last tracked write joins every leg.
        let (reads, read_ids) = self.slot(agent)?.session.take()?;
        let tracked = !reads.is_empty();
        let mut after = model.clone();
        let expected = after.remember_tracked(&content, &legs, &read_ids);
        let engine_legs = as_legs(&legs);
        let count_before = model.nodes.len() as u64;
        let (engine, storage) = self.engine(agent)?;
        let called = call(&storage, "remember", || engine.remember_tracked(&content, &engine_legs, &reads))?;
        self.stats.tracked_writes += u64::from(tracked && matches!(called, Called::Done(_) | Called::Refused(_)));
        match (expected, called) {
            (Ok(expected), Called::Done(id)) if id.get() == expected => self.acknowledged(agent, after),
            (Err(expected), Called::Refused(error)) if error == expected => {
                self.refused_cleanly(agent, count_before, "remember")
            }
            (Ok(_), Called::Failed(error)) => {
                self.unacknowledged(agent, Some(error), after, WriteKind::Append, "remember")
            }
            (Ok(_), Called::PowerLost) => self.unacknowledged(agent, None, after, WriteKind::Append, "remember"),
            (Err(error), Called::Failed(Error::Poisoned)) => {
                Err(Stop::Violation(format!("remember: expected {error}, got Poisoned")))
            }
            (expected, called) => Err(Stop::Violation(format!(
                "remember with legs {legs:?} and reads {read_ids:?}: the model expects {expected:?}, the engine answered {}",
                describe(&called)
            ))),
        }
    }

    /// After a refusal: nothing was written.
    pub(super) fn refused_cleanly(&mut self, agent: usize, count_before: u64, label: &str) -> Step {
        self.stats.refusals_checked += 1;
        let (engine, _) = self.engine(agent)?;
        if engine.node_count() != count_before {
            return Err(Stop::Violation(format!("{label}: refused, yet the node count changed")));
        }
        Ok(())
    }

    pub(crate) fn batch(&mut self, agent: usize) -> Step {
        let model = self.slot(agent)?.model.clone();
        let mut alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
        let count = self.random.between(2, 8);
        let mut writes = Vec::new();
        // The batch's first memory is written with what the workload read since its last
        // tracked write.
        let mut reads = Some(self.slot(agent)?.session.take()?.1).filter(|reads| !reads.is_empty());
        for next_id in model.next_id()..model.next_id() + count {
            let content = self.content(agent);
            if alive.is_empty() || self.random.chance(0.4) {
                writes.push(ModelWrite::Lot { label: self.label(), content });
            } else {
                let legs = self.draw_legs(&alive);
                writes.push(ModelWrite::Memory { content, legs, reads: reads.take().unwrap_or_default() });
            }
            alive.push(next_id);
        }
        let tracked = writes.iter().any(|write| matches!(write, ModelWrite::Memory { reads, .. } if !reads.is_empty()));
        let vectors = self.batch_vectors(agent, &model, &alive);
        let vector_count = vectors.len() as u64;
        writes.extend(vectors);
        if self.random.chance(0.05) {
            let legs = self.draw_invalid_legs(&model);
            if !legs.is_empty() && model.refusal(&legs, &BTreeSet::new()).is_some() {
                let content = self.content(agent);
                writes.push(ModelWrite::Memory { content, legs, reads: Vec::new() });
            }
        }
        let mut after = model.clone();
        let expected = after.batch(&writes);
        let count_before = model.nodes.len() as u64;
        // Every other batch is staged one write per step, the way a binding writes one: the
        // parity of the next id chooses, so the seed's random draws stay as they were. One in
        // three of those has a recall or another write of the agent between two of its steps.
        let staged = model.next_id() % 2 == 0;
        if staged && writes.len() >= 2 && model.next_id() % 3 == 0 {
            return self.staged_batch_with_interloper(agent, &writes, vector_count);
        }
        let (engine, storage) = self.engine(agent)?;
        let called = call(&storage, "batch", || {
            if staged {
                stage_then_commit(engine, &writes)
            } else {
                engine.batch(|batch| collect_writes(batch, &writes))
            }
        })?;
        self.stats.tracked_writes += u64::from(tracked && matches!(called, Called::Done(_) | Called::Refused(_)));
        match (expected, called) {
            (Ok(expected), Called::Done(got)) if got == expected => {
                self.stats.vectors_set += vector_count;
                self.acknowledged(agent, after)
            }
            (Err(expected), Called::Refused(error)) if error == expected => {
                self.refused_cleanly(agent, count_before, "batch")
            }
            // Checking the dimension of its vectors may read the log to build the search index.
            (_, Called::Failed(error)) if self.read_failed_before_writing(agent, &error)? => Ok(()),
            (Ok(_), Called::Failed(error)) => {
                self.unacknowledged(agent, Some(error), after, WriteKind::Append, "batch")
            }
            (Ok(_), Called::PowerLost) => self.unacknowledged(agent, None, after, WriteKind::Append, "batch"),
            (Err(_), Called::PowerLost) => self.reopen(true),
            (Err(_), Called::Failed(error)) if error.is_corruption() => self.corruption(&error, "batch"),
            (expected, called) => Err(Stop::Violation(format!(
                "batch of {} writes: the model expects {expected:?}, the engine answered {}",
                writes.len(),
                describe(&called)
            ))),
        }
    }

    /// A staged batch of `writes` with a step of the workload between two of its steps (or
    /// between its last step and its commit): a recall, most often of a node that one of its
    /// writes names, or a lot, which takes the next id. The steps after it and the commit must
    /// answer as the model does for the agent as the interloper left it: a write whose parent
    /// the recall killed refused (at its step, or when the commit checks the staged writes
    /// again), every staged write refused as `BatchConflict` after an interloping write.
    fn staged_batch_with_interloper(&mut self, agent: usize, writes: &[ModelWrite], vector_count: u64) -> Step {
        let model = self.slot(agent)?.model.clone();
        let count_before = model.nodes.len() as u64;
        let before_commit = u64::from(self.random.chance(0.25));
        let split = self.random.between(1, writes.len() as u64 - 1 + before_commit) as usize;
        let (before, after_split) = writes.split_at(split.min(writes.len()));
        // The steps before the interloper touch no storage: they are checked one by one.
        let mut staged = StagedBatch::default();
        let mut ids = Vec::new();
        let (engine, _) = self.engine(agent)?;
        for (index, write) in before.iter().enumerate() {
            let expected = model.staged_step_refusal(before.get(..index).unwrap_or_default(), write);
            match (expected, engine.stage(&mut staged, |batch| collect_writes(batch, core::slice::from_ref(write)))) {
                (None, Ok(new)) => ids.extend(new),
                (Some(expected), Err(error)) if error == expected => {
                    return self.refused_cleanly(agent, count_before, "staged batch step");
                }
                (expected, got) => {
                    return Err(Stop::Violation(format!(
                        "staged batch step {index}: the model expects {expected:?}, the engine answered {got:?}"
                    )))
                }
            }
        }
        let reopens = self.stats.reopens;
        let first_id = model.next_id();
        if self.random.chance(0.25) {
            self.add_lot(agent)?;
        } else {
            let named: Vec<u64> = writes
                .iter()
                .flat_map(|write| match write {
                    ModelWrite::Memory { legs, reads, .. } => legs.iter().flatten().chain(reads).copied().collect(),
                    ModelWrite::Vector { id, .. } => vec![*id],
                    ModelWrite::Lot { .. } => Vec::new(),
                })
                .filter(|id| model.is_alive(*id))
                .collect();
            let alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
            let pool = if !named.is_empty() && self.random.chance(0.75) { named } else { alive };
            let Some(target) = pool.get(self.random.index(pool.len())).copied() else { return Ok(()) };
            self.recall_node(agent, target)?;
        }
        // An interloper that failed or lost the power took the engine, and the staged batch with
        // it: nothing of the batch was written, which the reopen checked.
        let reopened = self.stats.reopens != reopens;
        let slot = self.slot(agent)?;
        let unsettled = slot.in_doubt.is_some() || slot.engine.as_ref().is_none_or(AgentEngine::is_poisoned);
        if reopened || unsettled {
            return Ok(());
        }
        let model = slot.model.clone();
        let count_before = model.nodes.len() as u64;
        let mut after = model.clone();
        let expected = if model.next_id() != first_id {
            Err(Error::BatchConflict)
        } else {
            let refused = after_split.iter().enumerate().find_map(|(index, write)| {
                let staged_before = writes.get(..before.len() + index).unwrap_or_default();
                model.staged_step_refusal(staged_before, write)
            });
            match refused {
                Some(refusal) => Err(refusal),
                None => after.batch(writes),
            }
        };
        self.stats.staged_batches_interleaved += 1;
        let (engine, storage) = self.engine(agent)?;
        let called = call(&storage, "staged batch", || {
            for write in after_split {
                ids.extend(engine.stage(&mut staged, |batch| collect_writes(batch, core::slice::from_ref(write)))?);
            }
            engine.commit_staged(core::mem::take(&mut staged))?;
            Ok(core::mem::take(&mut ids))
        })?;
        match (expected, called) {
            (Ok(expected), Called::Done(got)) if got == expected => {
                self.stats.vectors_set += vector_count;
                self.acknowledged(agent, after)
            }
            (Err(expected), Called::Refused(error)) if error == expected => {
                self.refused_cleanly(agent, count_before, "staged batch")
            }
            (_, Called::Failed(error)) if self.read_failed_before_writing(agent, &error)? => Ok(()),
            (Ok(_), Called::Failed(error)) => {
                self.unacknowledged(agent, Some(error), after, WriteKind::Append, "staged batch")
            }
            (Ok(_), Called::PowerLost) => self.unacknowledged(agent, None, after, WriteKind::Append, "staged batch"),
            (Err(_), Called::PowerLost) => self.reopen(true),
            (Err(_), Called::Failed(error)) if error.is_corruption() => self.corruption(&error, "staged batch"),
            (expected, called) => Err(Stop::Violation(format!(
                "staged batch of {} writes with an interloper after {}: the model expects {expected:?}, the engine answered {}",
                writes.len(),
                before.len(),
                describe(&called)
            ))),
        }
    }

    /// A recall of an alive node (lots half the time), or with `again` of a dead or unknown one.
    pub(crate) fn recall(&mut self, agent: usize, again: bool) -> Step {
        let model = self.slot(agent)?.model.clone();
        let target = self.recall_target(&model, again);
        self.recall_node(agent, target)
    }

    /// A recall of `target`, in a mode and with a removal drawn at random.
    fn recall_node(&mut self, agent: usize, target: u64) -> Step {
        let model = self.slot(agent)?.model.clone();
        let mode = if self.random.chance(0.5) { Mode::Fair } else { Mode::Strict };
        let removal = if self.random.chance(0.5) { Removal::Untrusted } else { Removal::Erase };
        let mut after = model.clone();
        let expected = after.recall(target, mode, removal);
        let kind = if removal == Removal::Erase { WriteKind::Erase } else { WriteKind::Append };
        let label = format!("recall {target} {mode:?} {removal:?}");
        let count_before = model.nodes.len() as u64;
        if removal == Removal::Erase {
            // A backup taken just before: once the Erase returns, the token and the files left
            // must not open what it covers in this copy either.
            self.archive_segments(agent)?;
        }
        let (engine, storage) = self.engine(agent)?;
        let called = call(&storage, &label, || engine.recall(Id::from(target), mode, removal))?;
        match (expected, called) {
            (Ok(expected), Called::Done(removed)) if ids(&removed) == expected => {
                self.acknowledged(agent, after)?;
                if removal == Removal::Erase {
                    // Erase promises the text is gone from every file before the call returns,
                    // and on an encrypted agent that no key left opens it, in any copy.
                    self.check_erased_text(&label)?;
                    if self.slot(agent)?.encrypted {
                        self.stats.encrypted_erases += 1;
                        self.check_keys(agent, &label, false)?;
                    }
                }
                Ok(())
            }
            (Err(expected), Called::Refused(error)) if error == expected => {
                self.refused_cleanly(agent, count_before, &label)
            }
            // The Erase a failed call may have done was done: nothing is left for this one.
            (Ok(expected), Called::Refused(Error::AlreadyRecalled { id }))
                if expected.is_empty()
                    && id.get() == target
                    && self.slot(agent)?.model.settle_refused_erase(target, mode, removal) =>
            {
                self.refused_cleanly(agent, count_before, &label)
            }
            (Ok(_), Called::Failed(error)) => self.unacknowledged(agent, Some(error), after, kind, &label),
            (Ok(_), Called::PowerLost) => self.unacknowledged(agent, None, after, kind, &label),
            (expected, called) => Err(Stop::Violation(format!(
                "{label}: the model expects {expected:?}, the engine answered {}",
                describe(&called)
            ))),
        }
    }

    fn recall_target(&mut self, model: &AgentModel, again: bool) -> u64 {
        let alive_lots = model.alive_lots();
        let alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
        let dead: Vec<u64> = model.ids().filter(|id| !model.is_alive(*id)).collect();
        let unknown = model.next_id() + self.random.below(3);
        let pool = if again {
            if dead.is_empty() || self.random.chance(0.1) {
                return unknown;
            }
            dead
        } else if !alive_lots.is_empty() && self.random.chance(0.5) {
            alive_lots
        } else {
            alive
        };
        pool.get(self.random.index(pool.len())).copied().unwrap_or(unknown)
    }

    pub(crate) fn preview(&mut self, agent: usize) -> Step {
        let model = self.slot(agent)?.model.clone();
        let again = self.random.chance(0.1);
        let target = self.recall_target(&model, again);
        let mode = if self.random.chance(0.5) { Mode::Fair } else { Mode::Strict };
        let expected = model.preview(target, mode);
        let (engine, storage) = self.engine(agent)?;
        let called = call(&storage, "preview_recall", || engine.preview_recall(Id::from(target), mode))?;
        match (expected, called) {
            (Ok(expected), Called::Done(removed)) if ids(&removed) == expected => Ok(()),
            (Err(expected), Called::Refused(error)) if error == expected => Ok(()),
            (_, Called::PowerLost) => self.reopen(true),
            (expected, called) => Err(Stop::Violation(format!(
                "preview_recall({target}, {mode:?}): the model expects {expected:?}, the engine answered {}",
                describe(&called)
            ))),
        }
    }

    pub(crate) fn get(&mut self, agent: usize) -> Step {
        let model = self.slot(agent)?.model.clone();
        let id = self.random.between(1, model.next_id() + 1);
        let (engine, storage) = self.engine(agent)?;
        storage.begin_call("get");
        let result = engine.audit(Id::from(id));
        // An alive node shown to the workload is a read: the next memory it writes depends on it.
        let read = result.as_ref().is_ok_and(|node| node.is_alive()) && model.is_alive(id);
        if result.is_ok() {
            storage.acknowledge().map_err(Stop::Violation)?;
        } else {
            storage.refuse("get");
        }
        if storage.is_powered_off() {
            return self.reopen(true);
        }
        if let Err(Error::Io { .. }) = result {
            self.stats.failures_reported += 1;
            return Ok(());
        }
        match compare_node(&model, id, result) {
            Ok(Some(text)) => {
                let slot = self.slot(agent)?;
                if let Some(node) = slot.model.nodes.get_mut(id as usize - 1) {
                    node.text = text;
                }
                if read {
                    slot.session.note(id);
                }
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(Mismatch::Corrupt(error)) => self.corruption(&error, "get"),
            Err(Mismatch::Violation(message)) => Err(Stop::Violation(format!("get({id}): {message}"))),
        }
    }

    pub(crate) fn verify(&mut self, agent: usize) -> Step {
        let kept = self.slot(agent)?.kept;
        let (engine, storage) = self.engine(agent)?;
        let head = engine.head();
        let called = call(&storage, "verify", || match kept {
            Some(kept) => engine.verify_extends(&kept),
            None => engine.verify(),
        })?;
        match called {
            Called::Done(fingerprint) if fingerprint == head => Ok(()),
            Called::Done(fingerprint) => {
                Err(Stop::Violation(format!("verify returned {fingerprint}, the head is {head}")))
            }
            Called::Failed(error @ (Error::Corrupt { .. } | Error::HistoryMismatch { .. })) => {
                self.corruption(&error, "verify")
            }
            Called::Failed(Error::Io { .. }) => {
                self.stats.failures_reported += 1;
                Ok(())
            }
            Called::PowerLost => self.reopen(true),
            called => Err(Stop::Violation(format!("verify answered {}", describe(&called)))),
        }
    }

    pub(crate) fn compact(&mut self, agent: usize) -> Step {
        let model = self.slot(agent)?.model.clone();
        let mut after = model.clone();
        after.compact();
        // A backup taken before the compaction keeps records the compaction drops: an Erase
        // later must leave them unreadable too.
        self.archive_segments(agent)?;
        let (engine, storage) = self.engine(agent)?;
        match call(&storage, "compact", || engine.compact())? {
            Called::Done(()) => {
                self.stats.acknowledged_writes += 1;
                self.slot(agent)?.model = after;
                self.check_erased_text("compact")?;
                self.check_keys(agent, "compact", false)
            }
            Called::Refused(error) => Err(Stop::Violation(format!("compact refused: {error}"))),
            Called::Failed(error) => self.unacknowledged(agent, Some(error), after, WriteKind::Compaction, "compact"),
            Called::PowerLost => self.unacknowledged(agent, None, after, WriteKind::Compaction, "compact"),
        }
    }

    /// Automatic compaction as a host runs it: once a recall leaves as many recalled nodes
    /// with text as the options allow, one segment a call until none is left, each step a call
    /// of its own that a crash or a fault may cut.
    pub(crate) fn compact_while_due(&mut self, agent: usize) -> Step {
        let due = self.agents.get(agent).and_then(|slot| slot.engine.as_ref()).is_some_and(AgentEngine::compaction_due);
        if !due {
            return Ok(());
        }
        let steps_max = self.engine(agent)?.0.report().segments + 1;
        for _ in 0..steps_max {
            let model = self.slot(agent)?.model.clone();
            let mut partly = model.clone();
            partly.compact_maybe();
            self.archive_segments(agent)?;
            let (engine, storage) = self.engine(agent)?;
            match call(&storage, "compact_step", || engine.compact_step())? {
                Called::Done(finished) => {
                    self.stats.acknowledged_writes += 1;
                    self.stats.automatic_compaction_steps += 1;
                    self.slot(agent)?.model = if finished {
                        let mut done = model;
                        done.compact();
                        done
                    } else {
                        partly
                    };
                    self.check_erased_text("compact_step")?;
                    self.check_keys(agent, "compact_step", false)?;
                    if finished {
                        return Ok(());
                    }
                }
                Called::Refused(error) => return Err(Stop::Violation(format!("compact_step refused: {error}"))),
                Called::Failed(error) => {
                    return self.unacknowledged(agent, Some(error), partly, WriteKind::Compaction, "compact_step")
                }
                Called::PowerLost => {
                    return self.unacknowledged(agent, None, partly, WriteKind::Compaction, "compact_step")
                }
            }
        }
        Err(Stop::Violation(format!("automatic compaction did not finish in {steps_max} steps, one a segment")))
    }

    pub(crate) fn create_agent(&mut self) -> Step {
        let name = format!("agent {} ✓", self.next_agent);
        let encrypted = encrypted_agent(self.seed, self.next_agent);
        self.next_agent += 1;
        let storage = self.storage.clone();
        let store = self.store.as_mut().ok_or_else(|| Stop::Violation("harness error: no store open".to_string()))?;
        let label = if encrypted { "create_encrypted_agent" } else { "create_agent" };
        let created = call(&storage, label, || {
            if encrypted {
                store.create_encrypted_agent(&name)
            } else {
                store.create_agent(&name)
            }
        })?;
        match created {
            Called::Done(token) => {
                self.stats.acknowledged_writes += 1;
                self.stats.encrypted_agents += u64::from(encrypted);
                let number = store
                    .authenticate(&token)
                    .map(|key| key.number())
                    .map_err(|error| Stop::Violation(format!("a new agent's token does not authenticate: {error}")))?;
                if store.is_encrypted(number) != encrypted {
                    return Err(Stop::Violation(format!(
                        "agent {name} was created with encrypted = {encrypted}, the store says {}",
                        store.is_encrypted(number)
                    )));
                }
                self.agents.push(Slot::new(name, Some(token), number, encrypted));
                let index = self.agents.len() - 1;
                self.open_agent(index)
            }
            Called::Refused(error) => Err(Stop::Violation(format!("{label} refused: {error}"))),
            Called::Failed(error) => {
                self.stats.failures_reported += 1;
                self.store_doubt = Some(StoreDoubt::Create { name });
                if error.is_corruption() {
                    return self.corruption(&error, "create_agent");
                }
                let crash = self.random.chance(0.5);
                self.reopen(crash)
            }
            Called::PowerLost => {
                self.store_doubt = Some(StoreDoubt::Create { name });
                self.reopen(true)
            }
        }
    }

    pub(crate) fn delete_agent(&mut self, agent: usize) -> Step {
        if agent >= self.agents.len() {
            return Ok(());
        }
        let mut slot = self.agents.remove(agent);
        slot.engine = None;
        let storage = self.storage.clone();
        let store = self.store.as_mut().ok_or_else(|| Stop::Violation("harness error: no store open".to_string()))?;
        let name = slot.name.clone();
        match call(&storage, "delete_agent", || store.delete_agent(&name))? {
            Called::Done(number) if number == slot.number => {
                self.stats.acknowledged_writes += 1;
                let folder = cheesedb_core::log::names::agent_folder(number);
                if self.storage.file_paths().iter().any(|path| path.starts_with(&format!("{folder}/"))) {
                    return Err(Stop::Violation(format!("delete_agent left files in {folder}")));
                }
                Ok(())
            }
            Called::Done(number) => {
                Err(Stop::Violation(format!("delete_agent returned number {number}, expected {}", slot.number)))
            }
            Called::Refused(error) => Err(Stop::Violation(format!("delete_agent refused: {error}"))),
            Called::Failed(error) => {
                self.stats.failures_reported += 1;
                self.store_doubt = Some(StoreDoubt::Delete { slot: Box::new(slot) });
                if error.is_corruption() {
                    return self.corruption(&error, "delete_agent");
                }
                let crash = self.random.chance(0.5);
                self.reopen(crash)
            }
            Called::PowerLost => {
                self.store_doubt = Some(StoreDoubt::Delete { slot: Box::new(slot) });
                self.reopen(true)
            }
        }
    }

    /// Every token opens its own agent and nothing else; an unknown token opens none.
    pub(crate) fn tokens(&mut self) -> Step {
        let store = self.store.as_ref().ok_or_else(|| Stop::Violation("harness error: no store open".to_string()))?;
        for slot in &self.agents {
            if let Some(token) = &slot.token {
                let number = store.authenticate(token).map(|key| key.number());
                if number != Ok(slot.number) {
                    return Err(Stop::Violation(format!(
                        "the token of {} authenticates as {number:?}, expected {}",
                        slot.name, slot.number
                    )));
                }
            }
            if store.is_encrypted(slot.number) != slot.encrypted {
                return Err(Stop::Violation(format!(
                    "the store says {} is encrypted = {}",
                    slot.name, !slot.encrypted
                )));
            }
            // Without its token an encrypted agent does not open, and says nothing more.
            if slot.encrypted {
                let refused = store.open_agent_by_number(slot.number).map(|_| ());
                if refused != Err(Error::UnknownToken) {
                    return Err(Stop::Violation(format!(
                        "opening encrypted agent {} without its token answered {refused:?}",
                        slot.name
                    )));
                }
            }
        }
        let mut bytes = [0u8; 32];
        self.random.fill(&mut bytes);
        let stranger = store.authenticate(&Token::from_bytes(bytes));
        if stranger != Err(Error::UnknownToken) {
            return Err(Stop::Violation(format!("a random token authenticates: {stranger:?}")));
        }
        Ok(())
    }
}

/// A short description of a call's result, for messages.
pub(crate) fn describe<T: core::fmt::Debug>(called: &Called<T>) -> String {
    match called {
        Called::Done(value) => format!("Ok({value:?})"),
        Called::Refused(error) | Called::Failed(error) => format!("Err({error})"),
        Called::PowerLost => "a power loss".to_string(),
    }
}

/// Collects `writes` into `batch`; returns the ids of its lots and memories.
fn collect_writes(batch: &mut Batch<'_, SimStorage>, writes: &[ModelWrite]) -> Result<Vec<u64>, Error> {
    let mut ids = Vec::new();
    for write in writes {
        let id = match write {
            ModelWrite::Lot { label, content } => batch.add_lot(label, content)?,
            ModelWrite::Memory { content, legs, reads } => {
                let reads: ReadSet = reads.iter().copied().map(Id::from).collect();
                batch.remember_tracked(content, &as_legs(legs), &reads)?
            }
            ModelWrite::Vector { id, vector } => {
                batch.set_vector(Id::from(*id), vector)?;
                continue;
            }
        };
        ids.push(id.get());
    }
    Ok(ids)
}

/// Writes `writes` as a staged batch, one step per write, then commits it; a refused step
/// drops the staged batch, so nothing is written, as a refused closure batch.
fn stage_then_commit(engine: &mut AgentEngine<SimStorage>, writes: &[ModelWrite]) -> Result<Vec<u64>, Error> {
    let mut staged = StagedBatch::default();
    let mut ids = Vec::new();
    for write in writes {
        ids.extend(engine.stage(&mut staged, |batch| collect_writes(batch, core::slice::from_ref(write)))?);
    }
    engine.commit_staged(staged)?;
    Ok(ids)
}
