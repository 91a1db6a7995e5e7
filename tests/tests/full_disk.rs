//! A full disk is a kind a caller can act on: `io_kind()` says `StorageFull`, the source is the
//! system's own error, and once space is freed the store works again with nothing acknowledged
//! lost. Checked on the simulator's no-space fault always, and on a real tmpfs where this
//! machine lets the test mount one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::ErrorKind;

use cheesedb::{Error, Id, Options, StorageErrorKind, StorageOperation, Store};
use cheesedb_sim::storage::{FaultPlan, SimStorage};
use cheesedb_tests::small_disk::SmallDisk;

/// How many lots a test tries before it gives up waiting for the disk to fill.
const WRITES_MAX: usize = 10_000;

/// Adds lots until one fails; returns the ids acknowledged (with their content) and the error.
fn write_until_refused(agent: &cheesedb::Agent<impl cheesedb::SharedStorage>) -> (Vec<(Id, Vec<u8>)>, Error) {
    let mut acknowledged = Vec::new();
    for index in 0..WRITES_MAX {
        let content = format!("fact {index} ").repeat(200).into_bytes();
        match agent.add_lot("note", &content) {
            Ok(id) => acknowledged.push((id, content)),
            Err(error) => return (acknowledged, error),
        }
    }
    panic!("the disk never filled after {WRITES_MAX} writes");
}

fn assert_is_full_disk(error: &Error) {
    assert_eq!(error.io_kind(), Some(ErrorKind::StorageFull), "{error:?}");
    assert_eq!(error.storage_kind(), Some(StorageErrorKind::NoSpace), "{error:?}");
    assert!(matches!(error, Error::Io { .. }), "a refused growth writes nothing: {error:?}");
}

fn assert_all_kept(agent: &cheesedb::Agent<impl cheesedb::SharedStorage>, acknowledged: &[(Id, Vec<u8>)]) {
    for (id, content) in acknowledged {
        assert_eq!(agent.get(*id).unwrap().content(), Some(content.as_slice()), "lot {id} was lost");
    }
}

#[test]
fn the_simulated_no_space_fault_is_a_full_disk_and_the_store_recovers() {
    let storage = SimStorage::without_faults(7);
    let options = Options::default();
    let store = Store::open_with(storage.clone(), options.clone()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let agent = store.open_agent(&token).unwrap();
    let first = agent.add_lot("note", b"before the disk filled").unwrap();

    let mut full = FaultPlan::none();
    full.no_space = 1.0;
    storage.set_plan(full);
    let (mut acknowledged, error) = write_until_refused(&agent);
    assert_is_full_disk(&error);
    acknowledged.push((first, b"before the disk filled".to_vec()));

    storage.set_plan(FaultPlan::none());
    drop((agent, store));
    let store = Store::open_with(storage, options).unwrap();
    let agent = store.open_agent(&token).unwrap();
    assert_all_kept(&agent, &acknowledged);
    let after = agent.add_lot("note", b"after space was freed").unwrap();
    assert_eq!(agent.get(after).unwrap().content(), Some(&b"after space was freed"[..]));
}

#[test]
fn a_full_tmpfs_is_reported_as_storage_full_and_the_store_recovers() {
    let disk = match SmallDisk::mount(4) {
        Ok(disk) => disk,
        Err(reason) => {
            println!("skipped: no tmpfs to fill ({reason})");
            return;
        }
    };
    let folder = disk.path().join("store");
    let store = Store::open(&folder).unwrap();
    let token = store.create_agent("alice").unwrap();
    let agent = store.open_agent(&token).unwrap();
    let first = agent.add_lot("note", b"before the disk filled").unwrap();
    let filler = disk.fill("filler");

    let (mut acknowledged, error) = write_until_refused(&agent);
    assert_is_full_disk(&error);
    let source = std::error::Error::source(&error).and_then(|source| source.downcast_ref::<std::io::Error>());
    assert_eq!(source.map(std::io::Error::kind), Some(ErrorKind::StorageFull), "the source is the system's error");
    acknowledged.push((first, b"before the disk filled".to_vec()));

    std::fs::remove_file(filler).unwrap();
    drop((agent, store));
    let store = Store::open(&folder).unwrap();
    let agent = store.open_agent(&token).unwrap();
    assert_all_kept(&agent, &acknowledged);
    let after = agent.add_lot("note", b"after space was freed").unwrap();
    assert_eq!(agent.get(after).unwrap().content(), Some(&b"after space was freed"[..]));
}

#[test]
fn system_errors_map_to_the_kind_a_caller_acts_on() {
    use cheesedb::StorageError;
    let kind_of = |errno: i32| StorageError::kind(&std::io::Error::from_raw_os_error(errno));
    // Linux errno values: ENOSPC, EDQUOT, EACCES, EPERM, EROFS, ENOENT, EIO.
    assert_eq!(kind_of(28), StorageErrorKind::NoSpace);
    assert_eq!(kind_of(122), StorageErrorKind::NoSpace);
    assert_eq!(kind_of(13), StorageErrorKind::PermissionDenied);
    assert_eq!(kind_of(1), StorageErrorKind::PermissionDenied);
    assert_eq!(kind_of(30), StorageErrorKind::ReadOnly);
    assert_eq!(kind_of(2), StorageErrorKind::NotFound);
    assert_eq!(kind_of(5), StorageErrorKind::Other);
    let denied = Error::from_storage(StorageOperation::Opening, "catalog", std::io::Error::from_raw_os_error(13));
    assert_eq!(denied.io_kind(), Some(ErrorKind::PermissionDenied));
    let read_only = Error::from_storage(StorageOperation::Creating, "catalog", std::io::Error::from_raw_os_error(30));
    assert_eq!(read_only.io_kind(), Some(ErrorKind::ReadOnlyFilesystem));
    assert_eq!(Error::NoLegs.io_kind(), None);
}
