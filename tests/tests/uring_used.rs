//! `Io::Uring` really goes through io_uring: its submissions are counted, and std makes none.
#![cfg(target_os = "linux")]

use cheesedb::{FileStorage, Io, Options, Store};

fn store_on(io: Io) -> (tempfile::TempDir, FileStorage, Store) {
    let folder = tempfile::tempdir().unwrap();
    let storage = FileStorage::with_io(folder.path(), io).unwrap();
    let store = Store::open_with(storage.clone(), Options::default()).unwrap();
    (folder, storage, store)
}

#[test]
fn every_durable_write_is_an_io_uring_submission() {
    let (_folder, storage, store) = store_on(Io::Uring);
    assert_eq!(storage.io(), Io::Uring);
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let before = storage.io_uring_submissions();
    for index in 0..20 {
        alice.add_lot("lot", format!("lot {index}").as_bytes()).unwrap();
    }
    let writes = storage.io_uring_submissions() - before;
    assert!(writes >= 20, "20 durable writes made {writes} submissions");
}

#[test]
fn a_batch_is_one_submission_however_many_records_it_holds() {
    let (_folder, storage, store) = store_on(Io::Uring);
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    alice.add_lot("first", b"first").unwrap();
    let before = storage.io_uring_submissions();
    alice
        .batch(|batch| {
            for index in 0..64 {
                batch.add_lot("lot", format!("lot {index}").as_bytes())?;
            }
            Ok(())
        })
        .unwrap();
    let batch = storage.io_uring_submissions() - before;
    assert!((1..=2).contains(&batch), "a batch of 64 made {batch} submissions");
}

#[test]
fn std_files_make_no_io_uring_submission() {
    let (_folder, storage, store) = store_on(Io::Std);
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    alice.add_lot("lot", b"lot").unwrap();
    assert_eq!(storage.io(), Io::Std);
    assert_eq!(storage.io_uring_submissions(), 0);
}
