//! Automatic compaction of one open agent, on a thread of its own.
//!
//! Once a recall leaves as many recalled nodes with text in the files as
//! `Options::auto_compact_dead_nodes`, a thread compacts the agent one segment at a time
//! (`AgentEngine::compact_step`), taking the agent's lock for one segment only, so a write
//! waits for one segment's rewrite at most. It passes the agent's batch gate like any write.
//!
//! The thread holds the engine and the store only while it rewrites a segment; between
//! segments it keeps weak references, so it never keeps an agent open. Whoever ends the last
//! handle of the agent stops it and waits for the segment under way (`Compactor`): a program
//! that then exits leaves no half-made segment behind, and the folder stays locked until the
//! thread let go. A step that fails poisons the engine as a failed manual compaction does: the
//! next write is refused with `Poisoned`, and a reopen repairs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use cheesedb_core::Error;

use crate::group::GroupedEngine;
use crate::mutex::lock;
use crate::shared::{SharedEngine, SharedStorage, StoreShared};

/// Starts compacting `engine` on a thread of its own when compaction is due, no thread is
/// compacting it already and a handle of it is open. Called after a recall and an open, with
/// the engine's lock free.
///
/// # Errors
///
/// The engine's lock poisoned by a panic.
pub(crate) fn start_if_due<S: SharedStorage>(
    engine: &SharedEngine<S>,
    store: &Arc<StoreShared<S>>,
) -> Result<(), Error> {
    if store.check_writable().is_err() || !lock(&engine.engine)?.compaction_due() {
        return Ok(());
    }
    let (weak_engine, weak_store) = (Arc::downgrade(engine), Arc::downgrade(store));
    engine.compactor.start(|stop| {
        std::thread::Builder::new()
            .name(String::from("cheesedb-compactor"))
            .spawn(move || compact_until_done(&weak_engine, &weak_store, &stop))
    });
    Ok(())
}

/// Compacts one segment at a time until none keeps dead text, the agent's last handle ends, a
/// step fails or the store stops being writable here.
fn compact_until_done<S: SharedStorage>(
    engine: &Weak<GroupedEngine<S>>,
    store: &Weak<StoreShared<S>>,
    stop: &AtomicBool,
) {
    // What made compaction due (a recall, an open that applied one) is mostly followed at once
    // by the caller's next calls: they go first, rather than wait for a segment's rewrite
    // (measured: a member's first answer after an open that applied a space's recall took
    // 5.4 ms with the first segment under way, 1.5 ms without).
    pause(PAUSE_BEFORE_FIRST_STEP, stop);
    loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // The store first, so that its folder lock outlives the engine, whose drop may write a
        // snapshot.
        let Some(store) = store.upgrade() else { return };
        let Some(engine) = engine.upgrade() else { return };
        if store.check_writable().is_err() {
            return;
        }
        let stepped = engine.gate.write(|| lock(&engine.engine)?.compact_step());
        drop(engine);
        drop(store);
        if !matches!(stepped, Ok(false)) {
            return;
        }
        // A lock is not fair: taken again at once, it would keep a waiting writer out for the
        // whole compaction (measured: a write waited 62 ms, the whole run, where one segment
        // takes 8). The pause lets the writers woken by the unlock in first.
        pause(PAUSE_BETWEEN_STEPS, stop);
    }
}

/// Waits `length`, or less once `stop` is set: whoever sets it unparks the thread.
fn pause(length: Duration, stop: &AtomicBool) {
    let until = Instant::now() + length;
    while !stop.load(Ordering::SeqCst) {
        let Some(left) = until.checked_duration_since(Instant::now()) else { return };
        std::thread::park_timeout(left);
    }
}

/// How long the thread lets go of the agent between two segments.
const PAUSE_BETWEEN_STEPS: Duration = Duration::from_millis(1);
/// How long the thread waits before its first segment.
const PAUSE_BEFORE_FIRST_STEP: Duration = Duration::from_millis(20);
