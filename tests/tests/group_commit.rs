//! Concurrent writers to one agent share syncs, and each still gets its own answer.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cheesedb::{Error, Id, Leg, Mode, Options, Removal, Store};
use cheesedb_tests::faulty::{Faults, FaultyStorage};

fn slow_store(folder: &std::path::Path) -> (Store<FaultyStorage>, Arc<Faults>) {
    let storage = FaultyStorage::new(folder);
    let faults = storage.faults.clone();
    faults.sync_delay_microseconds.store(2_000, Ordering::SeqCst);
    (Store::open_with(storage, Options::default()).unwrap(), faults)
}

#[test]
fn writers_arriving_during_a_sync_share_the_next_one() {
    let folder = tempfile::tempdir().unwrap();
    let (store, faults) = slow_store(folder.path());
    let agent = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let before = faults.syncs.load(Ordering::SeqCst);
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let agent = agent.clone();
            std::thread::spawn(move || {
                (0..20)
                    .map(|index| agent.add_lot("w", format!("{writer}/{index}").as_bytes()).unwrap())
                    .collect::<Vec<Id>>()
            })
        })
        .collect();
    let mut ids: Vec<Id> = writers.into_iter().flat_map(|writer| writer.join().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, (1..=160).map(Id::from).collect::<Vec<_>>(), "every write acknowledged once");
    let syncs = faults.syncs.load(Ordering::SeqCst) - before;
    eprintln!("160 writes from 8 threads took {syncs} syncs");
    assert!(syncs <= 80, "160 writes took {syncs} syncs: too little was grouped");
    for id in ids {
        assert!(agent.get(id).unwrap().is_alive());
    }
}

#[test]
fn a_refused_write_fails_alone_inside_a_group() {
    let folder = tempfile::tempdir().unwrap();
    let (store, _faults) = slow_store(folder.path());
    let agent = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let dead = agent.add_lot("dead", b"dead").unwrap();
    let alive = agent.add_lot("alive", b"alive").unwrap();
    agent.recall(dead, Mode::Fair, Removal::Untrusted).unwrap();
    let workers: Vec<_> = (0..6)
        .map(|worker| {
            let agent = agent.clone();
            std::thread::spawn(move || {
                let parent = if worker % 2 == 0 { dead } else { alive };
                agent.remember(format!("{worker}").as_bytes(), &[Leg::from([parent])])
            })
        })
        .collect();
    for (worker, handle) in workers.into_iter().enumerate() {
        let outcome = handle.join().unwrap();
        if worker % 2 == 0 {
            assert_eq!(outcome, Err(Error::DeadParent { id: dead }));
        } else {
            assert!(outcome.is_ok(), "{outcome:?}");
        }
    }
    assert_eq!(agent.memories().unwrap().len(), 3);
}

#[test]
fn a_failed_group_sync_fails_every_writer_in_it_and_nobody_hangs() {
    let folder = tempfile::tempdir().unwrap();
    let (store, faults) = slow_store(folder.path());
    let agent = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    faults.fail_sync.store(true, Ordering::SeqCst);
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let agent = agent.clone();
            std::thread::spawn(move || agent.add_lot("w", format!("{writer}").as_bytes()))
        })
        .collect();
    for writer in writers {
        assert!(writer.join().unwrap().is_err());
    }
    assert_eq!(agent.lots().unwrap(), Vec::<Id>::new());
    assert_eq!(agent.add_lot("after", b"after"), Err(Error::Poisoned));
}
