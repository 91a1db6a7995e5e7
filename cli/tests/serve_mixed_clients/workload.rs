//! What every client does, whatever its kind: lots, memories on its own earlier ids, now and
//! then a recall of one of them, and reads checked against what it was told.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::ledger::{Ledger, Write, WriteKind};
use super::operations::{Operations, Outcome};

/// Out of 100 operations: lots, then memories, then recalls; the rest are reads.
const LOT_SHARE: u64 = 40;
const MEMORY_SHARE: u64 = 30;
const RECALL_SHARE: u64 = 5;
/// Parents are picked among this many of the client's latest writes.
const RECENT_WRITES: usize = 40;

/// A small deterministic random sequence (xorshift), one per client.
pub struct Random(u64);

impl Random {
    /// The sequence of `seed`.
    pub fn new(seed: u64) -> Random {
        Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A number below `bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }

    /// One of `items`, if there is any.
    fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        let index = usize::try_from(self.below(u64::try_from(items.len()).ok()?)).ok()?;
        items.get(index).copied()
    }
}

/// How the run goes, as every client of one kind sees it.
pub struct Progress<'run> {
    /// Operations finished by the clients of this kind.
    pub finished: &'run AtomicU64,
    /// Operations of this kind acknowledged that began and ended while the server was down.
    pub acknowledged_while_down: &'run AtomicU64,
    /// Whether the server is down (killed and not yet started again).
    pub server_down: &'run AtomicBool,
}

/// Runs `operations` of the workload on `client`, choices drawn from `seed`, counting each
/// finished one, and each acknowledged from start to end while the server was down.
pub fn run(client: &mut dyn Operations, ledger: &mut Ledger, operations: u64, seed: u64, progress: &Progress<'_>) {
    let mut random = Random::new(seed);
    for step in 0..operations {
        let down_before = progress.server_down.load(Ordering::SeqCst);
        let acknowledged_before = ledger.counts.acknowledged();
        one_operation(client, ledger, &mut random, step);
        let acknowledged = ledger.counts.acknowledged() > acknowledged_before;
        if acknowledged && down_before && progress.server_down.load(Ordering::SeqCst) {
            progress.acknowledged_while_down.fetch_add(1, Ordering::SeqCst);
        }
        ledger.counts.operations += 1;
        progress.finished.fetch_add(1, Ordering::Relaxed);
    }
}

fn one_operation(client: &mut dyn Operations, ledger: &mut Ledger, random: &mut Random, step: u64) {
    let recent: Vec<u64> =
        ledger.order.iter().rev().copied().filter(|id| ledger.believed_alive(*id)).take(RECENT_WRITES).collect();
    let roll = random.below(100);
    if recent.is_empty() || roll < LOT_SHARE {
        add_lot(client, ledger, random, step);
    } else if roll < LOT_SHARE + MEMORY_SHARE {
        remember(client, ledger, random, step, &recent);
    } else if roll < LOT_SHARE + MEMORY_SHARE + RECALL_SHARE {
        recall(client, ledger, random, &recent);
    } else {
        read(client, ledger, random);
    }
}

/// The text of a write: unique, and not only ASCII, so a changed byte anywhere shows.
fn text(ledger: &Ledger, step: u64, what: &str) -> String {
    let line_break = if step.is_multiple_of(5) { "\nsecond line" } else { "" };
    format!("{} step {step}: {what} — Pune, 24 °C{line_break}", ledger.client)
}

fn add_lot(client: &mut dyn Operations, ledger: &mut Ledger, random: &mut Random, step: u64) {
    let label = if random.below(2) == 0 { "note" } else { "web_page" };
    let content = text(ledger, step, "a lot");
    match client.add_lot(label, &content) {
        Outcome::Done(id) => ledger.acknowledge(id, Write { content, kind: WriteKind::Lot { label: label.into() } }),
        Outcome::Refused | Outcome::Unknown => ledger.counts.not_acknowledged += 1,
    }
}

fn remember(client: &mut dyn Operations, ledger: &mut Ledger, random: &mut Random, step: u64, recent: &[u64]) {
    let mut legs = Vec::new();
    let leg_count = if random.below(5) == 0 { 2 } else { 1 };
    for _ in 0..leg_count {
        let mut leg: Vec<u64> = (0..=random.below(2)).filter_map(|_| random.pick(recent)).collect();
        leg.sort_unstable();
        leg.dedup();
        legs.push(leg);
    }
    let content = text(ledger, step, "a memory");
    match client.remember(&content, &legs) {
        Outcome::Done(remembered) => {
            let kind = WriteKind::Memory { legs, tracked: remembered.tracked };
            ledger.acknowledge(remembered.id, Write { content, kind });
        }
        Outcome::Refused | Outcome::Unknown => ledger.counts.not_acknowledged += 1,
    }
}

fn recall(client: &mut dyn Operations, ledger: &mut Ledger, random: &mut Random, recent: &[u64]) {
    let Some(target) = random.pick(recent) else { return };
    match client.recall(target) {
        Outcome::Done(removed) => {
            ledger.counts.acknowledged_recalls += 1;
            ledger.removed.insert(target);
            ledger.removed.extend(removed);
        }
        Outcome::Refused => ledger.counts.not_acknowledged += 1,
        Outcome::Unknown => {
            ledger.counts.not_acknowledged += 1;
            ledger.uncertain_recalls.insert(target);
        }
    }
}

fn read(client: &mut dyn Operations, ledger: &mut Ledger, random: &mut Random) {
    let Some(id) = random.pick(&ledger.order) else { return };
    match client.get(id) {
        Outcome::Done(read) => {
            ledger.counts.reads += 1;
            ledger.check_read(id, &read);
        }
        Outcome::Refused | Outcome::Unknown => ledger.counts.not_acknowledged += 1,
    }
}
