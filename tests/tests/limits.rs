//! Every size has a limit; going over it is a typed error and writes nothing, on every backend.

use cheesedb::limits::{CONTENT_MAX_BYTES, LABEL_MAX_BYTES, LEGS_PER_MEMORY_MAX, PARENTS_PER_LEG_MAX};
use cheesedb::{Error, Id, Leg, Limit, Options};
use cheesedb_tests::backend::Backend;

fn oversized_arguments_are_refused_and_write_nothing<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let lot = alice.add_lot("ok", b"ok").unwrap();
    let before = alice.verify().unwrap();

    let long_label = "l".repeat(LABEL_MAX_BYTES + 1);
    assert!(matches!(alice.add_lot(&long_label, b"x"), Err(Error::LimitExceeded { what: Limit::LabelBytes, .. })));
    let huge = vec![0u8; CONTENT_MAX_BYTES + 1];
    assert!(matches!(alice.add_lot("big", &huge), Err(Error::LimitExceeded { what: Limit::ContentBytes, .. })));
    assert!(matches!(alice.remember(&huge, &[Leg::from([lot])]), Err(Error::LimitExceeded { .. })));
    let many_legs: Vec<Leg> = (0..=LEGS_PER_MEMORY_MAX).map(|_| Leg::from([lot])).collect();
    assert!(matches!(alice.remember(b"x", &many_legs), Err(Error::LimitExceeded { what: Limit::LegsPerMemory, .. })));
    let wide_leg: Leg = (1..=PARENTS_PER_LEG_MAX as u64 + 1).map(Id::from).collect();
    assert!(matches!(alice.remember(b"x", &[wide_leg]), Err(Error::LimitExceeded { what: Limit::ParentsPerLeg, .. })));

    assert_eq!(alice.verify().unwrap(), before);
    assert_eq!(alice.add_lot("next", b"n").unwrap(), Id::from(2));
}

fn content_at_the_limit_is_accepted<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let content = vec![b'x'; CONTENT_MAX_BYTES];
    let lot = alice.add_lot(&"l".repeat(LABEL_MAX_BYTES), &content).unwrap();
    assert_eq!(alice.get(lot).unwrap().content().map(<[u8]>::len), Some(CONTENT_MAX_BYTES));
}

cheesedb_tests::conformance!(oversized_arguments_are_refused_and_write_nothing, content_at_the_limit_is_accepted);
