//! Damaged, cut and garbage-extended files: committed data is never cut silently.

use std::fs;
use std::path::{Path, PathBuf};

use cheesedb::{Error, Id, Leg, Options, Store, Token};
use cheesedb_tests::segment_files;

fn small_segments() -> Options {
    Options { segment_size_max_bytes: 4096, ..Options::default() }
}

/// An agent with one sealed segment and a short active one; returns the file length after
/// each durable write in the active segment.
fn two_segment_agent(folder: &Path) -> (Token, Vec<u64>) {
    let store = Store::open_with_options(folder, small_segments()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"the source").unwrap();
    let mut index = 0;
    while alice.report().segments < 2 {
        alice.remember(format!("memory {index}").as_bytes(), &[Leg::from([lot])]).unwrap();
        index += 1;
    }
    let active = segment_files(folder).pop().unwrap();
    let mut boundaries = vec![fs::metadata(&active).unwrap().len()];
    for extra in 0..4 {
        alice.remember(format!("late memory {extra}").as_bytes(), &[Leg::from([lot])]).unwrap();
        boundaries.push(fs::metadata(&active).unwrap().len());
    }
    (token, boundaries)
}

fn open(folder: &Path, token: &Token) -> Result<cheesedb::Agent, Error> {
    Store::open_with_options(folder, small_segments())?.open_agent(token)
}

fn copy_folder(from: &Path, to: &Path) {
    for (path, bytes) in cheesedb_tests::all_files(from) {
        let target = to.join(path.strip_prefix(from).unwrap());
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(target, bytes).unwrap();
    }
}

fn flip(path: &PathBuf, offset: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[offset] ^= 0x20;
    fs::write(path, bytes).unwrap();
}

#[test]
fn every_flipped_byte_of_a_sealed_segment_is_corrupt() {
    let folder = tempfile::tempdir().unwrap();
    let (token, _) = two_segment_agent(folder.path());
    let sealed = segment_files(folder.path()).remove(0);
    let length = fs::metadata(&sealed).unwrap().len() as usize;
    for offset in 0..length {
        flip(&sealed, offset);
        match open(folder.path(), &token) {
            Err(Error::Corrupt { file, .. }) => assert!(file.ends_with("segment-0000000000000001.log"), "{file}"),
            other => panic!("flip at {offset} of {length} gave {other:?}"),
        }
        flip(&sealed, offset);
    }
    open(folder.path(), &token).unwrap().verify().unwrap();
}

#[test]
fn cutting_the_active_segment_anywhere_keeps_exactly_the_committed_prefix() {
    let folder = tempfile::tempdir().unwrap();
    let (token, boundaries) = two_segment_agent(folder.path());
    let original_memories = open(folder.path(), &token).unwrap().memories().unwrap();
    let full_length = *boundaries.last().unwrap();
    let header_length = 96;
    for cut in 0..full_length {
        let copy = tempfile::tempdir().unwrap();
        copy_folder(folder.path(), copy.path());
        let active = segment_files(copy.path()).pop().unwrap();
        fs::OpenOptions::new().write(true).open(&active).unwrap().set_len(cut).unwrap();
        let alice = open(copy.path(), &token).unwrap_or_else(|error| panic!("cut at {cut}: {error}"));
        // The active segment holds one write per boundary; a cut keeps those that end before it.
        let committed = boundaries.iter().filter(|boundary| **boundary <= cut).count();
        let expected: Vec<Id> = original_memories[..original_memories.len() - boundaries.len() + committed].to_vec();
        assert_eq!(alice.memories().unwrap(), expected, "cut at {cut}");
        let last_kept = boundaries.iter().rev().find(|boundary| **boundary <= cut).copied();
        let expected_drop = match last_kept {
            Some(boundary) => cut - boundary,
            None if cut < header_length => cut,
            None => cut - header_length,
        };
        assert_eq!(alice.report().dropped_bytes, expected_drop, "cut at {cut}");
        alice.verify().unwrap();
        // The agent takes new writes after the repair.
        alice.add_lot("after", b"after the cut").unwrap();
    }
}

#[test]
fn garbage_after_the_last_commit_is_dropped_and_reported() {
    let folder = tempfile::tempdir().unwrap();
    let (token, _) = two_segment_agent(folder.path());
    let before = open(folder.path(), &token).unwrap().verify().unwrap();
    let active = segment_files(folder.path()).pop().unwrap();
    let mut bytes = fs::read(&active).unwrap();
    let garbage: Vec<u8> = (0..333u32).map(|index| (index * 7 + 3) as u8).collect();
    bytes.extend_from_slice(&garbage);
    fs::write(&active, bytes).unwrap();
    let alice = open(folder.path(), &token).unwrap();
    assert_eq!(alice.report().dropped_bytes, 333);
    assert_eq!(alice.verify().unwrap(), before);
}

#[test]
fn a_torn_batch_is_dropped_whole() {
    let folder = tempfile::tempdir().unwrap();
    let (token, boundaries) = two_segment_agent(folder.path());
    let active = segment_files(folder.path()).pop().unwrap();
    // Remove the last write's commit marker (84 bytes): its memory record is intact but
    // uncommitted, so it must go, and be counted.
    let cut = boundaries.last().unwrap() - 84;
    fs::OpenOptions::new().write(true).open(&active).unwrap().set_len(cut).unwrap();
    let alice = open(folder.path(), &token).unwrap();
    assert_eq!(alice.report().dropped_records, 1);
    assert_eq!(alice.report().dropped_bytes, cut - boundaries[boundaries.len() - 2]);
}

#[test]
fn damage_before_the_last_commit_marker_is_corrupt() {
    let folder = tempfile::tempdir().unwrap();
    let (token, boundaries) = two_segment_agent(folder.path());
    let active = segment_files(folder.path()).pop().unwrap();
    // Inside the second-to-last write: a valid commit marker follows, so this is not a torn
    // write but damage to committed data.
    let offset = (boundaries[boundaries.len() - 3] + 40) as usize;
    flip(&active, offset);
    match open(folder.path(), &token) {
        Err(Error::Corrupt { offset: reported, .. }) => assert!(reported <= offset as u64),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn a_damaged_catalog_stops_the_open() {
    let folder = tempfile::tempdir().unwrap();
    two_segment_agent(folder.path());
    flip(&folder.path().join("catalog"), 20);
    assert!(matches!(Store::open(folder.path()), Err(Error::Corrupt { .. })));
}

#[test]
fn a_missing_sealed_segment_is_corrupt() {
    let folder = tempfile::tempdir().unwrap();
    let (token, _) = two_segment_agent(folder.path());
    fs::remove_file(segment_files(folder.path()).remove(0)).unwrap();
    assert!(matches!(open(folder.path(), &token), Err(Error::Corrupt { reason: "segment file missing", .. })));
}

#[test]
fn a_kept_fingerprint_detects_a_rewritten_history() {
    let folder = tempfile::tempdir().unwrap();
    let (token, boundaries) = two_segment_agent(folder.path());
    let kept = open(folder.path(), &token).unwrap().verify().unwrap();
    // Cut the last committed write off cleanly: the files alone look fine, the kept
    // fingerprint does not.
    let active = segment_files(folder.path()).pop().unwrap();
    fs::OpenOptions::new().write(true).open(&active).unwrap().set_len(boundaries[boundaries.len() - 2]).unwrap();
    let alice = open(folder.path(), &token).unwrap();
    alice.verify().unwrap();
    assert_eq!(alice.verify_extends(&kept), Err(Error::HistoryMismatch { records: kept.records }));
}
