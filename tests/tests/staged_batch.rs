//! A batch staged over several calls: final ids at once, one commit, refused when another write
//! came between its steps, checked again at the commit; on every backend.

use cheesedb::{Agent, Error, Id, Leg, Mode, Options, Removal, StagedBatch};
use cheesedb_tests::backend::Backend;

fn open_alice<B: Backend>() -> (B, Agent<B::Storage>) {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    (place, alice)
}

fn staged_writes_get_final_ids_and_commit_together<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let earlier = alice.add_lot("user", b"before the batch").unwrap();
    let mut staged = StagedBatch::default();
    let lot = alice.stage_into(&mut staged, |batch| batch.add_lot("tool", b"result")).unwrap();
    let memory = alice
        .stage_into(&mut staged, |batch| batch.remember(b"what the tool showed", &[Leg::from([lot, earlier])]))
        .unwrap();
    alice.stage_into(&mut staged, |batch| batch.set_vector(memory, &[1.0, 0.5])).unwrap();
    assert_eq!(staged.len(), 3);
    assert_eq!(alice.get(lot), Err(Error::UnknownId { id: lot }), "nothing is written before the commit");

    alice.commit_staged_batch(staged).unwrap();
    assert_eq!((lot, memory), (Id::from(2), Id::from(3)));
    assert_eq!(alice.get(memory).unwrap().content(), Some(&b"what the tool showed"[..]));
    assert!(alice.has_vector(memory).unwrap());
}

fn a_failed_step_keeps_the_earlier_steps_and_adds_nothing<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let mut staged = StagedBatch::default();
    let lot = alice.stage_into(&mut staged, |batch| batch.add_lot("tool", b"result")).unwrap();
    let refused = alice.stage_into(&mut staged, |batch| batch.remember(b"no sources", &[]));
    assert_eq!(refused, Err(Error::NoLegs));
    let unknown = Id::from(99);
    let refused = alice.stage_into(&mut staged, |batch| batch.remember(b"bad source", &[Leg::from([unknown])]));
    assert_eq!(refused, Err(Error::UnknownId { id: unknown }));
    assert_eq!(staged.len(), 1);
    alice.commit_staged_batch(staged).unwrap();
    assert_eq!(alice.lots().unwrap(), vec![lot]);
}

fn a_write_between_steps_is_a_conflict_and_nothing_is_written<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let mut staged = StagedBatch::default();
    alice.stage_into(&mut staged, |batch| batch.add_lot("tool", b"staged")).unwrap();
    let between = alice.add_lot("user", b"came between").unwrap();
    assert_eq!(alice.stage_into(&mut staged, |batch| batch.add_lot("tool", b"more")), Err(Error::BatchConflict));
    assert_eq!(alice.commit_staged_batch(staged), Err(Error::BatchConflict));
    assert_eq!(alice.lots().unwrap(), vec![between]);
}

fn a_recall_between_steps_is_caught_at_the_commit<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let source = alice.add_lot("web", b"a rumour").unwrap();
    let mut staged = StagedBatch::default();
    alice.stage_into(&mut staged, |batch| batch.remember(b"built on the rumour", &[Leg::from([source])])).unwrap();
    alice.recall(source, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(alice.commit_staged_batch(staged), Err(Error::DeadParent { id: source }));
    assert_eq!(alice.memories().unwrap(), Vec::<Id>::new());
}

fn a_recall_between_two_steps_is_caught_at_the_commit<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let source = alice.add_lot("web", b"a rumour").unwrap();
    let mut staged = StagedBatch::default();
    alice.stage_into(&mut staged, |batch| batch.remember(b"built on the rumour", &[Leg::from([source])])).unwrap();
    alice.recall(source, Mode::Fair, Removal::Untrusted).unwrap();
    let lot = alice.stage_into(&mut staged, |batch| batch.add_lot("tool", b"later step")).unwrap();
    assert_eq!(lot, Id::from(3), "a recall takes no id, so the ids still hold");
    assert_eq!(alice.commit_staged_batch(staged), Err(Error::DeadParent { id: source }));
    assert_eq!(alice.lots().unwrap(), Vec::<Id>::new());
}

fn a_batch_staged_on_one_agent_is_checked_again_on_another<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let bob = store.open_agent(&store.create_agent("bob").unwrap()).unwrap();
    // The same writes on both agents, but alice recalls her 1 and bob his 2: the same next id
    // and the same length of log, while the parent staged below is dead only in bob.
    for agent in [&alice, &bob] {
        agent.add_lot("web", b"first").unwrap();
        agent.add_lot("web", b"second").unwrap();
    }
    alice.recall(Id::from(1), Mode::Fair, Removal::Untrusted).unwrap();
    bob.recall(Id::from(2), Mode::Fair, Removal::Untrusted).unwrap();
    let mut staged = StagedBatch::default();
    alice.stage_into(&mut staged, |batch| batch.remember(b"learned by alice", &[Leg::from([Id::from(2)])])).unwrap();
    assert_eq!(bob.commit_staged_batch(staged), Err(Error::DeadParent { id: Id::from(2) }));
    assert_eq!(bob.memories().unwrap(), Vec::<Id>::new());
}

fn a_dropped_staged_batch_writes_nothing<B: Backend>() {
    let (_place, alice) = open_alice::<B>();
    let mut staged = StagedBatch::default();
    alice.stage_into(&mut staged, |batch| batch.add_lot("tool", b"dropped")).unwrap();
    drop(staged);
    let next = alice.add_lot("user", b"after").unwrap();
    assert_eq!(next, Id::from(1), "the dropped batch took no id");
}

cheesedb_tests::conformance!(
    staged_writes_get_final_ids_and_commit_together,
    a_failed_step_keeps_the_earlier_steps_and_adds_nothing,
    a_write_between_steps_is_a_conflict_and_nothing_is_written,
    a_recall_between_steps_is_caught_at_the_commit,
    a_recall_between_two_steps_is_caught_at_the_commit,
    a_batch_staged_on_one_agent_is_checked_again_on_another,
    a_dropped_staged_batch_writes_nothing,
);
