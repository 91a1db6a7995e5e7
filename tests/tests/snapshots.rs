//! Snapshots: open loads the graph saved at a committed point and replays only what follows;
//! a snapshot that is damaged or does not match the log is ignored, never trusted.

use std::fs;
use std::path::{Path, PathBuf};

use cheesedb::{Id, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_tests::{all_files, files_containing};

fn eager_snapshots() -> Options {
    Options { segment_size_max_bytes: 8192, snapshot_after_bytes: 1, ..Options::default() }
}

fn snapshot_file(folder: &Path) -> Option<PathBuf> {
    all_files(folder).into_iter().map(|(path, _)| path).find(|path| path.ends_with("snapshot"))
}

/// Writes an agent with several segments and closes it, which leaves a snapshot.
fn agent_with_snapshot(folder: &Path) -> (Token, Vec<Id>) {
    let store = Store::open_with_options(folder, eager_snapshots()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"snapshot-canary-source").unwrap();
    let mut memories = Vec::new();
    for index in 0..100 {
        let text = format!("memory {index}");
        memories.push(alice.remember(text.as_bytes(), &[Leg::from([lot])]).unwrap());
    }
    (token, memories)
}

fn reopen(folder: &Path, token: &Token) -> cheesedb::Agent {
    Store::open_with_options(folder, eager_snapshots()).unwrap().open_agent(token).unwrap()
}

#[test]
fn open_loads_the_snapshot_and_replays_only_what_follows() {
    let folder = tempfile::tempdir().unwrap();
    let (token, memories) = agent_with_snapshot(folder.path());
    assert!(snapshot_file(folder.path()).is_some());
    let alice = reopen(folder.path(), &token);
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
    let alice = reopen(folder.path(), &token);
    assert_eq!(alice.get(extra).unwrap().content(), Some(&b"later"[..]));
    assert_eq!(alice.preview_recall(Id::from(1), Mode::Fair).unwrap(), memories);
}

#[test]
fn a_snapshot_holds_no_content() {
    let folder = tempfile::tempdir().unwrap();
    agent_with_snapshot(folder.path());
    let snapshot = fs::read(snapshot_file(folder.path()).unwrap()).unwrap();
    assert!(!snapshot.windows(b"snapshot-canary".len()).any(|window| window == b"snapshot-canary"));
    assert!(!snapshot.windows(b"memory 5".len()).any(|window| window == b"memory 5"));
}

#[test]
fn a_damaged_snapshot_is_ignored_and_the_log_replayed() {
    let folder = tempfile::tempdir().unwrap();
    let (token, memories) = agent_with_snapshot(folder.path());
    let path = snapshot_file(folder.path()).unwrap();
    let length = fs::metadata(&path).unwrap().len() as usize;
    for offset in [0, 20, 60, 99, 110, length - 1] {
        let mut bytes = fs::read(&path).unwrap();
        bytes[offset] ^= 0x01;
        fs::write(&path, &bytes).unwrap();
        {
            let alice = reopen(folder.path(), &token);
            assert!(alice.report().snapshot_ignored.is_some(), "flip at {offset}");
            assert_eq!(alice.report().records_from_snapshot, 0);
            assert_eq!(alice.memories().unwrap(), memories);
            alice.verify().unwrap();
            // Closing writes a fresh, good snapshot over the damaged one.
        }
        assert_eq!(reopen(folder.path(), &token).report().snapshot_ignored, None);
    }
}

#[test]
fn a_snapshot_that_does_not_match_the_log_is_ignored() {
    let folder = tempfile::tempdir().unwrap();
    let (token, _) = agent_with_snapshot(folder.path());
    let path = snapshot_file(folder.path()).unwrap();
    let stale = fs::read(&path).unwrap();
    {
        let alice = reopen(folder.path(), &token);
        alice.add_lot("newer", b"newer").unwrap();
    }
    // An older snapshot put back in place still matches the log at its own point, and open
    // replays everything after it: nothing newer is lost.
    fs::write(&path, &stale).unwrap();
    let alice = reopen(folder.path(), &token);
    assert_eq!(alice.report().snapshot_ignored, None);
    assert_eq!(alice.report().records, 102);
    assert_eq!(alice.lots().unwrap().len(), 2);
    drop(alice);
    // A snapshot of another history (a different chain) is refused.
    let other = tempfile::tempdir().unwrap();
    agent_with_snapshot(other.path());
    fs::copy(snapshot_file(other.path()).unwrap(), &path).unwrap();
    let alice = reopen(folder.path(), &token);
    assert!(alice.report().snapshot_ignored.is_some());
    assert_eq!(alice.lots().unwrap().len(), 2);
    alice.verify().unwrap();
}

#[test]
fn erase_removes_the_snapshot_before_moving_records_and_open_still_agrees() {
    let folder = tempfile::tempdir().unwrap();
    let (token, memories) = agent_with_snapshot(folder.path());
    {
        let alice = reopen(folder.path(), &token);
        assert_eq!(alice.recall(Id::from(1), Mode::Fair, Removal::Erase).unwrap(), memories);
        assert!(files_containing(folder.path(), b"snapshot-canary-source").is_empty());
    }
    let alice = reopen(folder.path(), &token);
    assert_eq!(alice.memories().unwrap(), Vec::<Id>::new());
    assert_eq!(alice.get(Id::from(1)).unwrap().content(), None);
    alice.verify().unwrap();
}
