//! A store folder that others may write to, or that another user owns, is refused with a
//! message saying how to fix it, unless the caller allows it; a new folder is made 0700.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use cheesedb::{Error, Store};

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn assert_not_private(error: Error, expected: &str) {
    match &error {
        Error::FolderNotPrivate { .. } => {
            let text = error.to_string();
            assert!(text.contains(expected) && text.contains("allow it explicitly"), "{text}");
        }
        other => panic!("expected FolderNotPrivate, got {other:?}"),
    }
}

#[test]
fn a_new_folder_is_made_private() {
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("new/store");
    Store::open(&root).unwrap();
    assert_eq!(fs::metadata(&root).unwrap().permissions().mode() & 0o777, 0o700);
}

#[test]
fn a_folder_others_may_write_to_is_refused_unless_allowed() {
    for mode in [0o770, 0o702, 0o777, 0o720] {
        let place = tempfile::tempdir().unwrap();
        let root = place.path().join("store");
        Store::open(&root).unwrap().create_agent("alice").unwrap();
        set_mode(&root, mode);
        assert_not_private(Store::open(&root).unwrap_err(), "chmod go-w");
        assert_not_private(Store::open_read_only(&root).unwrap_err(), "chmod go-w");
        let store = Store::builder(&root).allow_loose_permissions(true).open().unwrap();
        assert_eq!(store.agent_names().unwrap(), vec!["alice".to_string()]);
        drop(store);
        Store::builder(&root).allow_loose_permissions(true).read_only(true).open().unwrap();
    }
}

#[test]
fn a_folder_readable_by_others_but_not_writable_is_accepted() {
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("store");
    Store::open(&root).unwrap();
    set_mode(&root, 0o755);
    Store::open(&root).unwrap();
}

#[test]
fn a_folder_owned_by_another_user_is_refused_unless_allowed() {
    let place = tempfile::tempdir().unwrap();
    let root = place.path().join("store");
    Store::open(&root).unwrap().create_agent("alice").unwrap();
    // A user id nobody has; only root may give a folder away.
    if let Err(error) = std::os::unix::fs::chown(&root, Some(54_321), None) {
        println!("skipping: cannot give the folder to another user here: {error}");
        return;
    }
    assert_not_private(Store::open(&root).unwrap_err(), "owned by user 54321");
    let store = Store::builder(&root).allow_loose_permissions(true).open().unwrap();
    assert_eq!(store.agent_names().unwrap(), vec!["alice".to_string()]);
}
