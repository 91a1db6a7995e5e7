//! Nothing inside a store folder is followed through a symbolic link: a segment, an agent folder
//! or the catalog replaced by a link is refused with an error naming it and saying why, with
//! either `Io`, and the link's target is never modified. The folder itself may be a link.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use cheesedb::{Error, FileStorage, Id, Io, Store, Token};

/// The `Io` choices this machine offers; io_uring is skipped, saying why, where it is refused.
fn io_choices() -> Vec<Io> {
    let probe = tempfile::tempdir().unwrap();
    match FileStorage::with_io(probe.path(), Io::Uring) {
        Ok(_) => vec![Io::Std, Io::Uring],
        Err(error) => {
            println!("skipping io_uring: {error}");
            vec![Io::Std]
        }
    }
}

/// A store with agents "alice" (two lots) and "bob" (one lot), closed again.
struct Place {
    folder: tempfile::TempDir,
    io: Io,
    alice: Token,
    bob: Token,
}

impl Place {
    fn new(io: Io) -> Place {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::builder(folder.path().join("store")).io(io).open().unwrap();
        let (alice, bob) = (store.create_agent("alice").unwrap(), store.create_agent("bob").unwrap());
        let agent = store.open_agent(&alice).unwrap();
        agent.add_lot("note", b"alice one").unwrap();
        agent.add_lot("note", b"alice two").unwrap();
        store.open_agent(&bob).unwrap().add_lot("note", b"bob one").unwrap();
        Place { folder, io, alice, bob }
    }

    fn store_path(&self) -> PathBuf {
        self.folder.path().join("store")
    }

    fn open(&self) -> Result<Store, Error> {
        Store::builder(self.store_path()).io(self.io).open()
    }

    /// The folder of the agent that `token` opens: the only agent folder that changes when it
    /// writes.
    fn agent_folder(&self, name: &str) -> PathBuf {
        let number = if name == "alice" { 1 } else { 2 };
        self.store_path().join(format!("agent-{number:016x}"))
    }

    /// Moves `path` outside the store and puts a link to it in its place; returns the target.
    fn replace_with_link(&self, path: &Path) -> PathBuf {
        let target = self.folder.path().join("outside");
        fs::rename(path, &target).unwrap();
        symlink(&target, path).unwrap();
        target
    }
}

/// Every file below `path` with its bytes, to prove nothing there changed.
fn snapshot_of(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    if path.is_file() {
        return vec![(path.to_path_buf(), fs::read(path).unwrap())];
    }
    let mut found = Vec::new();
    for entry in fs::read_dir(path).unwrap() {
        found.extend(snapshot_of(&entry.unwrap().path()));
    }
    found.sort();
    found
}

fn assert_refuses_link(error: &Error, name: &str) {
    let text = error.to_string();
    assert!(text.contains(name) && text.contains("symbolic link"), "the error must name {name} and say why: {text}");
}

#[test]
fn a_segment_replaced_by_a_link_is_refused_and_its_target_unchanged() {
    for io in io_choices() {
        let place = Place::new(io);
        let segment = place.agent_folder("alice").join("segment-0000000000000001.log");
        let target = place.replace_with_link(&segment);
        let before = snapshot_of(&target);
        let store = place.open().unwrap();
        let error = store.open_agent(&place.alice).unwrap_err();
        assert_refuses_link(&error, "segment-0000000000000001.log");
        // Another agent is not affected.
        let bob = store.open_agent(&place.bob).unwrap();
        assert_eq!(bob.get(Id::from(1)).unwrap().content(), Some(&b"bob one"[..]));
        bob.add_lot("note", b"bob two").unwrap();
        store.delete_agent("alice").unwrap();
        let left = store.left_behind().unwrap();
        let paths: Vec<&str> = left.iter().map(|entry| entry.path.as_str()).collect();
        assert_eq!(paths, ["agent-0000000000000001/segment-0000000000000001.log"], "{io}");
        drop((bob, store));
        assert_eq!(snapshot_of(&target), before, "{io}: the link's target was modified");
        assert!(fs::symlink_metadata(&segment).unwrap().file_type().is_symlink(), "{io}: the link is left alone");
    }
}

#[test]
fn an_agent_folder_replaced_by_a_link_is_refused_and_its_target_unchanged() {
    for io in io_choices() {
        let place = Place::new(io);
        let target = place.replace_with_link(&place.agent_folder("alice"));
        let before = snapshot_of(&target);
        let store = place.open().unwrap();
        assert_refuses_link(&store.open_agent(&place.alice).unwrap_err(), "agent-0000000000000001");
        store.open_agent(&place.bob).unwrap().add_lot("note", b"bob two").unwrap();
        store.delete_agent("alice").unwrap();
        let left = store.left_behind().unwrap();
        assert!(left.iter().any(|entry| entry.path == "agent-0000000000000001"), "{io}: {left:?}");
        drop(store);
        // Reopening tries again, never follows the link, and never fails because of it.
        let store = place.open().unwrap();
        assert_eq!(store.agent_names().unwrap(), vec!["bob".to_string()]);
        assert_eq!(store.left_behind().unwrap().len(), 1, "{io}");
        drop(store);
        assert_eq!(snapshot_of(&target), before, "{io}: the link's target was modified");
    }
}

#[test]
fn a_catalog_replaced_by_a_link_is_refused_and_its_target_unchanged() {
    for io in io_choices() {
        let place = Place::new(io);
        let target = place.replace_with_link(&place.store_path().join("catalog"));
        let before = snapshot_of(&target);
        assert_refuses_link(&place.open().unwrap_err(), "catalog");
        assert_refuses_link(&Store::open_read_only(place.store_path()).unwrap_err(), "catalog");
        assert_eq!(snapshot_of(&target), before, "{io}: the link's target was modified");
    }
}

#[test]
fn the_store_folder_itself_may_be_a_link() {
    for io in io_choices() {
        let place = Place::new(io);
        let link = place.folder.path().join("link");
        symlink(place.store_path(), &link).unwrap();
        let store = Store::builder(&link).io(io).open().unwrap();
        let alice = store.open_agent(&place.alice).unwrap();
        assert_eq!(alice.get(Id::from(2)).unwrap().content(), Some(&b"alice two"[..]));
        alice.add_lot("note", b"alice three").unwrap();
    }
}
