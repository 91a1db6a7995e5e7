//! Crashes: arming one, cutting the power, and what survives of every unsynced change.

use super::disk::{self, Fate, PendingChange, SECTOR_BYTES};
use super::{Power, SimStorage, Simulation};
use crate::trace::Event;

impl SimStorage {
    /// Arms a crash: `operations` more storage operations succeed, the next one loses power.
    pub fn arm_crash(&self, operations: u64) {
        self.shared.borrow_mut().power = Power::CrashAfter(operations);
    }

    /// Arms a sync failure: `syncs` more file syncs succeed, the next one fails and makes
    /// nothing durable (its writes stay pending), and the power stays on. For tests that try a
    /// failure at every sync of one operation.
    pub fn arm_sync_failure(&self, syncs: u64) {
        self.shared.borrow_mut().sync_failure = Some(syncs);
    }

    /// Disarms a crash that has not happened yet.
    pub fn disarm_crash(&self) {
        let mut simulation = self.shared.borrow_mut();
        if let Power::CrashAfter(_) = simulation.power {
            simulation.power = Power::On;
        }
    }

    /// Whether the armed crash point was reached.
    pub fn is_powered_off(&self) -> bool {
        self.shared.borrow().power == Power::Off
    }

    /// Cuts the power now (if it is not off already).
    pub fn power_off(&self) {
        self.shared.borrow_mut().power = Power::Off;
    }

    /// The crash: every unsynced change meets a random fate, the durable state is all that is
    /// left, open handles become stale, and the power comes back.
    pub fn crash(&self) {
        let mut simulation = self.shared.borrow_mut();
        let count = simulation.disk.pending_changes().len();
        let mut fates = Vec::with_capacity(count);
        let changes = simulation.disk.pending_changes();
        for change in &changes {
            let fate = match change {
                PendingChange::Write { offset, length, .. } => match simulation.random_fate() {
                    disk::Fate::Prefix(_) => disk::Fate::Prefix(simulation.torn_length(*offset, *length)),
                    other => other,
                },
                PendingChange::SetLength { .. } => {
                    if simulation.random.chance(0.5) {
                        disk::Fate::Keep
                    } else {
                        disk::Fate::Drop
                    }
                }
                PendingChange::Name { .. } => {
                    let keep = simulation.plan.crash.keep_name_change;
                    if simulation.random.chance(keep) {
                        disk::Fate::Keep
                    } else {
                        disk::Fate::Drop
                    }
                }
            };
            fates.push(fate);
        }
        simulation.disk.crash_with(&fates);
        simulation.after_crash(changes.len());
    }

    /// The crash with chosen fates, one per [`SimStorage::pending_changes`] entry in that order.
    pub fn crash_with(&self, fates: &[Fate]) {
        let mut simulation = self.shared.borrow_mut();
        let count = simulation.disk.pending_changes().len();
        simulation.disk.crash_with(fates);
        simulation.after_crash(count);
    }

    /// Every change not yet durable.
    pub fn pending_changes(&self) -> Vec<PendingChange> {
        self.shared.borrow().disk.pending_changes()
    }
}

impl Simulation {
    pub(super) fn after_crash(&mut self, changes: usize) {
        self.epoch += 1;
        self.power = Power::On;
        self.trace.record(Event { operation: "crash", subject: String::new(), number: changes as u64, outcome: "ok" });
    }

    pub(super) fn random_fate(&mut self) -> disk::Fate {
        let odds = self.plan.crash;
        let roll = self.random.below(1_000_000) as f64 / 1_000_000.0;
        if roll < odds.keep {
            disk::Fate::Keep
        } else if roll < odds.keep + odds.prefix {
            disk::Fate::Prefix(self.random.below(1 << 20))
        } else if roll < odds.keep + odds.prefix + odds.garble {
            disk::Fate::Garble(self.random.next_u64())
        } else {
            disk::Fate::Drop
        }
    }

    /// A prefix fate cut at a random point within the write, sector-aligned half of the time.
    pub(super) fn torn_length(&mut self, offset: u64, length: u64) -> u64 {
        let kept = self.random.below(length.max(1));
        if self.random.chance(0.5) {
            let end = offset + kept;
            (end - end % SECTOR_BYTES).saturating_sub(offset).min(kept)
        } else {
            kept
        }
    }
}
