//! A failed write says whether it was refused with nothing written (`Io`) or may have reached
//! the disk (`OutcomeUnknown`): a roll that fails refuses the write that triggered it, and a
//! compaction that fails once a file may be replaced leaves its outcome unknown. On every
//! backend, wrapped to fail on demand.

use std::sync::atomic::Ordering;

use cheesedb::{Error, Mode, Options, Removal, Store};
use cheesedb_tests::backend::Backend;
use cheesedb_tests::faulty::{Faults, FaultyStorage};

/// Small segments and no zeros written ahead, so a segment's length tells when it is full.
fn small_segments() -> Options {
    Options::default().segment_size_max_bytes(4096).preallocate_bytes(0)
}

fn a_roll_that_fails_refuses_the_write_and_it_never_shows<B: Backend>() {
    let place = B::new();
    let storage = FaultyStorage::wrap(place.storage());
    let faults = storage.faults.clone();
    let store = Store::open_with(storage, small_segments()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    // Fill the first segment: the next write must roll first.
    while place.read_file(&place.segment_files()[0]).len() < 4096 {
        alice.add_lot("filler", &[7u8; 500]).unwrap();
    }
    let lots_before = alice.lots().unwrap();
    faults.fail_sync.store(true, Ordering::SeqCst);
    match alice.add_lot("refused", b"never-stored-canary") {
        Err(Error::Io { .. }) => {}
        other => panic!("a failed roll must be a refusal, got {other:?}"),
    }
    faults.fail_sync.store(false, Ordering::SeqCst);
    assert_eq!(alice.add_lot("after", b"after"), Err(Error::Poisoned));
    drop((alice, store));
    let alice = place.open(small_segments()).unwrap().open_agent(&token).unwrap();
    assert_eq!(alice.lots().unwrap(), lots_before, "a refused write showed after the reopen");
    alice.verify().unwrap();
    alice.add_lot("later", b"the roll happens again").unwrap();
}

/// Compacts an agent holding the text of a recalled lot, with the fault `arm` switches on.
fn compact_with_fault<B: Backend>(arm: impl FnOnce(&Faults)) -> Result<(), Error> {
    let place = B::new();
    let storage = FaultyStorage::wrap(place.storage());
    let faults = storage.faults.clone();
    let store = Store::open_with(storage, Options::default()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let lot = alice.add_lot("source", b"dead text").unwrap();
    alice.recall(lot, Mode::Fair, Removal::Untrusted).unwrap();
    arm(&faults);
    alice.compact()
}

fn a_compaction_that_fails_before_any_rename_is_a_refusal<B: Backend>() {
    let compacted = compact_with_fault::<B>(|faults| faults.fail_sync.store(true, Ordering::SeqCst));
    assert!(matches!(compacted, Err(Error::Io { .. })));
}

fn a_compaction_that_fails_at_a_rename_has_an_unknown_outcome<B: Backend>() {
    let compacted = compact_with_fault::<B>(|faults| faults.fail_rename.store(true, Ordering::SeqCst));
    assert!(matches!(compacted, Err(Error::OutcomeUnknown { .. })));
}

cheesedb_tests::conformance!(
    a_roll_that_fails_refuses_the_write_and_it_never_shows,
    a_compaction_that_fails_before_any_rename_is_a_refusal,
    a_compaction_that_fails_at_a_rename_has_an_unknown_outcome,
);
