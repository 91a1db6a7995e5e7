//! The meaning of lots, memories, legs and recall, through the public API, on every backend.

use cheesedb::{Agent, Error, Id, Leg, Mode, NameProblem, NodeKind, Options, Removal, SharedStorage};
use cheesedb_tests::backend::Backend;

fn open_alice<B: Backend>() -> (B, Agent<B::Storage>) {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    (place, alice)
}

/// Lots A, B, C; M1 = {A} or {B}; M2 = {C}; M3 = {M1, M2}.
fn reference_example<S: SharedStorage>(alice: &Agent<S>) -> [Id; 6] {
    let a = alice.add_lot("user_message", b"I live in Pune").unwrap();
    let b = alice.add_lot("web_page", b"profile: lives in Pune").unwrap();
    let c = alice.add_lot("weather_tool", b"Pune: rain").unwrap();
    let m1 = alice.remember(b"user lives in Pune", &[Leg::from([a]), Leg::from([b])]).unwrap();
    let m2 = alice.remember(b"Pune is rainy", &[Leg::from([c])]).unwrap();
    let m3 = alice.remember(b"carry an umbrella", &[Leg::from([m1, m2])]).unwrap();
    [a, b, c, m1, m2, m3]
}

fn fair_recall_of_the_weather_tool_removes_m2_and_m3_and_keeps_m1<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let [_, _, c, m1, m2, m3] = reference_example(&alice);
    assert_eq!(alice.preview_recall(c, Mode::Fair).unwrap(), vec![m2, m3]);
    assert_eq!(alice.recall(c, Mode::Fair, Removal::Untrusted).unwrap(), vec![m2, m3]);
    assert!(alice.get(m1).unwrap().is_alive());
    assert!(!alice.get(m2).unwrap().is_alive());
    assert!(!alice.get(c).unwrap().is_alive());
    assert_eq!(alice.memories().unwrap(), vec![m1]);
}

fn ids_are_sequential_from_one_and_shared_by_lots_and_memories<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let ids = reference_example(&alice);
    let numbers: Vec<u64> = ids.iter().map(|id| id.get()).collect();
    assert_eq!(numbers, vec![1, 2, 3, 4, 5, 6]);
}

fn fair_and_strict_differ_on_a_diamond<B: Backend>() {
    // A feeds M1 and M2 directly; M3 needs M1, or M2 together with B.
    let (_place, alice) = open_alice::<B>();
    let a = alice.add_lot("a", b"a").unwrap();
    let b = alice.add_lot("b", b"b").unwrap();
    let m1 = alice.remember(b"m1", &[Leg::from([a]), Leg::from([b])]).unwrap();
    let m2 = alice.remember(b"m2", &[Leg::from([a])]).unwrap();
    let m3 = alice.remember(b"m3", &[Leg::from([m1]), Leg::from([m2, b])]).unwrap();
    assert_eq!(alice.preview_recall(a, Mode::Fair).unwrap(), vec![m2]);
    assert_eq!(alice.preview_recall(a, Mode::Strict).unwrap(), vec![m1, m2, m3]);
    assert_eq!(alice.recall(a, Mode::Strict, Removal::Untrusted).unwrap(), vec![m1, m2, m3]);
    assert_eq!(alice.memories().unwrap(), Vec::<Id>::new());
    assert_eq!(alice.lots().unwrap(), vec![b]);
}

fn strict_recall_follows_history_through_dead_memories<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let a = alice.add_lot("a", b"a").unwrap();
    let b = alice.add_lot("b", b"b").unwrap();
    let c = alice.add_lot("c", b"c").unwrap();
    let m1 = alice.remember(b"m1", &[Leg::from([a, c])]).unwrap();
    let m2 = alice.remember(b"m2", &[Leg::from([m1]), Leg::from([b])]).unwrap();
    // Recalling C kills M1; M2 survives through B.
    assert_eq!(alice.recall(c, Mode::Fair, Removal::Untrusted).unwrap(), vec![m1]);
    // A reaches M2 only through the dead M1: Fair keeps M2, Strict removes it.
    assert_eq!(alice.preview_recall(a, Mode::Fair).unwrap(), Vec::<Id>::new());
    assert_eq!(alice.preview_recall(a, Mode::Strict).unwrap(), vec![m2]);
}

fn a_preview_writes_nothing<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let [_, _, c, ..] = reference_example(&alice);
    let before = alice.verify().unwrap();
    alice.preview_recall(c, Mode::Strict).unwrap();
    assert_eq!(alice.verify().unwrap(), before);
    assert!(alice.get(c).unwrap().is_alive());
}

fn recall_is_permanent_and_a_dead_node_is_never_a_parent<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let [_, _, c, _, m2, _] = reference_example(&alice);
    alice.recall(c, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(alice.recall(c, Mode::Fair, Removal::Untrusted), Err(Error::AlreadyRecalled { id: c }));
    assert_eq!(alice.preview_recall(m2, Mode::Fair), Err(Error::AlreadyRecalled { id: m2 }));
    assert_eq!(alice.remember(b"x", &[Leg::from([c])]), Err(Error::DeadParent { id: c }));
    assert_eq!(alice.remember(b"x", &[Leg::from([m2])]), Err(Error::DeadParent { id: m2 }));
}

fn refused_memories_write_nothing<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let a = alice.add_lot("a", b"a").unwrap();
    let before = alice.verify().unwrap();
    assert_eq!(alice.remember(b"x", &[]), Err(Error::NoLegs));
    assert_eq!(alice.remember(b"x", &[Leg::from([a]), Leg::default()]), Err(Error::EmptyLeg { leg_index: 1 }));
    assert_eq!(alice.remember(b"x", &[Leg::from([Id::from(99)])]), Err(Error::UnknownId { id: Id::from(99) }));
    assert_eq!(alice.recall(Id::from(99), Mode::Fair, Removal::Erase), Err(Error::UnknownId { id: Id::from(99) }));
    assert_eq!(alice.add_lot("", b"x"), Err(Error::InvalidName { reason: NameProblem::LotLabelEmpty }));
    assert_eq!(alice.verify().unwrap(), before);
    // The next id is still the next one: nothing was used up.
    assert_eq!(alice.add_lot("b", b"b").unwrap(), Id::from(2));
}

fn get_returns_kind_label_legs_and_content<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let [a, b, _, m1, ..] = reference_example(&alice);
    let lot = alice.get(a).unwrap();
    assert_eq!(lot.kind, NodeKind::Lot { label: "user_message".into() });
    assert_eq!(lot.content(), Some(&b"I live in Pune"[..]));
    let memory = alice.get(m1).unwrap();
    assert_eq!(memory.kind, NodeKind::Memory { legs: vec![Leg::from([a]), Leg::from([b])] });
    assert_eq!(memory.content(), Some(&b"user lives in Pune"[..]));
    assert_eq!(alice.get(Id::from(0)).unwrap_err(), Error::UnknownId { id: Id::from(0) });
}

fn a_batch_commits_all_its_writes_with_final_ids<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let (lot, memory) = alice
        .batch(|batch| {
            let lot = batch.add_lot("tool", b"result")?;
            let memory = batch.remember(b"learned", &[Leg::from([lot])])?;
            Ok((lot, memory))
        })
        .unwrap();
    assert_eq!((lot, memory), (Id::from(1), Id::from(2)));
    assert_eq!(alice.get(memory).unwrap().content(), Some(&b"learned"[..]));
    assert_eq!(alice.memories().unwrap(), vec![memory]);
}

fn a_failed_batch_writes_nothing<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let before = alice.verify().unwrap();
    let outcome = alice.batch(|batch| {
        let lot = batch.add_lot("tool", b"result")?;
        batch.remember(b"learned", &[Leg::from([lot]), Leg::from([Id::from(77)])])
    });
    assert_eq!(outcome, Err(Error::UnknownId { id: Id::from(77) }));
    assert_eq!(alice.verify().unwrap(), before);
    assert_eq!(alice.lots().unwrap(), Vec::<Id>::new());
}

fn everything_survives_a_reopen<B: Backend>() {
    let place = B::new();
    let token;
    let fingerprint;
    {
        let store = place.open(Options::default()).unwrap();
        token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        let [_, _, c, ..] = reference_example(&alice);
        alice.recall(c, Mode::Fair, Removal::Untrusted).unwrap();
        fingerprint = alice.verify().unwrap();
    }
    let store = place.open(Options::default()).unwrap();
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(alice.verify().unwrap(), fingerprint);
    assert_eq!(alice.verify_extends(&fingerprint).unwrap(), fingerprint);
    assert_eq!(alice.memories().unwrap(), vec![Id::from(4)]);
    assert_eq!(alice.report().records, 7);
    assert_eq!(alice.report().dropped_bytes, 0);
    assert_eq!(alice.add_lot("next", b"n").unwrap(), Id::from(7));
}

fn threads_share_one_agent_without_losing_writes<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let threads: Vec<_> = (0..4)
        .map(|thread| {
            let alice = alice.clone();
            std::thread::spawn(move || {
                (0..25)
                    .map(|index| alice.add_lot("thread", format!("{thread}-{index}").as_bytes()).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<Id> = threads.into_iter().flat_map(|thread| thread.join().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, (1..=100).map(Id::from).collect::<Vec<_>>());
    assert_eq!(alice.lots().unwrap().len(), 100);
}

cheesedb_tests::conformance!(
    fair_recall_of_the_weather_tool_removes_m2_and_m3_and_keeps_m1,
    ids_are_sequential_from_one_and_shared_by_lots_and_memories,
    fair_and_strict_differ_on_a_diamond,
    strict_recall_follows_history_through_dead_memories,
    a_preview_writes_nothing,
    recall_is_permanent_and_a_dead_node_is_never_a_parent,
    refused_memories_write_nothing,
    get_returns_kind_label_legs_and_content,
    a_batch_commits_all_its_writes_with_final_ids,
    a_failed_batch_writes_nothing,
    everything_survives_a_reopen,
    threads_share_one_agent_without_losing_writes,
);
