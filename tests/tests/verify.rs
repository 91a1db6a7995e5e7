//! `Agent::verify` checks the segments on threads: it must find every damage the one-pass check
//! of the core finds, in the same file and at the same offset, and check what joins the segments
//! (each header continues the segment before it; a kept fingerprint inside any segment).

use cheesedb::{Agent, CorruptReason, Error, Fingerprint, Leg, Options, Token};
use cheesedb_core::codec::record;
use cheesedb_core::codec::segment_header::SegmentHeader;
use cheesedb_core::AgentEngine;
use cheesedb_tests::backend::Backend;

/// Small segments, no zeros written ahead and no snapshots (so that an engine opened beside the
/// store to compare with writes nothing when it is dropped).
fn small_segments() -> Options {
    Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(u64::MAX)
}

/// The number the store gives its first agent, the one every test here makes.
const FIRST_AGENT: u64 = 1;

/// An open agent with `segments` segments, each write a durable one; returns it with its token
/// and the fingerprint after each write, in order.
fn agent_with_segments<B: Backend>(place: &B, segments: u64) -> (Agent<B::Storage>, Token, Vec<Fingerprint>) {
    agent_with_segments_from(place, segments, b"the source")
}

/// Like [`agent_with_segments`], with the text of its first lot.
fn agent_with_segments_from<B: Backend>(
    place: &B,
    segments: u64,
    source: &[u8],
) -> (Agent<B::Storage>, Token, Vec<Fingerprint>) {
    let store = place.open(small_segments()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", source).unwrap();
    let mut fingerprints = vec![alice.verify().unwrap()];
    let mut index = 0;
    while alice.report().segments < segments {
        alice.remember(format!("memory {index}").as_bytes(), &[Leg::from([lot])]).unwrap();
        fingerprints.push(alice.verify().unwrap());
        index += 1;
    }
    (alice, token, fingerprints)
}

/// The one-pass check of the core, on an engine opened beside the store before any damage.
fn one_pass_engine<B: Backend>(place: &B) -> AgentEngine<B::Storage> {
    AgentEngine::open(place.storage(), FIRST_AGENT, small_segments()).unwrap()
}

/// Where the record holding byte `offset` of segment `bytes` starts.
fn record_start(bytes: &[u8], offset: usize) -> usize {
    let mut position = 96;
    loop {
        let (_, length) = record::decode(&bytes[position..]).unwrap();
        if offset < position + length {
            return position;
        }
        position += length;
    }
}

fn flip<B: Backend>(place: &B, path: &str, offset: usize) {
    let mut bytes = place.read_file(path);
    bytes[offset] ^= 0x20;
    place.replace_file(path, &bytes);
}

fn damage_in_the_third_of_four_segments_is_found_where_it_is<B: Backend>() {
    let place = B::new();
    let (alice, _, fingerprints) = agent_with_segments(&place, 4);
    let segments = place.segment_files();
    let third = place.read_file(&segments[2]);
    let offset = third.len() / 2;
    flip(&place, &segments[2], offset);
    // Damage in a later segment too: the third segment's comes first in log order.
    flip(&place, &segments[3], 200);
    let expected = Error::Corrupt {
        file: segments[2].clone(),
        offset: record_start(&third, offset) as u64,
        reason: CorruptReason::RecordChecksumMismatch,
    };
    assert_eq!(alice.verify(), Err(expected.clone()));
    assert_eq!(alice.verify_extends(&fingerprints[1]), Err(expected));
}

fn a_header_that_does_not_continue_the_segment_before_is_corrupt<B: Backend>() {
    let place = B::new();
    let (alice, _, _) = agent_with_segments(&place, 4);
    let segments = place.segment_files();
    let mut third = place.read_file(&segments[2]);
    let header = SegmentHeader::decode(&third).unwrap();
    for changed in [
        SegmentHeader { chain_before: [7; 32], ..header },
        SegmentHeader { sequence_before: header.sequence_before + 1, ..header },
    ] {
        // A header sound in itself (its checksum matches) that starts elsewhere in the history.
        third[..96].copy_from_slice(&changed.encode());
        place.replace_file(&segments[2], &third);
        let expected = Error::Corrupt {
            file: segments[2].clone(),
            offset: 0,
            reason: CorruptReason::SegmentHeaderBelongsElsewhere,
        };
        assert_eq!(alice.verify(), Err(expected));
    }
}

fn a_segment_from_another_history_is_found_at_its_header<B: Backend>() {
    // Two agents written alike but for one letter of their first lot, so their chains differ
    // from the first record while their files have the same layout. The other agent's third
    // segment is sound in itself (its records chain from its own header), so only the join of
    // the headers can tell it does not belong.
    let (place, other) = (B::new(), B::new());
    let (alice, _, _) = agent_with_segments_from(&place, 4, b"the source");
    let (_bob, _, _) = agent_with_segments_from(&other, 4, b"the sourcE");
    let (segments, other_segments) = (place.segment_files(), other.segment_files());
    assert_eq!(segments, other_segments, "both stores name their first agent's files alike");
    place.replace_file(&segments[2], &other.read_file(&other_segments[2]));
    let expected =
        Error::Corrupt { file: segments[2].clone(), offset: 0, reason: CorruptReason::SegmentHeaderBelongsElsewhere };
    assert_eq!(alice.verify(), Err(expected));
}

fn a_kept_fingerprint_from_any_segment_is_checked<B: Backend>() {
    let place = B::new();
    let (alice, _, fingerprints) = agent_with_segments(&place, 4);
    let head = alice.verify().unwrap();
    assert_eq!(fingerprints.last(), Some(&head));
    // Fingerprints kept while the log was in each of its segments, the first and the last.
    for kept in [fingerprints[0], fingerprints[fingerprints.len() / 3], fingerprints[fingerprints.len() * 3 / 4], head]
    {
        assert_eq!(alice.verify_extends(&kept), Ok(head), "kept at {}", kept.records);
        let rewritten = Fingerprint { chain: [kept.chain[0] ^ 1; 32], ..kept };
        assert_eq!(alice.verify_extends(&rewritten), Err(Error::HistoryMismatch { records: kept.records }));
    }
    let beyond = Fingerprint { records: head.records + 1, ..head };
    assert_eq!(alice.verify_extends(&beyond), Err(Error::HistoryMismatch { records: beyond.records }));
}

fn every_damage_is_reported_as_the_one_pass_check_reports_it<B: Backend>() {
    let place = B::new();
    let (alice, _, _) = agent_with_segments(&place, 4);
    let one_pass = one_pass_engine(&place);
    let head = alice.verify().unwrap();
    assert_eq!(one_pass.verify(), Ok(head));
    for segment in place.segment_files() {
        let length = place.read_file(&segment).len();
        for offset in (0..length).step_by(B::OFFSET_STRIDE.max(7)) {
            flip(&place, &segment, offset);
            let found = alice.verify();
            assert!(found.is_err(), "flip at {offset} of {segment} not found");
            assert_eq!(found, one_pass.verify(), "flip at {offset} of {segment}");
            flip(&place, &segment, offset);
        }
    }
    assert_eq!(alice.verify(), Ok(head));
}

cheesedb_tests::conformance!(
    damage_in_the_third_of_four_segments_is_found_where_it_is,
    a_header_that_does_not_continue_the_segment_before_is_corrupt,
    a_segment_from_another_history_is_found_at_its_header,
    a_kept_fingerprint_from_any_segment_is_checked,
    every_damage_is_reported_as_the_one_pass_check_reports_it,
);
