//! A failed sync poisons the handle; an erasure cut short is finished by the next open. On every
//! backend, wrapped to fail on demand.

use std::sync::atomic::Ordering;

use cheesedb::{Error, Leg, Mode, Options, Removal, Store};
use cheesedb_tests::backend::Backend;
use cheesedb_tests::faulty::FaultyStorage;

fn a_failed_sync_poisons_the_agent_and_acknowledges_nothing<B: Backend>() {
    let place = B::new();
    let storage = FaultyStorage::wrap(place.storage());
    let faults = storage.faults.clone();
    let store = Store::open_with(storage, Options::default()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let lot = alice.add_lot("before", b"before").unwrap();
    faults.fail_sync.store(true, Ordering::SeqCst);
    assert!(matches!(alice.add_lot("during", b"during"), Err(Error::OutcomeUnknown { .. })));
    faults.fail_sync.store(false, Ordering::SeqCst);
    // Nothing is retried: the handle stays poisoned even though syncs work again.
    assert_eq!(alice.add_lot("after", b"after"), Err(Error::Poisoned));
    assert_eq!(alice.remember(b"x", &[Leg::from([lot])]), Err(Error::Poisoned));
    assert_eq!(alice.get(lot).unwrap().content(), Some(&b"before"[..]), "reads still work");
}

fn an_erasure_cut_short_is_finished_by_the_next_open<B: Backend>() {
    let place = B::new();
    let canary = b"canary-91b2-interrupted-erasure";
    let token;
    let lot;
    {
        let storage = FaultyStorage::wrap(place.storage());
        let faults = storage.faults.clone();
        let store = Store::open_with(storage, Options::default()).unwrap();
        token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        lot = alice.add_lot("tool", canary).unwrap();
        alice.remember(b"kept", &[Leg::from([alice.add_lot("other", b"other").unwrap()])]).unwrap();
        // The recall record is written and synced; the rewrite then fails at its rename, as
        // if the process had died there.
        faults.fail_rename.store(true, Ordering::SeqCst);
        assert!(matches!(alice.recall(lot, Mode::Fair, Removal::Erase), Err(Error::OutcomeUnknown { .. })));
        assert!(!place.files_containing(canary).is_empty(), "the text is still there");
        assert_eq!(alice.add_lot("x", b"x"), Err(Error::Poisoned));
    }
    let store = place.open(Options::default()).unwrap();
    let alice = store.open_agent(&token).unwrap();
    let report = alice.report();
    assert_eq!(report.erasures_completed_on_open, 1);
    assert_eq!(report.temporary_files_removed, 1);
    assert!(place.files_containing(canary).is_empty());
    assert!(!alice.get(lot).unwrap().is_alive());
    assert_eq!(alice.get(lot).unwrap().content(), None);
    alice.verify().unwrap();
}

cheesedb_tests::conformance!(
    a_failed_sync_poisons_the_agent_and_acknowledges_nothing,
    an_erasure_cut_short_is_finished_by_the_next_open,
);
