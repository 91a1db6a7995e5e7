//! An encrypted agent works as a plaintext one does: the same writes, recalls, searches and
//! compactions give the same answers, before and after a reopen; verify and report work; a
//! wrong token is `UnknownToken`; a plaintext agent in the same store keeps working. On every
//! backend.

use cheesedb::{
    Agent, CorruptReason, Error, Id, Leg, Mode, Node, NodeKind, Options, ReadSet, Removal, StagedBatch, Store, Token,
    TrustLevel, TrustRules,
};
use cheesedb_core::codec::catalog_file::CatalogFile;
use cheesedb_core::digest::token_hash;
use cheesedb_core::log::names::CATALOG_FILE;
use cheesedb_tests::backend::Backend;

/// Small segments (seals and rolls), frequent snapshots.
fn options() -> Options {
    Options::default().segment_size_max_bytes(4096).snapshot_after_bytes(2048)
}

/// The ids one script hands out, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Script {
    user: Id,
    web: Id,
    tool: Id,
    umbrella: Id,
    calendar: Id,
    last: Id,
}

/// The same writes, whichever agent runs them: every kind of write, with vectors and several
/// legs, over more than one segment.
fn write_script<S: cheesedb::SharedStorage>(agent: &Agent<S>) -> Script {
    let user = agent.add_lot("user_message", b"I live in Pune and cycle to work").unwrap();
    let web = agent.add_lot("web_page", b"profile: lives in Pune, likes rain").unwrap();
    let tool = agent.add_lot("weather_tool", b"Pune: rain all week, heavy at night").unwrap();
    let lives = agent.remember(b"the user lives in Pune", &[Leg::from([user]), Leg::from([web])]).unwrap();
    let rainy = agent.remember(b"Pune is rainy this week", &[Leg::from([tool])]).unwrap();
    let umbrella = agent.remember(b"carry an umbrella when cycling", &[Leg::from([lives, rainy])]).unwrap();
    let reads: ReadSet = [web].into_iter().collect();
    agent.remember_tracked(b"the user likes rain", &[Leg::from([user])], &reads).unwrap();
    agent.set_vector(user, &[0.9, 0.1, 0.0, 0.2]).unwrap();
    agent.set_vector(rainy, &[0.1, 0.9, 0.3, 0.0]).unwrap();
    agent.set_vector(umbrella, &[0.5, 0.5, 0.1, 0.1]).unwrap();
    let calendar = agent
        .batch(|batch| {
            let calendar = batch.add_lot("calendar", b"meeting in Mumbai on Friday")?;
            let trip = batch.remember(b"the user travels to Mumbai", &[Leg::from([calendar, user])])?;
            batch.set_vector(trip, &[0.2, 0.2, 0.9, 0.1])?;
            Ok(calendar)
        })
        .unwrap();
    let mut staged = StagedBatch::default();
    let note = agent.stage_into(&mut staged, |batch| batch.add_lot("user_message", b"I hate umbrellas")).unwrap();
    agent
        .stage_into(&mut staged, |batch| batch.remember(b"offer a raincoat instead", &[Leg::from([note, rainy])]))
        .unwrap();
    agent.commit_staged_batch(staged).unwrap();
    let mut last = note;
    for index in 0..40 {
        let text = format!("note {index}: rain in Pune is {} mm", index * 3);
        last = agent.remember(text.as_bytes(), &[Leg::from([tool]), Leg::from([web])]).unwrap();
    }
    Script { user, web, tool, umbrella, calendar, last }
}

fn rules() -> TrustRules {
    TrustRules::new().with("user_message", TrustLevel::High).with("web_page", TrustLevel::Low)
}

/// Everything a reader can ask of `agent` that does not change it.
fn answers<S: cheesedb::SharedStorage>(agent: &Agent<S>, last: Id) -> String {
    let mut out = String::new();
    let query = [0.4, 0.6, 0.2, 0.1];
    for id in 1..=last.get() {
        let id = Id::from(id);
        let node = agent.get(id).unwrap();
        out += &format!("get {id}: {}\n", shown(&node));
        out += &format!("audit {id}: {}\n", shown(&agent.audit(id).unwrap()));
        if node.is_alive() {
            // A recalled node's level may rest on the label of an erased lot: see
            // `an_erase_takes_an_encrypted_lots_label_with_its_content`.
            out += &format!("trust {id}: {:?}\n", agent.trust_under(id, &rules()));
            out += &format!("has_vector {id}: {:?}\n", agent.has_vector(id));
            out += &format!("preview {id}: {:?}\n", agent.preview_recall(id, Mode::Strict));
        }
    }
    out += &format!("lots {:?}\nmemories {:?}\n", agent.lots().unwrap(), agent.memories().unwrap());
    for words in ["Pune", "rain umbrella", "Mumbai", "raincoat", "nothing"] {
        out += &format!("search {words}: {:?}\n", agent.search(words, 10).unwrap());
        out += &format!("hybrid {words}: {:?}\n", agent.search_hybrid(words, &query, 10).unwrap());
    }
    out += &format!("vector: {:?}\n", agent.search_vector(&query, 10).unwrap());
    out
}

/// A node as `answers` shows it: an erased lot without its label, which an encrypted agent
/// erases with the content (see `an_erase_takes_an_encrypted_lots_label_with_its_content`).
fn shown(node: &Node) -> String {
    match &node.kind {
        NodeKind::Lot { .. } if node.content().is_none() => {
            format!("erased lot {}, alive {}, tracked {:?}", node.id, node.is_alive(), node.tracked_parents())
        }
        _ => format!("{node:?}"),
    }
}

/// Fails on the first line where the encrypted agent's answers differ from the plaintext's.
fn assert_same_lines(sealed: &str, plain: &str, step: &str) {
    for (sealed, plain) in sealed.lines().zip(plain.lines()) {
        assert_eq!(sealed, plain, "after {step}: the encrypted agent (left) answers otherwise");
    }
    assert_eq!(sealed.lines().count(), plain.lines().count(), "after {step}");
}

/// A store holding a plaintext agent and an encrypted one that ran the same script.
struct Twins<B: Backend> {
    place: B,
    store: Store<B::Storage>,
    plain: (Token, Agent<B::Storage>),
    sealed: (Token, Agent<B::Storage>),
    script: Script,
}

fn twins<B: Backend>() -> Twins<B> {
    let place = B::new();
    let store = place.open(options()).unwrap();
    let plain_token = store.create_agent("plain").unwrap();
    let sealed_token = store.create_encrypted_agent("sealed").unwrap();
    let plain = store.open_agent(&plain_token).unwrap();
    let sealed = store.open_agent(&sealed_token).unwrap();
    assert!(sealed.is_encrypted() && !plain.is_encrypted());
    let script = write_script(&plain);
    assert_eq!(write_script(&sealed), script);
    assert!(sealed.report().segments >= 2, "the script spans segments");
    Twins { place, store, plain: (plain_token, plain), sealed: (sealed_token, sealed), script }
}

impl<B: Backend> Twins<B> {
    fn assert_same(&self, step: &str) {
        assert_same_lines(&answers(&self.sealed.1, self.script.last), &answers(&self.plain.1, self.script.last), step);
    }

    /// Runs `action` on both agents and checks it answers the same.
    fn both<T: PartialEq + std::fmt::Debug>(&self, step: &str, action: impl Fn(&Agent<B::Storage>) -> T) {
        assert_eq!(action(&self.sealed.1), action(&self.plain.1), "{step}");
        self.assert_same(step);
    }

    fn reopen(self) -> Twins<B> {
        let Twins { place, store, plain: (plain_token, plain), sealed: (sealed_token, sealed), script } = self;
        drop((plain, sealed, store));
        let store = place.open(options()).unwrap();
        let plain = store.open_agent(&plain_token).unwrap();
        let sealed = store.open_agent(&sealed_token).unwrap();
        let (plain, sealed) = ((plain_token, plain), (sealed_token, sealed));
        assert!(sealed.1.is_encrypted() && !plain.1.is_encrypted());
        Twins { place, store, plain, sealed, script }
    }
}

fn an_encrypted_agent_answers_as_a_plaintext_agent_with_the_same_history<B: Backend>() {
    let twins = twins::<B>();
    twins.assert_same("the writes");
    let script = twins.script;
    twins.both("a Fair recall with Untrusted", |agent| agent.recall(script.tool, Mode::Fair, Removal::Untrusted));
    twins.both("a Strict recall with Untrusted", |agent| {
        agent.recall(script.calendar, Mode::Strict, Removal::Untrusted)
    });
    twins.both("a Strict recall with Erase", |agent| agent.recall(script.web, Mode::Strict, Removal::Erase));
    twins.both("a recall again", |agent| agent.recall(script.web, Mode::Strict, Removal::Erase));
    twins.both("an Erase after Untrusted", |agent| agent.recall(script.tool, Mode::Fair, Removal::Erase));
    twins.both("a write after the recalls", |agent| agent.remember(b"dry again", &[Leg::from([script.user])]));
    twins.both("verify", |agent| agent.verify().map(|fingerprint| fingerprint.records));
    let twins = twins.reopen();
    twins.assert_same("a reopen");
    twins.both("a compaction", |agent| agent.compact());
    twins.both("verify after compaction", |agent| agent.verify().map(|fingerprint| fingerprint.records));
    let twins = twins.reopen();
    twins.assert_same("a reopen after compaction");
    let sealed = twins.sealed.1.report();
    let plain = twins.plain.1.report();
    assert_eq!((sealed.records, sealed.dropped_bytes), (plain.records, plain.dropped_bytes));
}

fn verify_gives_a_fingerprint_that_a_later_verify_extends<B: Backend>() {
    let twins = twins::<B>();
    let sealed = &twins.sealed.1;
    let kept = sealed.verify().unwrap();
    assert_eq!(kept.records, twins.plain.1.verify().unwrap().records);
    assert_ne!(kept, twins.plain.1.verify().unwrap(), "the chain commits to the sealed bytes");
    sealed.recall(twins.script.umbrella, Mode::Fair, Removal::Erase).unwrap();
    let later = sealed.verify_extends(&kept).unwrap();
    assert_eq!(later.records, kept.records + 1);
    let twins = twins.reopen();
    assert_eq!(twins.sealed.1.verify_extends(&kept).unwrap(), later);
    assert_eq!(twins.sealed.1.get(twins.script.umbrella).unwrap().content(), None);
}

fn a_wrong_token_is_unknown_token<B: Backend>() {
    let twins = twins::<B>();
    let store = &twins.store;
    let genuine = *twins.sealed.0.as_bytes();
    let unknown = |bytes: [u8; 32]| match store.open_agent(&Token::from_bytes(bytes)) {
        Err(error) => assert_eq!(error, Error::UnknownToken),
        Ok(_) => panic!("a wrong token opened an agent"),
    };
    unknown([0x5a; 32]);
    unknown([0; 32]);
    for position in [0, 13, 31] {
        for bit in [0, 7] {
            let mut near = genuine;
            near[position] ^= 1 << bit;
            unknown(near);
        }
    }
    // The other agent's token opens the other agent only.
    let plain = store.open_agent(&twins.plain.0).unwrap();
    assert!(!plain.is_encrypted());
    assert_eq!(plain.name().unwrap(), "plain");
    assert_eq!(store.open_agent(&twins.sealed.0).unwrap().name().unwrap(), "sealed");
}

/// A catalog edited to let another token in (its hash put in place of the genuine one's) does
/// not open the agent's contents: the keys that token yields open no epoch key.
fn a_catalog_edited_to_accept_another_token_opens_nothing<B: Backend>() {
    let Twins { place, store, plain, sealed, script } = twins::<B>();
    drop((plain, sealed.1, store));
    let mut catalog = CatalogFile::decode(&place.read_file(CATALOG_FILE)).unwrap();
    let intruder = Token::from_bytes([0x42; 32]);
    let entry = catalog.entries.iter_mut().find(|entry| entry.name == "sealed").unwrap();
    assert!(entry.encrypted);
    entry.token_hash = token_hash(intruder.as_bytes());
    place.replace_file(CATALOG_FILE, &catalog.encode());
    let store = place.open(options()).unwrap();
    match store.open_agent(&intruder) {
        Err(Error::Corrupt { file, reason, .. }) => {
            assert_eq!(reason, CorruptReason::EpochKeyDoesNotOpen);
            assert!(file.ends_with("/epochs"), "{file}");
        }
        Err(other) => panic!("expected Corrupt, got {other}"),
        Ok(agent) => panic!("the intruder opened the agent: {:?}", agent.get(script.user)),
    }
    assert_eq!(store.open_agent(&sealed.0).map(|_| ()), Err(Error::UnknownToken));
}

/// A plaintext agent written before the store held an encrypted one keeps its history, its
/// fingerprint and its answers while an encrypted agent is created, used and deleted beside it.
fn a_plaintext_agent_keeps_working_beside_an_encrypted_one<B: Backend>() {
    let place = B::new();
    let store = place.open(options()).unwrap();
    let plain_token = store.create_agent("plain").unwrap();
    let plain = store.open_agent(&plain_token).unwrap();
    let script = write_script(&plain);
    let before = answers(&plain, script.last);
    let kept = plain.verify().unwrap();

    let sealed_token = store.create_encrypted_agent("sealed").unwrap();
    let sealed = store.open_agent(&sealed_token).unwrap();
    write_script(&sealed);
    assert_same_lines(&answers(&plain, script.last), &before, "writes to the encrypted agent");
    drop((plain, sealed, store));

    let store = place.open(options()).unwrap();
    let plain = store.open_agent(&plain_token).unwrap();
    assert_eq!(plain.verify().unwrap(), kept);
    assert_same_lines(&answers(&plain, script.last), &before, "a reopen");
    plain.recall(script.tool, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(plain.get(script.tool).unwrap().content(), None);
    let sealed = store.open_agent(&sealed_token).unwrap();
    assert_eq!(sealed.get(script.tool).unwrap().content(), Some(&b"Pune: rain all week, heavy at night"[..]));
    drop(sealed);
    store.delete_agent("sealed").unwrap();
    drop((plain, store));

    let store = place.open(options()).unwrap();
    assert_eq!(store.agent_names().unwrap(), vec!["plain".to_string()]);
    assert_eq!(store.open_agent(&sealed_token).map(|_| ()), Err(Error::UnknownToken));
    let plain = store.open_agent(&plain_token).unwrap();
    assert_eq!(plain.verify_extends(&kept).unwrap().records, kept.records + 1);
    assert_eq!(plain.get(script.user).unwrap().content(), Some(&b"I live in Pune and cycle to work"[..]));
    let encrypted_again = store.create_encrypted_agent("sealed").unwrap();
    assert!(store.open_agent(&encrypted_again).unwrap().is_encrypted());
}

/// The one answer that differs, by design: a plaintext lot keeps its label in the clear after
/// an Erase (labels are not erased there), while an encrypted lot's label is sealed with its
/// content, so it goes with the content's key. Before the Erase both read the same.
fn an_erase_takes_an_encrypted_lots_label_with_its_content<B: Backend>() {
    let twins = twins::<B>();
    let web = twins.script.web;
    let label = |agent: &Agent<B::Storage>| agent.audit(web).unwrap().kind;
    let web_page = NodeKind::Lot { label: "web_page".to_string() };
    assert_eq!((label(&twins.sealed.1), label(&twins.plain.1)), (web_page.clone(), web_page.clone()));
    twins.both("an Erase", |agent| agent.recall(web, Mode::Fair, Removal::Erase));
    assert_eq!(label(&twins.plain.1), web_page);
    let NodeKind::Lot { label: erased } = label(&twins.sealed.1) else { panic!("a lot") };
    assert!(!erased.contains("web"), "{erased:?}");
    let twins = twins.reopen();
    let NodeKind::Lot { label: erased } = label(&twins.sealed.1) else { panic!("a lot") };
    assert!(!erased.contains("web"), "{erased:?}");
}

cheesedb_tests::conformance!(
    an_encrypted_agent_answers_as_a_plaintext_agent_with_the_same_history,
    verify_gives_a_fingerprint_that_a_later_verify_extends,
    a_wrong_token_is_unknown_token,
    a_catalog_edited_to_accept_another_token_opens_nothing,
    a_plaintext_agent_keeps_working_beside_an_encrypted_one,
    an_erase_takes_an_encrypted_lots_label_with_its_content,
);
