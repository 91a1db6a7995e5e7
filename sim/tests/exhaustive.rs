//! Every crash state of the small protocols, and every single-byte corruption of a sealed
//! segment and of the catalog.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use cheesedb_sim::explore::{explore, sweep_catalog, sweep_sealed_segment, Protocol};

/// At most this many fate combinations per crash point.
const COMBINATIONS_MAX: usize = 4096;

fn explored(protocol: Protocol) {
    let exploration = explore(protocol, COMBINATIONS_MAX).unwrap_or_else(|message| panic!("{message}"));
    println!("{protocol:?}: {exploration:?}");
    assert!(exploration.operations > 0);
    assert!(exploration.found_before > 0 && exploration.found_after > 0, "{exploration:?}");
}

#[test]
fn every_crash_state_of_one_batch_append_recovers_to_before_or_after() {
    explored(Protocol::BatchAppend);
}

#[test]
fn every_crash_state_of_a_segment_seal_and_roll_recovers_to_before_or_after() {
    explored(Protocol::SegmentRoll);
}

#[test]
fn every_crash_state_of_an_erase_in_place_recovers_and_never_shows_erased_text() {
    explored(Protocol::EraseInPlace);
}

#[test]
fn every_crash_state_of_an_erase_in_place_across_a_sealed_and_the_active_segment_recovers() {
    explored(Protocol::EraseInPlaceAcrossSegments);
}

#[test]
fn every_crash_state_of_a_compaction_recovers_with_the_same_alive_set() {
    explored(Protocol::Compaction);
}

#[test]
fn every_crash_state_of_an_erase_on_an_encrypted_agent_leaves_its_nodes_readable_or_unreadable_for_good() {
    explored(Protocol::EraseByKeys);
}

#[test]
fn every_crash_state_of_an_erase_of_a_compacted_node_on_an_encrypted_agent_destroys_its_key() {
    explored(Protocol::EraseByKeysAfterCompaction);
}

#[test]
fn every_single_byte_corruption_of_a_sealed_segment_is_detected() {
    let sweep = sweep_sealed_segment().unwrap();
    println!("{sweep:?}");
    assert!(sweep.bytes >= 4096);
    assert_eq!(sweep.detected, sweep.damaged_copies, "missed: {:?}", sweep.missed);
}

#[test]
fn every_single_byte_corruption_of_the_catalog_is_detected() {
    let sweep = sweep_catalog().unwrap();
    println!("{sweep:?}");
    assert_eq!(sweep.detected, sweep.damaged_copies, "missed: {:?}", sweep.missed);
}
