//! Damaged, cut and garbage-extended files: committed data is never cut silently, on every
//! backend.

use cheesedb::{Agent, CorruptReason, Error, Id, Leg, Options, Token};
use cheesedb_tests::backend::Backend;

/// Small segments, and no zeros written ahead, so that the file ends where each write ends.
fn small_segments() -> Options {
    Options::default().segment_size_max_bytes(4096).preallocate_bytes(0)
}

/// An agent with one sealed segment and a short active one; returns the file length after
/// each durable write in the active segment.
fn two_segment_agent<B: Backend>(place: &B) -> (Token, Vec<u64>) {
    let store = place.open(small_segments()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"the source").unwrap();
    let mut index = 0;
    while alice.report().segments < 2 {
        alice.remember(format!("memory {index}").as_bytes(), &[Leg::from([lot])]).unwrap();
        index += 1;
    }
    let active = place.segment_files().pop().unwrap();
    let mut boundaries = vec![place.read_file(&active).len() as u64];
    for extra in 0..4 {
        alice.remember(format!("late memory {extra}").as_bytes(), &[Leg::from([lot])]).unwrap();
        boundaries.push(place.read_file(&active).len() as u64);
    }
    (token, boundaries)
}

fn open<B: Backend>(place: &B, token: &Token) -> Result<Agent<B::Storage>, Error> {
    place.open(small_segments())?.open_agent(token)
}

fn flip<B: Backend>(place: &B, path: &str, offset: usize) {
    let mut bytes = place.read_file(path);
    bytes[offset] ^= 0x20;
    place.replace_file(path, &bytes);
}

fn cut<B: Backend>(place: &B, path: &str, length: u64) {
    let bytes = place.read_file(path);
    place.replace_file(path, &bytes[..length as usize]);
}

fn every_flipped_byte_of_a_sealed_segment_is_corrupt<B: Backend>() {
    let place = B::new();
    let (token, _) = two_segment_agent(&place);
    let sealed = place.segment_files().remove(0);
    let length = place.read_file(&sealed).len();
    // Every byte on the simulator; a spread of them on disk, where each reopen waits for syncs.
    for offset in (0..length).step_by(B::OFFSET_STRIDE) {
        flip(&place, &sealed, offset);
        match open(&place, &token) {
            Err(Error::Corrupt { file, .. }) => assert!(file.ends_with("segment-0000000000000001.log"), "{file}"),
            other => panic!("flip at {offset} of {length} gave {other:?}"),
        }
        flip(&place, &sealed, offset);
    }
    open(&place, &token).unwrap().verify().unwrap();
}

fn cutting_the_active_segment_anywhere_keeps_exactly_the_committed_prefix<B: Backend>() {
    let place = B::new();
    let (token, boundaries) = two_segment_agent(&place);
    let original_memories = open(&place, &token).unwrap().memories().unwrap();
    let full_length = *boundaries.last().unwrap();
    let header_length = 96;
    let original = place.read_file(&place.segment_files().pop().unwrap());
    for length in (0..full_length).step_by(B::OFFSET_STRIDE) {
        let copy = place.duplicate();
        let active = copy.segment_files().pop().unwrap();
        cut(&copy, &active, length);
        if length < header_length {
            // The segment was durable, header and all, before the one before it was sealed
            // into it: a cut header is lost history, never a crash state.
            match open(&copy, &token) {
                Err(Error::Corrupt { file, offset: 0, .. }) => assert_eq!(file, active, "cut at {length}"),
                other => panic!("cut at {length} gave {other:?}"),
            }
            assert_eq!(copy.read_file(&active), original[..length as usize], "cut at {length}");
            continue;
        }
        let alice = open(&copy, &token).unwrap_or_else(|error| panic!("cut at {length}: {error}"));
        // The active segment holds one write per boundary; a cut keeps those that end before it.
        let committed = boundaries.iter().filter(|boundary| **boundary <= length).count();
        let expected: Vec<Id> = original_memories[..original_memories.len() - boundaries.len() + committed].to_vec();
        assert_eq!(alice.memories().unwrap(), expected, "cut at {length}");
        let last_kept = boundaries.iter().rev().find(|boundary| **boundary <= length).copied();
        // The torn bytes up to their last non-zero byte count (zeros at the end are
        // indistinguishable from space written ahead).
        let torn = &original[last_kept.unwrap_or(header_length) as usize..length as usize];
        let expected_drop = torn.iter().rposition(|byte| *byte != 0).map_or(0, |last| last as u64 + 1);
        assert_eq!(alice.report().dropped_bytes, expected_drop, "cut at {length}");
        alice.verify().unwrap();
        // The agent takes new writes after the repair.
        alice.add_lot("after", b"after the cut").unwrap();
    }
}

fn garbage_after_the_last_commit_is_dropped_and_reported<B: Backend>() {
    let place = B::new();
    let (token, _) = two_segment_agent(&place);
    let before = open(&place, &token).unwrap().verify().unwrap();
    let active = place.segment_files().pop().unwrap();
    let mut bytes = place.read_file(&active);
    let garbage: Vec<u8> = (0..333u32).map(|index| (index * 7 + 3) as u8).collect();
    bytes.extend_from_slice(&garbage);
    place.replace_file(&active, &bytes);
    let alice = open(&place, &token).unwrap();
    assert_eq!(alice.report().dropped_bytes, 333);
    assert_eq!(alice.verify().unwrap(), before);
}

fn a_torn_batch_is_dropped_whole<B: Backend>() {
    let place = B::new();
    let (token, boundaries) = two_segment_agent(&place);
    let active = place.segment_files().pop().unwrap();
    // Remove the last write's commit marker (84 bytes): its memory record is intact but
    // uncommitted, so it must go, and be counted.
    let length = boundaries.last().unwrap() - 84;
    cut(&place, &active, length);
    let alice = open(&place, &token).unwrap();
    assert_eq!(alice.report().dropped_records, 1);
    assert_eq!(alice.report().dropped_bytes, length - boundaries[boundaries.len() - 2]);
}

fn damage_before_the_last_commit_marker_is_corrupt<B: Backend>() {
    let place = B::new();
    let (token, boundaries) = two_segment_agent(&place);
    let active = place.segment_files().pop().unwrap();
    // Inside the second-to-last write: a valid commit marker follows, so this is not a torn
    // write but damage to committed data.
    let offset = (boundaries[boundaries.len() - 3] + 40) as usize;
    flip(&place, &active, offset);
    match open(&place, &token) {
        Err(Error::Corrupt { offset: reported, .. }) => assert!(reported <= offset as u64),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

fn a_damaged_catalog_stops_the_open<B: Backend>() {
    let place = B::new();
    two_segment_agent(&place);
    flip(&place, "catalog", 20);
    assert!(matches!(place.open(Options::default()), Err(Error::Corrupt { .. })));
}

fn a_missing_sealed_segment_is_corrupt<B: Backend>() {
    let place = B::new();
    let (token, _) = two_segment_agent(&place);
    place.remove_file(&place.segment_files().remove(0));
    assert!(matches!(open(&place, &token), Err(Error::Corrupt { reason: CorruptReason::SegmentFileMissing, .. })));
}

fn a_kept_fingerprint_detects_a_rewritten_history<B: Backend>() {
    let place = B::new();
    let (token, boundaries) = two_segment_agent(&place);
    let kept = open(&place, &token).unwrap().verify().unwrap();
    // Cut the last committed write off cleanly: the files alone look fine, the kept
    // fingerprint does not.
    let active = place.segment_files().pop().unwrap();
    cut(&place, &active, boundaries[boundaries.len() - 2]);
    let alice = open(&place, &token).unwrap();
    alice.verify().unwrap();
    assert_eq!(alice.verify_extends(&kept), Err(Error::HistoryMismatch { records: kept.records }));
}

/// An agent with the default settings, whose active segment ends in zeros written ahead;
/// returns where the data in it ends.
fn active_segment_with_zeros_ahead<B: Backend>(place: &B) -> (Token, String, usize) {
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"the source").unwrap();
    alice.remember(b"a memory", &[Leg::from([lot])]).unwrap();
    let active = place.segment_files().pop().unwrap();
    let bytes = place.read_file(&active);
    let data_end = bytes.iter().rposition(|byte| *byte != 0).unwrap() + 1;
    assert!(bytes.len() > data_end + 1000, "the default writes zeros ahead");
    (token, active, data_end)
}

fn zeros_written_ahead_are_not_reported_as_dropped<B: Backend>() {
    let place = B::new();
    let (token, _, _) = active_segment_with_zeros_ahead(&place);
    let alice = place.open(Options::default()).unwrap().open_agent(&token).unwrap();
    assert_eq!(alice.report().dropped_bytes, 0);
    assert_eq!(alice.memories().unwrap().len(), 1);
    alice.verify().unwrap();
}

fn a_torn_write_inside_the_zeros_is_dropped_exactly<B: Backend>() {
    let place = B::new();
    let (token, active, data_end) = active_segment_with_zeros_ahead(&place);
    let mut bytes = place.read_file(&active);
    for (index, byte) in bytes[data_end..data_end + 150].iter_mut().enumerate() {
        *byte = (index as u8).wrapping_mul(31).wrapping_add(1);
    }
    place.replace_file(&active, &bytes);
    let alice = place.open(Options::default()).unwrap().open_agent(&token).unwrap();
    assert_eq!(alice.report().dropped_bytes, 150);
    assert_eq!(alice.memories().unwrap().len(), 1);
    alice.verify().unwrap();
    alice.add_lot("after", b"after").unwrap();
}

cheesedb_tests::conformance!(
    zeros_written_ahead_are_not_reported_as_dropped,
    a_torn_write_inside_the_zeros_is_dropped_exactly,
    every_flipped_byte_of_a_sealed_segment_is_corrupt,
    cutting_the_active_segment_anywhere_keeps_exactly_the_committed_prefix,
    garbage_after_the_last_commit_is_dropped_and_reported,
    a_torn_batch_is_dropped_whole,
    damage_before_the_last_commit_marker_is_corrupt,
    a_damaged_catalog_stops_the_open,
    a_missing_sealed_segment_is_corrupt,
    a_kept_fingerprint_detects_a_rewritten_history,
);
