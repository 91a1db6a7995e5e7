//! Snapshots: open loads the graph saved at a committed point and replays only what follows;
//! a snapshot that is damaged or does not match the log is ignored, never trusted. On every
//! backend.

use cheesedb::{Agent, CorruptReason, Error, Id, Leg, Mode, NodeKind, Options, Removal, Role, Token};
use cheesedb_core::codec::snapshot_file::SnapshotFile;
use cheesedb_tests::backend::{contains, Backend};

fn eager_snapshots() -> Options {
    Options::default().segment_size_max_bytes(8192).snapshot_after_bytes(1)
}

fn snapshot_file<B: Backend>(place: &B) -> Option<String> {
    place.files().into_iter().map(|(path, _)| path).find(|path| path.ends_with("snapshot"))
}

/// Writes an agent with several segments and closes it, which leaves a snapshot.
fn agent_with_snapshot<B: Backend>(place: &B) -> (Token, Vec<Id>) {
    agent_with_snapshot_from(place, b"snapshot-canary-source")
}

/// Like [`agent_with_snapshot`], with the first lot's content chosen, so that two places can
/// hold different histories even on a backend whose random bytes repeat.
fn agent_with_snapshot_from<B: Backend>(place: &B, source: &[u8]) -> (Token, Vec<Id>) {
    let store = place.open(eager_snapshots()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", source).unwrap();
    let mut memories = Vec::new();
    for index in 0..100 {
        let text = format!("memory {index}");
        memories.push(alice.remember(text.as_bytes(), &[Leg::from([lot])]).unwrap());
    }
    (token, memories)
}

fn reopen<B: Backend>(place: &B, token: &Token) -> Agent<B::Storage> {
    place.open(eager_snapshots()).unwrap().open_agent(token).unwrap()
}

fn open_loads_the_snapshot_and_replays_only_what_follows<B: Backend>() {
    let place = B::new();
    let (token, memories) = agent_with_snapshot(&place);
    assert!(snapshot_file(&place).is_some());
    let alice = reopen(&place, &token);
    let report = alice.report();
    assert_eq!(report.records, 101);
    assert_eq!(report.records_from_snapshot, 101, "closing wrote a snapshot of everything");
    assert_eq!(report.snapshot_ignored, None);
    assert_eq!(alice.memories().unwrap(), memories);
    assert_eq!(alice.get(memories[50]).unwrap().content(), Some(&b"memory 50"[..]));
    alice.verify().unwrap();
    // Writes after a snapshot load land where they should and survive the next open.
    let extra = alice.add_lot("later", b"later").unwrap();
    drop(alice);
    let alice = reopen(&place, &token);
    assert_eq!(alice.get(extra).unwrap().content(), Some(&b"later"[..]));
    assert_eq!(alice.preview_recall(Id::from(1), Mode::Fair).unwrap(), memories);
}

fn a_snapshot_holds_no_content<B: Backend>() {
    let place = B::new();
    agent_with_snapshot(&place);
    let snapshot = place.read_file(&snapshot_file(&place).unwrap());
    assert!(!contains(&snapshot, b"snapshot-canary"));
    assert!(!contains(&snapshot, b"memory 5"));
}

fn a_damaged_snapshot_is_ignored_and_the_log_replayed<B: Backend>() {
    let place = B::new();
    let (token, memories) = agent_with_snapshot(&place);
    let path = snapshot_file(&place).unwrap();
    let length = place.read_file(&path).len();
    for offset in [0, 20, 60, 99, 110, length - 1] {
        let mut bytes = place.read_file(&path);
        bytes[offset] ^= 0x01;
        place.replace_file(&path, &bytes);
        {
            let alice = reopen(&place, &token);
            assert!(alice.report().snapshot_ignored.is_some(), "flip at {offset}");
            assert_eq!(alice.report().records_from_snapshot, 0);
            assert_eq!(alice.memories().unwrap(), memories);
            alice.verify().unwrap();
            // Closing writes a fresh, good snapshot over the damaged one.
        }
        assert_eq!(reopen(&place, &token).report().snapshot_ignored, None);
    }
}

fn a_snapshot_that_does_not_match_the_log_is_ignored<B: Backend>() {
    let place = B::new();
    let (token, _) = agent_with_snapshot(&place);
    let path = snapshot_file(&place).unwrap();
    let stale = place.read_file(&path);
    {
        let alice = reopen(&place, &token);
        alice.add_lot("newer", b"newer").unwrap();
    }
    // An older snapshot put back in place still matches the log at its own point, and open
    // replays everything after it: nothing newer is lost.
    place.replace_file(&path, &stale);
    let alice = reopen(&place, &token);
    assert_eq!(alice.report().snapshot_ignored, None);
    assert_eq!(alice.report().records, 102);
    assert_eq!(alice.lots().unwrap().len(), 2);
    drop(alice);
    // A snapshot of another history (a different chain) is refused.
    let other = B::new();
    agent_with_snapshot_from(&other, b"another source, another chain");
    place.replace_file(&path, &other.read_file(&snapshot_file(&other).unwrap()));
    let alice = reopen(&place, &token);
    assert!(alice.report().snapshot_ignored.is_some());
    assert_eq!(alice.lots().unwrap().len(), 2);
    alice.verify().unwrap();
}

/// Open resumes at the snapshot's point and reads only what follows it; garbage after the last
/// commit is still cut and reported, and damage before a later valid commit is still `Corrupt`.
fn damage_after_the_snapshot_point_is_judged_as_without_a_snapshot<B: Backend>() {
    let place = B::new();
    let (token, _) = agent_with_snapshot(&place);
    let path = snapshot_file(&place).unwrap();
    let stale = place.read_file(&path);
    {
        let alice = reopen(&place, &token);
        alice.add_lot("after", b"after-1").unwrap();
        alice.add_lot("after", b"after-2").unwrap();
    }
    let active = place.segment_files().pop().unwrap();
    let good = place.read_file(&active);
    // The last write ends with its content and then its 84-byte commit marker; the zeros set
    // aside after it are not data, so the garbage goes right behind the marker.
    let committed_end = good.windows(7).position(|window| window == b"after-2").unwrap() + 7 + 84;
    // A torn write lands in those zeros; the file keeps its length, as a crash leaves it.
    let mut extended = good.clone();
    for (index, byte) in extended[committed_end..committed_end + 333].iter_mut().enumerate() {
        *byte = (index as u32 * 7 + 3) as u8;
    }
    place.replace_file(&active, &extended);
    place.replace_file(&path, &stale);
    {
        let alice = reopen(&place, &token);
        assert_eq!((alice.report().snapshot_ignored, alice.report().records_from_snapshot), (None, 101));
        assert_eq!(alice.report().dropped_bytes, 333);
        assert_eq!(alice.lots().unwrap().len(), 3);
        alice.verify().unwrap();
    }
    let mut damaged = good;
    let inside_first_write = damaged.windows(7).position(|window| window == b"after-1").unwrap();
    damaged[inside_first_write] ^= 0x20;
    place.replace_file(&active, &damaged);
    place.replace_file(&path, &stale);
    match place.open(eager_snapshots()).unwrap().open_agent(&token) {
        Err(Error::Corrupt { .. }) => {}
        other => panic!("damage before a valid commit marker was not Corrupt: {:?}", other.map(|_| ())),
    }
}

/// A snapshot whose checksums hold but whose child rows lie about the log: open takes it (it
/// checks form, not truth), and verify, which builds the graph again from the log, refuses it.
fn verify_catches_a_well_formed_snapshot_that_lies<B: Backend>() {
    let place = B::new();
    let (token, memories) = agent_with_snapshot(&place);
    let path = snapshot_file(&place).unwrap();
    let mut snapshot = SnapshotFile::decode(&place.read_file(&path)).unwrap();
    assert_eq!(snapshot.child_row.get(..2), Some(&[1, 2][..]), "the lot's first children");
    snapshot.child_row[0] = 2; // the first memory is no longer listed as the lot's child
    let parts = snapshot.graph_parts();
    place.replace_file(&path, &SnapshotFile::encode(&snapshot.point, parts, &snapshot.shared));
    let alice = reopen(&place, &token);
    assert_eq!(alice.report().snapshot_ignored, None);
    assert_ne!(alice.preview_recall(Id::from(1), Mode::Strict).unwrap(), memories, "the lie is in use");
    match alice.verify() {
        Err(Error::Corrupt { reason, .. }) => assert_eq!(reason, CorruptReason::GraphDiffersFromLog),
        other => panic!("verify passed a lying snapshot: {other:?}"),
    }
}

fn erase_keeps_the_snapshot_and_open_finds_its_records_already_erased<B: Backend>() {
    let place = B::new();
    let (token, memories) = agent_with_snapshot(&place);
    let snapshot = snapshot_file(&place).unwrap();
    let saved = place.read_file(&snapshot);
    // No snapshot after the erase: the one from before, with its stale flags, must do.
    let lazy = eager_snapshots().snapshot_after_bytes(u64::MAX);
    let reopen_lazily = || place.open(lazy.clone()).unwrap().open_agent(&token).unwrap();
    {
        let alice = reopen_lazily();
        assert_eq!(alice.recall(Id::from(1), Mode::Fair, Removal::Erase).unwrap(), memories);
        assert!(place.files_containing(b"snapshot-canary-source").is_empty());
        assert_eq!(place.read_file(&snapshot), saved, "records did not move: the snapshot stays");
    }
    let alice = reopen_lazily();
    let report = alice.report();
    assert_eq!(report.snapshot_ignored, None);
    assert_eq!(report.records_from_snapshot, 101);
    assert_eq!(report.records, 102);
    assert_eq!(report.erasures_completed_on_open, 0, "the records were found already erased");
    assert_eq!(alice.memories().unwrap(), Vec::<Id>::new());
    assert_eq!(alice.get(Id::from(1)).unwrap().content(), None);
    assert_eq!(alice.get(memories[7]).unwrap().content(), None);
    alice.verify().unwrap();
}

/// After an Erase the next close saves a fresh snapshot, even though the log grew by one small
/// record, so the next open needs no look at the erased records.
fn the_close_after_an_erase_saves_a_fresh_snapshot<B: Backend>() {
    let place = B::new();
    let (token, memories) = agent_with_snapshot(&place);
    let rarely = eager_snapshots().snapshot_after_bytes(1 << 30);
    let reopen_rarely = || place.open(rarely.clone()).unwrap().open_agent(&token).unwrap();
    {
        let alice = reopen_rarely();
        alice.add_lot("not enough for a snapshot", b"small").unwrap();
    }
    assert_eq!(reopen_rarely().report().records_from_snapshot, 101, "a small write alone saves none");
    {
        let alice = reopen_rarely();
        assert_eq!(alice.recall(Id::from(1), Mode::Fair, Removal::Erase).unwrap(), memories);
    }
    let alice = reopen_rarely();
    assert_eq!(alice.report().records_from_snapshot, 103, "the close after the Erase saved one");
    assert_eq!(alice.report().erasures_completed_on_open, 0);
    alice.verify().unwrap();
}

/// A member holding shared nodes, closed with a snapshot: `(its token, the space's lot, the
/// shared node standing for it, the member's memory on it)`, and the admin's token.
fn member_with_snapshot<B: Backend>(place: &B) -> (Token, Token, Id, Id, Id) {
    let store = place.open(eager_snapshots()).unwrap();
    let admin_token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&admin_token).unwrap();
    let team = store.create_space("team", &alice).unwrap();
    let lot = team.add_lot("web", b"a shared source").unwrap();
    let token = store.create_agent("bob").unwrap();
    team.grant("bob", Role::Read).unwrap();
    let bob = store.open_agent(&token).unwrap();
    let shared = bob.space("team").unwrap().share(lot).unwrap();
    let derived = bob.remember(b"built on the shared source", &[Leg::from([shared])]).unwrap();
    for index in 0..50 {
        bob.add_lot("own", format!("own lot {index}").as_bytes()).unwrap();
    }
    bob.close().unwrap();
    (token, admin_token, lot, shared, derived)
}

fn a_member_opens_from_a_snapshot_holding_its_shared_nodes<B: Backend>() {
    let place = B::new();
    let (token, admin_token, lot, shared, derived) = member_with_snapshot(&place);
    assert!(snapshot_file(&place).is_some(), "an agent holding shared nodes keeps a snapshot");
    {
        let store = place.open(eager_snapshots()).unwrap();
        let bob = store.open_agent(&token).unwrap();
        assert_eq!(bob.report().snapshot_ignored, None);
        assert_eq!(bob.report().records_from_snapshot, bob.report().records, "nothing replayed");
        assert!(matches!(bob.get(shared).unwrap().kind, NodeKind::Shared { id, .. } if id == lot));
        bob.close().unwrap();
        // Recalled while the member is closed: it opens the member, from its snapshot, to apply it.
        let alice = store.open_agent(&admin_token).unwrap();
        let reached = alice.space("team").unwrap().recall(lot, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(reached.in_members, vec![(String::from("bob"), vec![derived])]);
    }
    let bob = reopen(&place, &token);
    assert!(!bob.get(derived).unwrap().is_alive());
    bob.verify().unwrap();
}

/// A snapshot whose shared nodes are not its graph's is ignored, and one whose checksums hold
/// but that names another node of the space is caught by verify, which rebuilds them from the
/// log.
fn a_snapshot_whose_shared_nodes_lie_is_ignored_or_caught<B: Backend>() {
    let place = B::new();
    let (token, _, _, shared, _) = member_with_snapshot(&place);
    let path = snapshot_file(&place).unwrap();
    let original = SnapshotFile::decode(&place.read_file(&path)).unwrap();
    assert_eq!(original.shared.len(), 1);
    assert_eq!(original.shared[0].id, shared.get());

    let mut moved = original.clone();
    moved.shared[0].id += 1; // an own lot, not a shared node
    place.replace_file(&path, &SnapshotFile::encode(&moved.point, moved.graph_parts(), &moved.shared));
    let bob = reopen(&place, &token);
    assert_eq!(bob.report().snapshot_ignored, Some(CorruptReason::SnapshotSharedNodesDoNotMatchGraph));
    drop(bob);

    let mut elsewhere = original;
    elsewhere.shared[0].space_id += 1;
    place.replace_file(&path, &SnapshotFile::encode(&elsewhere.point, elsewhere.graph_parts(), &elsewhere.shared));
    let bob = reopen(&place, &token);
    assert_eq!(bob.report().snapshot_ignored, None, "its checksums hold");
    assert!(matches!(bob.verify(), Err(Error::Corrupt { reason: CorruptReason::GraphDiffersFromLog, .. })));
}

/// An encrypted agent's replay opens a key per record: it snapshots after an eighth of the
/// bytes a plaintext one waits for.
fn an_encrypted_agent_snapshots_sooner<B: Backend>() {
    let place = B::new();
    let options = eager_snapshots().segment_size_max_bytes(1 << 20).snapshot_after_bytes(64 * 1024);
    let store = place.open(options.clone()).unwrap();
    let mut tokens = Vec::new();
    for (name, encrypted) in [("plain", false), ("sealed", true)] {
        let token = if encrypted { store.create_encrypted_agent(name) } else { store.create_agent(name) };
        let token = token.unwrap();
        let agent = store.open_agent(&token).unwrap();
        for index in 0..40 {
            agent.add_lot("lot", format!("{index:0>400}").as_bytes()).unwrap();
        }
        agent.close().unwrap();
        tokens.push(token);
    }
    let froms: Vec<u64> =
        tokens.iter().map(|token| store.open_agent(token).unwrap().report().records_from_snapshot).collect();
    assert_eq!(froms, [0, 40], "about 20 KiB: under 64 KiB, over an eighth of it");
}

cheesedb_tests::conformance!(
    a_member_opens_from_a_snapshot_holding_its_shared_nodes,
    a_snapshot_whose_shared_nodes_lie_is_ignored_or_caught,
    an_encrypted_agent_snapshots_sooner,
    open_loads_the_snapshot_and_replays_only_what_follows,
    a_snapshot_holds_no_content,
    a_damaged_snapshot_is_ignored_and_the_log_replayed,
    a_snapshot_that_does_not_match_the_log_is_ignored,
    verify_catches_a_well_formed_snapshot_that_lies,
    damage_after_the_snapshot_point_is_judged_as_without_a_snapshot,
    erase_keeps_the_snapshot_and_open_finds_its_records_already_erased,
    the_close_after_an_erase_saves_a_fresh_snapshot,
);
