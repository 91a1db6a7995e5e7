//! A read-only open reads a store without writing anything, not even a lock file: it works on
//! read-only media, refuses every write up front, and refuses to open a store that needs a
//! repair rather than serve something wrong.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use cheesedb::{Error, Id, Leg, Mode, Options, Removal, StorageOperation, Store, Token};

/// One test at a time: a test that runs `mount` forks, and until the child execs it holds a copy
/// of every descriptor of this process, the folder lock of another test's store among them, so
/// that test's next open would find its own folder locked.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Every file and folder below `path`, with the bytes of the files and their modification time.
fn everything_below(path: &Path) -> Vec<(PathBuf, Option<Vec<u8>>, std::time::SystemTime)> {
    let mut found = Vec::new();
    for entry in fs::read_dir(path).unwrap() {
        let entry = entry.unwrap();
        let metadata = fs::symlink_metadata(entry.path()).unwrap();
        let modified = metadata.modified().unwrap();
        if metadata.is_dir() {
            found.push((entry.path(), None, modified));
            found.extend(everything_below(&entry.path()));
        } else {
            found.push((entry.path(), Some(fs::read(entry.path()).unwrap()), modified));
        }
    }
    found.sort();
    found
}

/// A store with agent "alice": two lots and a memory.
fn fill(root: &Path) -> Token {
    let store = Store::open(root).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let first = alice.add_lot("note", b"first").unwrap();
    let second = alice.add_lot("note", b"second").unwrap();
    alice.remember(b"both", &[Leg::from([first, second])]).unwrap();
    token
}

/// Reads everything through a read-only open and checks that every write is refused.
fn read_and_refuse_writes(root: &Path, token: &Token) {
    let store = Store::open_read_only(root).unwrap();
    assert!(store.is_read_only());
    assert_eq!(store.agent_names().unwrap(), vec!["alice".to_string()]);
    let alice = store.open_agent(token).unwrap();
    assert_eq!(alice.get(Id::from(1)).unwrap().content(), Some(&b"first"[..]));
    assert_eq!(alice.memories().unwrap(), vec![Id::from(3)]);
    assert_eq!(alice.preview_recall(Id::from(1), Mode::Fair).unwrap(), vec![Id::from(3)]);
    alice.verify().unwrap();
    assert_eq!(alice.add_lot("note", b"x"), Err(Error::ReadOnly));
    assert_eq!(alice.remember(b"x", &[Leg::from([Id::from(1)])]), Err(Error::ReadOnly));
    assert_eq!(alice.recall(Id::from(1), Mode::Fair, Removal::Erase), Err(Error::ReadOnly));
    assert_eq!(alice.compact(), Err(Error::ReadOnly));
    assert_eq!(alice.batch(|_| Ok(())), Err(Error::ReadOnly));
    assert_eq!(store.create_agent("bob"), Err(Error::ReadOnly));
    assert_eq!(store.delete_agent("alice"), Err(Error::ReadOnly));
    assert_eq!(alice.get(Id::from(3)).unwrap().content(), Some(&b"both"[..]), "nothing was recalled");
}

#[test]
fn a_read_only_open_writes_nothing_and_refuses_every_write() {
    let _serial = serial();
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("store");
    let token = fill(&root);
    let before = everything_below(&root);
    read_and_refuse_writes(&root, &token);
    assert_eq!(everything_below(&root), before, "a read-only open changed the folder");
    assert!(!root.join(cheesedb::LOCK_FILE).exists(), "no lock file is made");
}

#[test]
fn a_read_only_store_saves_no_snapshot_at_close() {
    let _serial = serial();
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("store");
    let token = fill(&root);
    let before = everything_below(&root);
    // With snapshots due after every byte, a read-write close would write one.
    let options = Options::default().snapshot_after_bytes(1);
    let store = Store::builder(&root).options(options).read_only(true).open().unwrap();
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(alice.lots().unwrap(), vec![Id::from(1), Id::from(2)]);
    drop((alice, store));
    assert_eq!(everything_below(&root), before);
    assert!(!root.join("agent-0000000000000001/snapshot").exists());
}

#[test]
fn a_read_only_open_of_a_missing_folder_creates_nothing() {
    let _serial = serial();
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("missing");
    assert!(Store::open_read_only(&root).is_err());
    assert!(!root.exists());
}

/// Damage that a read-write open repairs: each makes a read-only open of the agent fail with
/// `RepairNeeded`, and changes nothing.
fn assert_repair_needed(damage: impl Fn(&Path)) {
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("store");
    let token = fill(&root);
    damage(&root.join("agent-0000000000000001"));
    let before = everything_below(&root);
    let store = Store::open_read_only(&root).unwrap();
    let error = store.open_agent(&token).unwrap_err();
    assert!(matches!(error, Error::RepairNeeded { .. }), "{error:?}");
    assert!(error.to_string().contains("open it read-write once"), "{error}");
    drop(store);
    assert_eq!(everything_below(&root), before);
    // A read-write open repairs it; read-only works after that.
    let store = Store::open(&root).unwrap();
    store.open_agent(&token).unwrap();
    drop(store);
    read_and_refuse_writes(&root, &token);
}

#[test]
fn a_torn_end_is_not_cut_by_a_read_only_open() {
    let _serial = serial();
    assert_repair_needed(|agent_folder| {
        let segment = agent_folder.join("segment-0000000000000001.log");
        let mut bytes = fs::read(&segment).unwrap();
        bytes.extend_from_slice(&[0x5a; 11]);
        fs::write(&segment, &bytes).unwrap();
    });
}

#[test]
fn a_leftover_rewrite_is_not_removed_by_a_read_only_open() {
    let _serial = serial();
    assert_repair_needed(|agent_folder| {
        fs::write(agent_folder.join("segment-0000000000000002.log.tmp"), b"half").unwrap();
    });
}

#[test]
fn a_leftover_catalog_rewrite_needs_a_read_write_open() {
    let _serial = serial();
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("store");
    fill(&root);
    fs::write(root.join("catalog.tmp"), b"half").unwrap();
    let error = Store::open_read_only(&root).unwrap_err();
    assert_eq!(error, Error::RepairNeeded { operation: StorageOperation::Removing, path: "catalog.tmp".to_string() });
    assert!(root.join("catalog.tmp").exists());
}

#[test]
fn readers_share_a_folder_and_exclude_a_writer() {
    let _serial = serial();
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("store");
    fill(&root);
    let first = Store::open_read_only(&root).unwrap();
    let second = Store::open_read_only(&root).unwrap();
    assert_eq!(Store::open(&root).unwrap_err(), Error::Locked);
    drop((first, second));
    let writer = Store::open(&root).unwrap();
    assert_eq!(Store::open_read_only(&root).unwrap_err(), Error::Locked);
    drop(writer);
}

/// Runs `mount` with `arguments`; false (with the reason printed) where it is refused.
fn mount(arguments: &[&str]) -> bool {
    match Command::new("mount").args(arguments).output() {
        Ok(output) if output.status.success() => true,
        Ok(output) => {
            println!("skipping the read-only mount: mount {arguments:?}: {}", String::from_utf8_lossy(&output.stderr));
            false
        }
        Err(error) => {
            println!("skipping the read-only mount: cannot run mount: {error}");
            false
        }
    }
}

/// Unmounts the folder when the test ends, even by a failed assertion.
struct Mounted(String);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_store_on_a_read_only_mount_can_be_read() {
    let _serial = serial();
    let place = tempfile::tempdir().unwrap();
    let mount_point = place.path().join("medium");
    fs::create_dir(&mount_point).unwrap();
    let point = mount_point.to_str().unwrap();
    if !mount(&["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", point]) {
        return;
    }
    let _mounted = Mounted(point.to_string());
    let root = mount_point.join("store");
    let token = fill(&root);
    let remounted = mount(&["-o", "remount,ro", point]);
    if remounted {
        assert!(fs::write(mount_point.join("probe"), b"x").is_err(), "the mount must be read-only");
        read_and_refuse_writes(&root, &token);
        assert!(Store::open(&root).is_err(), "a read-write open cannot work on read-only media");
    }
}
