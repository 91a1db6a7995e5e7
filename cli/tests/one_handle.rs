//! One `cheesedb::Store` and `cheesedb::Agent` for a store open in this process and for one a
//! memory server holds: the same sequence of calls through each gives the same answers, errors
//! and ids, whichever way the store is reached.

use crate::common;

use std::fmt::Debug;
use std::sync::mpsc;
use std::time::Duration;

use cheesedb::{Agent, Error, Id, Leg, Mode, ReadSet, Removal, Store, Token, TrustLevel, TrustRules};
use common::server_process::ServerProcess;

/// The rules of the trust.toml below.
fn rules() -> TrustRules {
    TrustRules::new().with("user_message", TrustLevel::High).with("web_page", TrustLevel::Low)
}

const TRUST_TOML: &str = "[labels]\nuser_message = \"high\"\nweb_page = \"low\"\n";

/// What each call answered, in order, as text.
#[derive(Default)]
struct Transcript {
    lines: Vec<String>,
}

impl Transcript {
    fn note(&mut self, what: &str, answer: impl Debug) {
        self.lines.push(format!("{what}: {answer:?}"));
    }
}

/// Lots, memories, a recall that erases, a preview, searches and vectors, verify.
fn writes_and_reads(alice: &Agent, said: &mut Transcript) {
    let message = alice.add_lot("user_message", b"I live in Pune").unwrap();
    let page = alice.add_lot("web_page", b"profile: lives in Pune").unwrap();
    let weather = alice.add_lot("weather_tool", b"Pune: rain").unwrap();
    let lives = alice.remember(b"user lives in Pune", &[Leg::from([message]), Leg::from([page])]).unwrap();
    let rainy = alice.remember(b"Pune is rainy", &[Leg::from([weather])]).unwrap();
    let umbrella = alice.remember(b"carry an umbrella", &[Leg::from([lives, rainy])]).unwrap();
    said.note("ids", (message, page, weather, lives, rainy, umbrella));
    said.note("no legs", alice.remember(b"from nowhere", &[]));
    said.note("unknown parent", alice.remember(b"x", &[Leg::from([Id::from(99)])]));
    said.note("empty label", alice.add_lot("", b"x"));
    for id in [message, page, weather, lives, umbrella] {
        said.note("trust", alice.trust(id));
    }
    said.note("trust of an unknown id", alice.trust(Id::from(99)));
    said.note("preview", alice.preview_recall(weather, Mode::Fair));
    said.note("preview strict", alice.preview_recall_with(message, Mode::Strict, Removal::Erase));
    said.note("vector", alice.set_vector(lives, &[1.0, 0.0]));
    said.note("bad vector", alice.set_vector(lives, &[f32::NAN]));
    said.note("has vector", (alice.has_vector(lives), alice.has_vector(page)));
    said.note("search", alice.search("Pune", 10).map(|hits| hits.iter().map(|hit| hit.id).collect::<Vec<_>>()));
    said.note("search by vector", alice.search_vector(&[1.0, 0.1], 10).map(|hits| hits.len()));
    said.note("hybrid", alice.search_hybrid("umbrella", &[0.0, 1.0], 10).map(|hits| hits.len()));
    said.note("recall", alice.recall(weather, Mode::Fair, Removal::Erase));
    said.note("recall again", alice.recall(weather, Mode::Fair, Removal::Untrusted));
    said.note("erased", alice.get(rainy).map(|node| (node.is_alive(), node.content().map(<[u8]>::to_vec))));
    said.note("alive", alice.get(lives).map(|node| node.content().map(<[u8]>::to_vec)));
    said.note("audit", alice.audit(umbrella).map(|node| node.is_alive()));
    said.note("lists", (alice.lots(), alice.memories()));
    said.note("name", alice.name());
    said.note("encrypted", alice.is_encrypted());
    said.note("verify", alice.verify().map(|fingerprint| fingerprint.records));
    let kept = alice.verify().unwrap();
    said.note("verify extends", alice.verify_extends(&kept).map(|fingerprint| fingerprint == kept));
    said.note("compact", alice.compact());
    said.note("report", alice.report().dropped_bytes);
}

/// A batch, a staged batch committed and one dropped, and the gate between them and the writes
/// of this thread and of another.
fn batches(alice: &Agent, other: &Agent, said: &mut Transcript) {
    let base = alice.add_lot("note", b"base").unwrap();
    said.note(
        "batch",
        alice.batch(|batch| {
            let lot = batch.add_lot("tool", b"in a batch")?;
            let memory = batch.remember(b"from the batch", &[Leg::from([lot, base])])?;
            batch.set_vector(memory, &[0.5, 0.5])?;
            Ok((lot, memory, batch.len()))
        }),
    );
    said.note("failed batch", alice.batch(|batch| batch.add_lot("tool", b"x").and_then(|_| batch.remember(b"y", &[]))));
    said.note(
        "reads in a batch",
        alice.batch(|batch| batch.remember_tracked(b"z", &[Leg::from([base])], &ReadSet::new())),
    );

    alice.begin_staged().unwrap();
    let staged = alice.stage(|batch| batch.add_lot("tool", b"staged")).unwrap();
    said.note("staged", staged);
    said.note("write outside the batch", alice.add_lot("note", b"outside"));
    said.note("write of another handle on this thread", other.add_lot("note", b"other"));
    said.note("a second batch on this thread", other.begin_staged());
    said.note("not written yet", alice.get(staged));
    let (started, started_seen) = mpsc::channel();
    let writer = {
        let other = other.clone();
        std::thread::spawn(move || {
            started.send(()).unwrap();
            other.add_lot("note", b"from another thread")
        })
    };
    started_seen.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    said.note("a refused step", alice.stage(|batch| batch.remember(b"no legs", &[])));
    said.note("a second step", alice.stage(|batch| batch.remember(b"from the staged lot", &[Leg::from([staged])])));
    said.note("commit", alice.commit_staged());
    said.note("the other thread's write, after the commit", writer.join().unwrap());
    said.note("committed", alice.get(staged).map(|node| node.content().map(<[u8]>::to_vec)));
    let dropped = alice.stage(|batch| batch.add_lot("tool", b"dropped")).unwrap();
    said.note("drop", (dropped, alice.drop_staged()));
    said.note("the dropped id is given again", alice.add_lot("note", b"after the drop"));
    said.note("nothing open", (alice.commit_staged(), alice.drop_staged()));
}

/// Read tracking: gets and searches count, listing and audit do not, the reads go with the
/// memory written, and off forgets them.
fn tracking(alice: &Agent, other: &Agent, said: &mut Transcript) {
    let declared = alice.add_lot("user_message", b"tell me about the moon").unwrap();
    let poisoned = alice.add_lot("web_page", b"the moon is cheese").unwrap();
    let listed = alice.add_lot("note", b"only listed").unwrap();
    alice.track_reads(true).unwrap();
    alice.get(poisoned).unwrap();
    alice.lots().unwrap();
    alice.audit(listed).unwrap();
    other.get(listed).unwrap();
    let memory = alice.remember(b"the moon is edible", &[Leg::from([declared])]).unwrap();
    said.note("tracked", alice.get(memory).map(|node| node.tracked_parents().to_vec()));
    said.note("trust of what rests on a low source", alice.trust(memory));
    let found = alice.search("cheese", 10).unwrap().iter().map(|hit| hit.id).collect::<Vec<_>>();
    let batched = alice.batch(|batch| batch.remember(b"found by a search", &[Leg::from([declared])])).unwrap();
    said.note("tracked in a batch", (found, alice.get(batched).map(|node| node.tracked_parents().to_vec())));
    let staged = alice.stage(|batch| batch.remember(b"staged", &[Leg::from([declared])])).unwrap();
    alice.commit_staged().unwrap();
    said.note("tracked in a staged batch", alice.get(staged).map(|node| node.tracked_parents().to_vec()));
    let given: ReadSet = [listed].into_iter().collect();
    let explicit = alice.remember_tracked(b"given reads", &[Leg::from([declared])], &given).unwrap();
    said.note("given and tracked", alice.get(explicit).map(|node| node.tracked_parents().to_vec()));
    said.note("recall of the source", alice.recall(poisoned, Mode::Fair, Removal::Untrusted));
    alice.get(declared).unwrap();
    let fresh = other.add_lot("note", b"read, then recalled").unwrap();
    alice.get(fresh).unwrap();
    other.recall(fresh, Mode::Fair, Removal::Untrusted).unwrap();
    said.note("a read recalled since", alice.remember(b"x", &[Leg::from([declared])]));
    alice.track_reads(false).unwrap();
    said.note(
        "off",
        alice
            .remember(b"x", &[Leg::from([declared])])
            .and_then(|id| alice.get(id))
            .map(|node| node.tracked_parents().len()),
    );
}

/// Everything a store does, then its agents through `sequence`.
fn sequence(store: &Store) -> Vec<String> {
    let mut said = Transcript::default();
    let token = store.create_agent("alice").unwrap();
    said.note("twice", store.create_agent("alice"));
    said.note("reserved name", store.create_agent("cheesedb-x"));
    let secret = store.create_encrypted_agent("bob").unwrap();
    said.note("names", store.agent_names());
    said.note("encrypted", (store.is_encrypted("alice"), store.is_encrypted("bob"), store.is_encrypted("carol")));
    said.note("name of a token", (store.agent_name_of(&token), store.agent_name_of(&secret)));
    let wrong: Token = format!("cheesedb-{}", "0".repeat(64)).parse().unwrap();
    said.note("wrong token", store.open_agent(&wrong).map(drop));
    said.note("read-only", store.is_read_only());
    said.note("same process", store.check_same_process());
    let alice = store.open_agent(&token).unwrap();
    let other = store.open_agent(&token).unwrap();
    writes_and_reads(&alice, &mut said);
    batches(&alice, &other, &mut said);
    tracking(&alice, &other, &mut said);
    let bob = store.open_agent(&secret).unwrap();
    said.note(
        "bob",
        (
            bob.is_encrypted(),
            bob.add_lot("note", b"sealed"),
            bob.get(Id::from(1)).map(|node| node.content().map(<[u8]>::to_vec)),
        ),
    );
    said.note("encrypt while open", store.encrypt_agent(&token));
    drop((alice, other, bob));
    said.note("delete", store.delete_agent("bob"));
    said.note("delete again", store.delete_agent("bob"));
    said.note("left behind", store.left_behind());
    said.note("names after", store.agent_names());
    said.lines
}

#[test]
fn one_sequence_gives_the_same_answers_local_and_served() {
    let local_folder = tempfile::tempdir().unwrap();
    let local = Store::builder(local_folder.path()).trust_rules(rules()).open().unwrap();
    let local_said = sequence(&local);
    assert!(!local.is_served());

    let served_folder = tempfile::tempdir().unwrap();
    std::fs::write(served_folder.path().join("trust.toml"), TRUST_TOML).unwrap();
    let server = ServerProcess::start(served_folder.path(), &[]);
    let served = Store::connect(served_folder.path()).unwrap();
    assert!(served.is_served() && served.socket_path() == Some(server.socket.as_path()));
    let served_said = sequence(&served);
    drop(served);
    server.stop();

    // The local answers are the engine's, as the other tests check them; a few that matter here.
    for expected in [
        "write outside the batch: Err(BatchOpen)",
        "write of another handle on this thread: Err(BatchOpen)",
        "the other thread's write, after the commit: Ok(Id(13))",
        "tracked: Ok([Id(16)])",
        "a read recalled since: Err(DeadParent { id: Id(21) })",
        "trust of what rests on a low source: Ok(Low)",
    ] {
        assert!(local_said.iter().any(|line| line == expected), "{expected} is not among {local_said:#?}");
    }
    for (local_line, served_line) in local_said.iter().zip(&served_said) {
        assert_eq!(local_line, served_line, "the two ways differ");
    }
    assert_eq!(local_said.len(), served_said.len());
}

#[test]
fn what_only_a_local_store_does_is_refused_through_a_server_with_nothing_sent() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let store = Store::connect(&server.socket).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let lot = alice.add_lot("note", b"x").unwrap();
    let needs_local = |result: Result<(), Error>| matches!(result, Err(Error::NeedsLocalStore { .. }));
    assert!(needs_local(alice.trust_under(lot, &rules()).map(drop)));
    let mut staged = cheesedb::StagedBatch::default();
    assert!(needs_local(alice.stage_into(&mut staged, |batch| batch.add_lot("note", b"y")).map(drop)));
    assert!(needs_local(alice.commit_staged_batch(staged)));
    assert!(needs_local(alice.search_heap_bytes().map(drop)));
    assert!(needs_local(alice.graph_heap_bytes().map(drop)));
    assert!(needs_local(store.verify_agent_without_token("alice").map(drop)));
    let reads: ReadSet = [lot].into_iter().collect();
    assert!(needs_local(alice.batch(|batch| batch.remember_tracked(b"m", &[Leg::from([lot])], &reads)).map(drop)));
    assert_eq!(alice.memories(), Ok(vec![]), "nothing was written");

    // Connected read-only, every write is refused here, before a request.
    let reader = Store::builder(&server.socket).read_only(true).connect().unwrap();
    assert!(reader.is_read_only());
    assert_eq!(reader.create_agent("bob"), Err(Error::ReadOnly));
    let token = store.create_agent("carol").unwrap();
    let carol = reader.open_agent(&token).unwrap();
    assert_eq!(carol.add_lot("note", b"x"), Err(Error::ReadOnly));
    assert_eq!(carol.begin_staged(), Err(Error::ReadOnly));
    assert_eq!(carol.lots(), Ok(vec![]));
    drop((alice, carol, store, reader));
    server.stop();
}
