//! Any bytes as a replica's head object: the decoder never panics and what it accepts encodes
//! back to the same bytes; and restoring from, or following, a bucket whose head (and the piece
//! it names first) are those bytes never panics and never writes outside the agent's folder.
#![no_main]

use cheesedb_core::replica::{head_key, piece_key, restore_agent_files, Follower, ReplicaHead, ReplicaPrefix};
use cheesedb_core::{Options, Storage, StoreEngine};
use cheesedb_sim::bucket::{BucketFaults, SimBucket};
use cheesedb_sim::random::Random;
use cheesedb_sim::storage::SimStorage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(head) = ReplicaHead::decode(bytes) else { return };
    assert_eq!(head.encode(), bytes, "a head re-encoded");
    let prefix = ReplicaPrefix::new("fuzz");
    let mut bucket = SimBucket::new(BucketFaults::default(), Random::seeded(1));
    bucket.overwrite(&head_key(&prefix, head.owner()), bytes.to_vec());
    if let Some(piece) = head.pieces.first() {
        // The head's own bytes stand in for the piece: wrong digest, wrong shape, any length.
        bucket.overwrite(&piece_key(&prefix, head.owner(), piece), bytes.to_vec());
    }
    let storage = SimStorage::without_faults(1);
    let Ok(mut store) = StoreEngine::open(storage.clone(), Options::default()) else { return };
    let _ = store.adopt(&head, |storage| restore_agent_files(storage, &mut bucket, &prefix, &head, None));
    if let Ok(mut follower) = Follower::start(&storage, prefix.clone(), &head) {
        let _ = follower.step(&storage, &mut bucket);
    }
    for name in storage.list("").unwrap_or_default() {
        assert!(name == "catalog" || name.starts_with("agent-"), "a restore wrote {name}");
    }
});
