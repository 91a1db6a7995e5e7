//! The same operations with the same random bytes leave byte-identical files on every backend:
//! the backends differ only in how the bytes reach the disk, never in which bytes.

use cheesedb::{Id, Leg, Mode, Options, Removal, SharedStorage, Store};
use cheesedb_tests::backend::{Backend, Simulated, StdFiles};
use cheesedb_tests::seeded::SeededRandom;

const SEED: u64 = 0x1de7_1ca1;

fn options() -> Options {
    Options::default().segment_size_max_bytes(4096)
}

/// A workload that touches every kind of write: lots, memories, batches, both recalls and
/// removals, segment roll-over, compaction, a reopen and an agent's deletion.
fn workload<S: SharedStorage>(storage: S) {
    let storage = SeededRandom::new(storage, SEED);
    let (alice_token, lot) = {
        let store = Store::open_with(storage.clone(), options()).unwrap();
        let alice_token = store.create_agent("alice").unwrap();
        let bob_token = store.create_agent("bob").unwrap();
        let alice = store.open_agent(&alice_token).unwrap();
        let bob = store.open_agent(&bob_token).unwrap();
        let lot = alice.add_lot("web_page", b"a page about the weather").unwrap();
        let mut memories = Vec::new();
        for index in 0..40 {
            let text = format!("memory {index} learned from the page");
            memories.push(alice.remember(text.as_bytes(), &[Leg::from([lot])]).unwrap());
        }
        let (tool, summary) = alice
            .batch(|batch| {
                let tool = batch.add_lot("tool", b"tool result")?;
                let summary = batch.remember(b"summary", &[Leg::from([tool]), Leg::from([memories[0]])])?;
                Ok((tool, summary))
            })
            .unwrap();
        bob.add_lot("note", b"bob's note").unwrap();
        alice.recall(memories[3], Mode::Strict, Removal::Untrusted).unwrap();
        alice.recall(tool, Mode::Fair, Removal::Erase).unwrap();
        alice.compact().unwrap();
        assert!(alice.get(summary).unwrap().is_alive(), "the summary keeps its other leg");
        store.delete_agent("bob").unwrap();
        (alice_token, lot)
    };
    let store = Store::open_with(storage, options()).unwrap();
    let alice = store.open_agent(&alice_token).unwrap();
    alice.add_lot("after", b"written after the reopen").unwrap();
    alice.recall(lot, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(alice.get(Id::from(1)).unwrap().content(), None);
}

fn files_after_the_workload<B: Backend>() -> Vec<(String, Vec<u8>)> {
    let place = B::new();
    workload(place.storage());
    place.files()
}

/// Fails with the first path or byte where `actual` differs from `expected`.
fn assert_identical(backend: &str, actual: &[(String, Vec<u8>)], expected: &[(String, Vec<u8>)]) {
    let paths = |files: &[(String, Vec<u8>)]| files.iter().map(|(path, _)| path.clone()).collect::<Vec<_>>();
    assert_eq!(paths(actual), paths(expected), "{backend}: other files than std");
    for ((path, bytes), (_, wanted)) in actual.iter().zip(expected) {
        let first_difference = bytes.iter().zip(wanted).position(|(byte, other)| byte != other);
        assert!(
            bytes.len() == wanted.len() && first_difference.is_none(),
            "{backend}: {path} differs from std ({} bytes against {}, first difference at {first_difference:?})",
            bytes.len(),
            wanted.len()
        );
    }
}

#[test]
fn every_backend_writes_the_same_bytes() {
    let expected = files_after_the_workload::<StdFiles>();
    assert!(expected.len() >= 3, "catalog and segments: {expected:?}");
    assert_eq!(files_after_the_workload::<StdFiles>(), expected, "std repeats itself");
    #[cfg(target_os = "linux")]
    assert_identical("io_uring", &files_after_the_workload::<cheesedb_tests::backend::UringFiles>(), &expected);
    assert_identical("simulator", &files_after_the_workload::<Simulated>(), &expected);
}
