//! Every request through the memory server answers as the same call on an `Agent` does:
//! the same values and the same errors.

use crate::common;

use cheesedb::{Error, Id, Leg, Limit, Mode, NameProblem, NodeKind, Removal, Store, TrustLevel};
use common::server_process::ServerProcess;

#[test]
fn every_agent_method_answers_as_the_library_does() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    let alice = client.open_agent(&token).unwrap();

    assert_eq!(alice.name().unwrap(), "alice");
    let a = alice.add_lot("user_message", b"I live in Pune").unwrap();
    let b = alice.add_lot("web_page", b"profile: lives in Pune").unwrap();
    let c = alice.add_lot("weather_tool", b"Pune: rain").unwrap();
    let m1 = alice.remember(b"user lives in Pune", &[Leg::from([a]), Leg::from([b])]).unwrap();
    let m2 = alice.remember(b"Pune is rainy", &[Leg::from([c])]).unwrap();
    let m3 = alice.remember(b"carry an umbrella", &[Leg::from([m1, m2])]).unwrap();
    assert_eq!((a, m3), (Id::from(1), Id::from(6)));

    let node = alice.get(m1).unwrap();
    assert_eq!(node.content(), Some(&b"user lives in Pune"[..]));
    assert_eq!(node.kind, NodeKind::Memory { legs: vec![Leg::from([a]), Leg::from([b])] });
    assert!(node.is_alive() && node.tracked_parents().is_empty());
    assert_eq!(alice.get(a).unwrap().kind, NodeKind::Lot { label: String::from("user_message") });
    assert_eq!(alice.lots().unwrap(), vec![a, b, c]);
    assert_eq!(alice.memories().unwrap(), vec![m1, m2, m3]);

    let hits = alice.search("rain", 10).unwrap();
    assert_eq!(hits.iter().map(|hit| hit.id).collect::<Vec<_>>(), vec![c]);
    alice.set_vector(m1, &[1.0, 0.0]).unwrap();
    alice.set_vector(m2, &[0.0, 1.0]).unwrap();
    assert!(alice.has_vector(m1).unwrap() && !alice.has_vector(a).unwrap());
    assert_eq!(alice.search_vector(&[0.1, 1.0], 1).unwrap()[0].id, m2);
    assert!(!alice.search_hybrid("Pune", &[1.0, 0.0], 5).unwrap().is_empty());
    assert_eq!(alice.trust(m3).unwrap(), TrustLevel::Normal);

    let fingerprint = alice.verify().unwrap();
    assert_eq!(alice.preview_recall(c, Mode::Fair).unwrap(), vec![m2, m3]);
    assert_eq!(alice.preview_recall_with(c, Mode::Strict, Removal::Erase).unwrap(), vec![m2, m3]);
    assert_eq!(alice.recall(c, Mode::Fair, Removal::Untrusted).unwrap(), vec![m2, m3]);
    assert_eq!(alice.get(m2).unwrap().content(), None);
    assert_eq!(alice.audit(m2).unwrap().content(), Some(&b"Pune is rainy"[..]));
    alice.compact().unwrap();
    assert_eq!(alice.audit(m2).unwrap().content(), None);
    let later = alice.verify_extends(&fingerprint).unwrap();
    assert!(later.records > fingerprint.records);
    assert!(alice.report().unwrap().segments >= 1);

    // The errors are the library's own.
    assert_eq!(alice.get(Id::from(99)), Err(Error::UnknownId { id: Id::from(99) }));
    assert_eq!(alice.remember(b"x", &[Leg::from([c])]), Err(Error::DeadParent { id: c }));
    assert_eq!(alice.remember(b"x", &[]), Err(Error::NoLegs));
    assert_eq!(alice.recall(c, Mode::Fair, Removal::Untrusted), Err(Error::AlreadyRecalled { id: c }));
    assert!(matches!(alice.add_lot("", b"x"), Err(Error::InvalidName { reason: NameProblem::LotLabelEmpty })));
    let too_big = vec![0u8; cheesedb::limits::CONTENT_MAX_BYTES + 1];
    assert!(matches!(alice.add_lot("big", &too_big), Err(Error::LimitExceeded { what: Limit::ContentBytes, .. })));
    assert!(matches!(alice.set_vector(m1, &[1.0, 2.0, 3.0]), Err(Error::InvalidVector { .. })));
    assert!(matches!(
        alice.verify_extends(&cheesedb::Fingerprint { records: 1, chain: [0; 32] }),
        Err(Error::HistoryMismatch { .. })
    ));
    // The connection goes on after every refusal.
    assert_eq!(alice.lots().unwrap(), vec![a, b]);
    drop(alice);
    server.stop();

    // What the server wrote is what the library reads.
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(alice.memories().unwrap(), vec![m1]);
    assert_eq!(alice.verify().unwrap(), later);
}

#[test]
fn a_batch_commits_whole_or_not_at_all() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let alice = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();
    let (lot, memory) = alice
        .batch(|batch| {
            let lot = batch.add_lot("note", b"first")?;
            let memory = batch.remember(b"from the note", &[Leg::from([lot])])?;
            batch.set_vector(memory, &[0.5, 0.5])?;
            assert_eq!(batch.len(), 3);
            Ok((lot, memory))
        })
        .unwrap();
    assert_eq!(alice.get(memory).unwrap().kind, NodeKind::Memory { legs: vec![Leg::from([lot])] });
    assert!(alice.has_vector(memory).unwrap());

    // A step refused inside the batch comes back to the closure; returning it drops the batch.
    let refused = alice.batch(|batch| {
        batch.add_lot("note", b"never written")?;
        batch.remember(b"bad", &[Leg::from([Id::from(77)])])
    });
    assert_eq!(refused, Err(Error::UnknownId { id: Id::from(77) }));
    assert_eq!(alice.lots().unwrap(), vec![lot]);

    // An empty batch writes nothing and succeeds.
    alice.batch(|_batch| Ok(())).unwrap();

    // Writes of other clients wait for an open batch and then go on.
    let other = client.open_agent(&client.create_agent("bob").unwrap()).unwrap();
    other.add_lot("note", b"bob's").unwrap();
    server.stop();
}

#[test]
fn store_requests_answer_as_the_library_does() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    client.create_agent("alice").unwrap();
    client.create_agent("bob").unwrap();
    assert_eq!(client.agent_names().unwrap(), vec!["alice", "bob"]);
    assert!(matches!(client.create_agent("alice"), Err(Error::AgentExists { .. })));
    assert!(matches!(client.create_agent(""), Err(Error::InvalidName { .. })));
    client.delete_agent("alice").unwrap();
    assert_eq!(client.delete_agent("alice"), Err(Error::UnknownAgent { name: String::from("alice") }));
    assert_eq!(client.agent_names().unwrap(), vec!["bob"]);
    assert!(client.left_behind().unwrap().is_empty());
    // A client is shared between threads.
    let threads: Vec<_> = (0..4)
        .map(|index| {
            let client = client.clone();
            std::thread::spawn(move || client.create_agent(&format!("agent-{index}")).unwrap())
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(client.agent_names().unwrap().len(), 5);
    server.stop();
}

#[test]
fn a_deleted_agent_answers_agent_deleted_to_its_open_sessions() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let alice = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();
    alice.add_lot("note", b"x").unwrap();
    client.delete_agent("alice").unwrap();
    assert_eq!(alice.add_lot("note", b"y"), Err(Error::AgentDeleted));
    server.stop();
}
