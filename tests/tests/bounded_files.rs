//! An agent with thousands of segments works under a low limit of open files, and holds only a
//! bounded number of them open, on std files and on io_uring.
//!
//! The test lowers the process's `RLIMIT_NOFILE` and counts the descriptors it holds, so it runs
//! alone in a child process of the test binary (`alone_in_a_process`).
#![cfg(target_os = "linux")]

use std::path::Path;
use std::time::Instant;

use cheesedb::limits::SEALED_FILES_OPEN_MAX;
use cheesedb::{Agent, FileStorage, Id, Io, Mode, Options, Removal, Store};
use cheesedb_tests::{alone_in_a_process, files_containing};
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Far below the segments the agent has, and well above what a bounded engine needs.
const OPEN_FILES_LIMIT: u64 = 256;
/// Segments the agent is grown to: several times the limit.
const SEGMENTS_WANTED: u64 = 2_000;
/// Lots per write: about one small segment's worth, so that nearly every write seals one.
const LOTS_PER_WRITE: usize = 28;

/// Options that seal a segment every few kilobytes, and write no zeros ahead.
fn tiny_segments() -> Options {
    Options::default().segment_size_max_bytes(4 * 1024).preallocate_bytes(0)
}

fn lower_open_files_limit(wanted: u64) {
    let limit = getrlimit(Resource::Nofile);
    let maximum = limit.maximum.map_or(wanted, |maximum| maximum.min(wanted));
    setrlimit(Resource::Nofile, Rlimit { current: Some(wanted.min(maximum)), maximum: limit.maximum }).unwrap();
    assert_eq!(getrlimit(Resource::Nofile).current, Some(wanted));
}

/// How many descriptors the process holds now.
fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn content_of(index: usize) -> Vec<u8> {
    format!("lot {index:06} of an agent with very many small segments, padded to fill them").into_bytes()
}

/// Checks that `count` descriptors is within what one open agent may add to `baseline` on
/// `io`: its active segment, its cache of sealed ones, and one file an operation opens for itself.
/// An io_uring file that has written keeps a ring (one more descriptor) while it is open, and the
/// storage keeps up to eight idle rings for reads, whatever the number of agents.
fn assert_bounded(io: Io, count: usize, baseline: usize, after: &str) -> usize {
    let files = 1 + SEALED_FILES_OPEN_MAX + 1;
    let bound = match io {
        Io::Std => baseline + files,
        Io::Uring => baseline + 2 * files + 8,
        other => panic!("no descriptor bound is known for {other}"),
    };
    assert!(count <= bound, "{io}: {count} descriptors open after {after}, more than the bound {bound}");
    count
}

/// Writes lots, `LOTS_PER_WRITE` to a batch, until the agent has `segments` segments, calling
/// `after_each_write` after every batch; returns the ids in order (lot `i` holds `content_of(i)`).
fn grow(alice: &Agent, segments: u64, mut after_each_write: impl FnMut()) -> Vec<Id> {
    let mut ids: Vec<Id> = Vec::new();
    while alice.report().segments < segments {
        let first = ids.len();
        let written = alice
            .batch(|batch| {
                (first..first + LOTS_PER_WRITE).map(|index| batch.add_lot("tool", &content_of(index))).collect()
            })
            .unwrap();
        ids.extend::<Vec<Id>>(written);
        after_each_write();
    }
    ids
}

fn open_store(folder: &Path, io: Io) -> Store {
    Store::builder(folder).options(tiny_segments()).io(io).open().unwrap()
}

/// The whole life of a many-segment agent under the lowered limit, on one backend.
fn many_segments_within_few_descriptors(io: Io) {
    let folder = tempfile::tempdir().unwrap();
    let store = open_store(folder.path(), io);
    let token = store.create_agent("alice").unwrap();
    let baseline = open_descriptors();
    let alice = store.open_agent(&token).unwrap();
    let mut peak = 0;
    let ids = grow(&alice, SEGMENTS_WANTED, || {
        peak = peak.max(assert_bounded(io, open_descriptors(), baseline, "a write") - baseline);
    });
    let segments = alice.report().segments;
    let head = alice.verify().unwrap();
    drop(alice);
    drop(store);

    let store = open_store(folder.path(), io);
    let before_open = open_descriptors();
    let alice = store.open_agent(&token).unwrap();
    let after_open = open_descriptors();
    println!("{io}: {segments} segments; {before_open} descriptors before open, {after_open} after");
    assert_bounded(io, after_open, before_open, "open");
    assert_eq!(alice.report().segments, segments);
    for (index, id) in ids.iter().enumerate() {
        assert_eq!(alice.get(*id).unwrap().content(), Some(&content_of(index)[..]), "lot {index}");
    }
    peak = peak.max(assert_bounded(io, open_descriptors(), before_open, "reading every node") - before_open);

    // Erase in place reaches three old sealed segments; compaction rewrites three others.
    let erased = [5, 500, 5_000].map(|index| (ids[index], content_of(index)));
    let hidden = [50, 700, 9_000].map(|index| (ids[index], content_of(index)));
    for (id, _) in &erased {
        alice.recall(*id, Mode::Fair, Removal::Erase).unwrap();
    }
    for (id, _) in &hidden {
        alice.recall(*id, Mode::Fair, Removal::Untrusted).unwrap();
    }
    for (_, text) in &erased {
        assert!(files_containing(folder.path(), text).is_empty(), "erased text still on disk");
    }
    peak = peak.max(assert_bounded(io, open_descriptors(), before_open, "erasing") - before_open);
    alice.compact().unwrap();
    for (_, text) in hidden.iter().chain(&erased) {
        assert!(files_containing(folder.path(), text).is_empty(), "recalled text still on disk after compaction");
    }
    peak = peak.max(assert_bounded(io, open_descriptors(), before_open, "compaction") - before_open);
    let recalled: Vec<Id> = erased.iter().chain(&hidden).map(|(id, _)| *id).collect();
    for (index, id) in ids.iter().enumerate().filter(|(_, id)| !recalled.contains(id)) {
        assert_eq!(alice.get(*id).unwrap().content(), Some(&content_of(index)[..]), "lot {index} after compaction");
    }
    let verified = alice.verify().unwrap();
    assert_eq!(verified.records, head.records + 6);
    peak = peak.max(assert_bounded(io, open_descriptors(), before_open, "verification") - before_open);
    drop(alice);
    drop(store);

    let store = open_store(folder.path(), io);
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(alice.verify().unwrap(), verified);
    assert_eq!(alice.get(ids[1]).unwrap().content(), Some(&content_of(1)[..]));
    let last = ids.len() - 1;
    assert_eq!(alice.get(ids[last]).unwrap().content(), Some(&content_of(last)[..]));
    println!("{io}: at most {peak} descriptors more than before the agent was opened");
}

#[test]
fn an_agent_with_thousands_of_segments_stays_within_a_low_open_files_limit() {
    if !alone_in_a_process(module_path!(), "an_agent_with_thousands_of_segments_stays_within_a_low_open_files_limit") {
        return;
    }
    lower_open_files_limit(OPEN_FILES_LIMIT);
    many_segments_within_few_descriptors(Io::Std);
    match FileStorage::with_io(tempfile::tempdir().unwrap().path(), Io::Uring) {
        Ok(_) => many_segments_within_few_descriptors(Io::Uring),
        Err(refused) => println!("io_uring skipped: {refused}"),
    }
}

/// The cost of reading a node from an old sealed segment, whose file is opened on demand,
/// against one from the active segment. Prints timings; asserts nothing about them.
#[test]
#[ignore = "a timing to read, not a check: cargo test --test integration bounded_files:: -- --ignored --nocapture"]
fn time_a_get_from_an_old_sealed_segment() {
    let folder = tempfile::tempdir().unwrap();
    let store = open_store(folder.path(), Io::Std);
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let ids = grow(&alice, 64, || {});
    let rounds = 20_000u32;
    let spread = SEALED_FILES_OPEN_MAX * 4 * LOTS_PER_WRITE;
    let cases = [
        ("one node in the oldest segment (cached)", vec![ids[0]]),
        (
            "nodes spread over more sealed segments than the cache holds",
            ids.iter().copied().take(spread).step_by(LOTS_PER_WRITE).collect(),
        ),
        ("one node in the active segment", vec![ids[ids.len() - 1]]),
    ];
    for (what, targets) in cases {
        let started = Instant::now();
        for round in 0..rounds {
            let id = targets[round as usize % targets.len()];
            assert!(alice.get(id).unwrap().content().is_some());
        }
        println!("get, {what}: {:?} each", started.elapsed() / rounds);
    }
}

/// Closed members a space's recall reaches: more than the limit below leaves room for, were
/// each opened before any was applied and closed.
const CLOSED_MEMBERS: usize = 200;
/// The limit of open files while the recall runs: room for the parts applied at once.
const OPEN_FILES_LIMIT_FOR_MEMBERS: u64 = 128;

#[test]
fn a_space_recall_reaching_hundreds_of_closed_members_stays_within_a_low_open_files_limit() {
    let test = "a_space_recall_reaching_hundreds_of_closed_members_stays_within_a_low_open_files_limit";
    if !alone_in_a_process(module_path!(), test) {
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let store = open_store(folder.path(), Io::Std);
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let team = store.create_space("team", &alice).unwrap();
    let lot = team.add_lot("web", b"a source every member builds on").unwrap();
    for index in 0..CLOSED_MEMBERS {
        let name = format!("member-{index}");
        let member = store.open_agent(&store.create_agent(&name).unwrap()).unwrap();
        team.grant(&name, cheesedb::Role::Read).unwrap();
        let shared = member.space("team").unwrap().share(lot).unwrap();
        member.remember(format!("{name} built on it").as_bytes(), &[cheesedb::Leg::from([shared])]).unwrap();
        member.close().unwrap();
    }
    lower_open_files_limit(OPEN_FILES_LIMIT_FOR_MEMBERS);
    let reached = team.recall(lot, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(reached.in_members.len(), CLOSED_MEMBERS, "every closed member was opened and reached");
    assert!(reached.in_members.iter().all(|(_, removed)| removed.len() == 1));
    println!("{} descriptors open after the recall", open_descriptors());
}
