//! Automatic compaction: once a recall leaves `auto_compact_dead_nodes` recalled nodes with
//! text in the files, a thread takes the text out, one segment at a time, while writes go on;
//! the last handle's end stops it cleanly; zero turns it off.

use std::time::{Duration, Instant};

use cheesedb::{Agent, Id, Leg, Mode, Options, Removal};
use cheesedb_tests::backend::Backend;

const CANARY: &[u8] = b"canary-2c9e41-the-scraper-made-this-up";

/// Small segments, so that a recall's dead text lies in several of them.
fn options(auto_compact_dead_nodes: u64) -> Options {
    Options::default().segment_size_max_bytes(4096).auto_compact_dead_nodes(auto_compact_dead_nodes)
}

/// A lot and 40 memories built on it (each naming the canary), then the lot recalled,
/// Untrusted: 41 recalled nodes keep their text.
fn recall_a_poisoned_lot<S: cheesedb::SharedStorage>(alice: &Agent<S>) -> Vec<Id> {
    let lot = alice.add_lot("scraper", CANARY).unwrap();
    for index in 0..40 {
        let text = format!("{}-memory-{index}", String::from_utf8_lossy(CANARY));
        alice.remember(text.as_bytes(), &[Leg::from([lot])]).unwrap();
    }
    assert!(alice.report().segments >= 3, "the test needs several segments");
    alice.recall(lot, Mode::Fair, Removal::Untrusted).unwrap()
}

/// Waits, by the agent's own report, until no recalled node keeps its text. A few segments of
/// 4 KiB take milliseconds; the ten minutes only keep a compaction that never runs from
/// hanging the tests, and measure nothing.
fn wait_until_compacted<S: cheesedb::SharedStorage>(alice: &Agent<S>) {
    let started = Instant::now();
    while alice.report().dead_text_nodes > 0 {
        assert!(started.elapsed() < Duration::from_secs(600), "no compaction ran: {:?}", alice.report());
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn a_recall_past_the_threshold_is_compacted_in_the_background<B: Backend>() {
    let place = B::new();
    let store = place.open(options(10)).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let survivor = alice.add_lot("user", b"a fact the recall does not touch").unwrap();
    assert_eq!(recall_a_poisoned_lot(&alice).len(), 40);
    // Writes go on while the thread compacts.
    let written: Vec<Id> =
        (0..20).map(|index| alice.add_lot("user", format!("later {index}").as_bytes()).unwrap()).collect();
    wait_until_compacted(&alice);
    assert_eq!(place.files_containing(CANARY), Vec::<String>::new());
    assert!(alice.report().segments_compacted >= 2, "{:?}", alice.report());
    assert_eq!(alice.get(survivor).unwrap().content(), Some(&b"a fact the recall does not touch"[..]));
    for (index, id) in written.iter().enumerate() {
        assert_eq!(alice.get(*id).unwrap().content(), Some(format!("later {index}").as_bytes()));
    }
    alice.verify().unwrap();
}

fn below_the_threshold_or_switched_off_the_text_stays_until_compact<B: Backend>() {
    for threshold in [0, 100] {
        let place = B::new();
        let store = place.open(options(threshold)).unwrap();
        let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
        recall_a_poisoned_lot(&alice);
        let report = alice.report();
        assert_eq!((report.dead_text_nodes, report.segments_compacted), (41, 0), "threshold {threshold}");
        assert!(!place.files_containing(CANARY).is_empty(), "threshold {threshold}");
        alice.compact().unwrap();
        assert_eq!(alice.report().dead_text_nodes, 0);
        assert_eq!(place.files_containing(CANARY), Vec::<String>::new());
    }
}

fn the_last_handle_stops_the_compaction_between_segments<B: Backend>() {
    let place = B::new();
    let token;
    {
        let store = place.open(options(10)).unwrap();
        token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        recall_a_poisoned_lot(&alice);
        // Dropped at once: the thread finishes the segment under way and stops.
    }
    let store = place.open(options(0)).unwrap();
    let alice = store.open_agent(&token).unwrap();
    let report = alice.report();
    assert!(!report.repaired_anything(), "no half-made segment was left behind: {report:?}");
    assert_eq!(report.temporary_files_removed, 0);
    alice.verify().unwrap();
    drop(alice);
    drop(store);
    // The next open finishes what is left, on its own.
    let store = place.open(options(10)).unwrap();
    let alice = store.open_agent(&token).unwrap();
    wait_until_compacted(&alice);
    assert_eq!(place.files_containing(CANARY), Vec::<String>::new());
}

cheesedb_tests::conformance!(
    a_recall_past_the_threshold_is_compacted_in_the_background,
    below_the_threshold_or_switched_off_the_text_stays_until_compact,
    the_last_handle_stops_the_compaction_between_segments,
);
