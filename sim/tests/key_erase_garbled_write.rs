//! A crash during an Erase on an encrypted agent that leaves the key table's unsynced writes
//! garbled must damage no key but those being destroyed. A live node written before an earlier
//! Erase holds its secret only in its slot (that Erase destroyed the epoch key its record's
//! copy is sealed under), so a write of the key destruction that carried its slot, written
//! back unchanged, would lose it for good if garbled.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use cheesedb_core::{AgentEngine, Error, Leg, Mode, Removal, StoreEngine, Token};
use cheesedb_sim::explore::exploration_options;
use cheesedb_sim::storage::{Fate, PendingChange, SimStorage};

const KEPT_TEXT: &[u8] = b"a lot written before the first Erase, kept by both";

fn open(storage: &SimStorage, token: &Token) -> Result<AgentEngine<SimStorage>, Error> {
    let store = StoreEngine::open(storage.clone(), exploration_options())?;
    store.open_agent(store.authenticate(token)?)
}

/// Every fate the crash may give a pending change: writes kept whole or garbled.
fn fates(pending: &[PendingChange], garble: bool) -> Vec<Fate> {
    pending
        .iter()
        .map(|change| match change {
            PendingChange::Write { length, .. } if garble => Fate::Garble(*length),
            _ => Fate::Keep,
        })
        .collect()
}

#[test]
fn a_garbled_key_destruction_loses_no_key_of_a_live_node() {
    let storage = SimStorage::without_faults(7);
    let mut store = StoreEngine::open(storage.clone(), exploration_options()).unwrap();
    let token = store.create_encrypted_agent("agent").unwrap();
    let mut agent = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
    let first = agent.add_lot("source", b"erased by the first Erase").unwrap();
    let root = agent.add_lot("source", b"erased by the second Erase").unwrap();
    // The kept lot's slot lies between the two slots the second Erase destroys.
    let kept = agent.add_lot("source", KEPT_TEXT).unwrap();
    agent.remember(b"learned from the root", &[Leg::from([root])]).unwrap();
    // The first Erase destroys the epoch every record so far is sealed under.
    agent.recall(first, Mode::Fair, Removal::Erase).unwrap();
    drop(agent);
    drop(store);
    let keep_all = vec![Fate::Keep; storage.pending_changes().len()];
    storage.crash_with(&keep_all);

    let counting = storage.fork();
    let mut agent = open(&counting, &token).unwrap();
    let start = counting.operation_count();
    agent.recall(root, Mode::Fair, Removal::Erase).unwrap();
    let operations = counting.operation_count() - start;
    drop(agent);

    let mut damaged = Vec::new();
    for crash_point in 0..=operations {
        for garble in [false, true] {
            let disk = storage.fork();
            let mut agent = open(&disk, &token).unwrap();
            disk.arm_crash(crash_point);
            // Cut short by the crash or not, what counts is what a reopen finds.
            let _ = agent.recall(root, Mode::Fair, Removal::Erase);
            disk.power_off();
            drop(agent);
            disk.crash_with(&fates(&disk.pending_changes(), garble));
            let found = open(&disk, &token).and_then(|agent| agent.get(kept));
            match found {
                Ok(node) if node.content() == Some(KEPT_TEXT) => {}
                other => damaged.push(format!("crash at operation {crash_point}, garbled {garble}: {other:?}")),
            }
        }
    }
    assert!(damaged.is_empty(), "the kept lot did not survive:\n{}", damaged.join("\n"));
}
