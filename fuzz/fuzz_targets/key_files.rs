//! Any bytes as an encrypted agent's key files: the key table slot, epoch slot and key file
//! header decoders never panic and what they accept encodes back to the same bytes; and the
//! bytes put in place of the agent's whole key table or epoch file, opening, reading, verifying,
//! writing and erasing never panic.
//!
//! The first byte chooses: bit 0, which file the rest replaces (key table or epoch file);
//! bit 1, whether to open an agent at all (the decoders always run).
#![no_main]

use cheesedb_core::codec::epoch_file::{decode_epoch_slot, encode_epoch_slot, EpochSlot, EPOCH_SLOT_BYTES};
use cheesedb_core::codec::key_file_header::{
    check_key_file_header, encode_key_file_header, FILE_KIND_EPOCHS, FILE_KIND_KEY_TABLE, KEY_FILE_HEADER_BYTES,
};
use cheesedb_core::codec::key_table_file::{decode_key_slot, encode_key_slot, KEY_SLOT_BYTES};
use cheesedb_core::log::names::{agent_folder, epochs_path, key_table_path};
use cheesedb_core::seal::envelope::{parse_node, parse_vector, split_lot_plain_bytes};
use cheesedb_core::seal::secret_in_slot;
use cheesedb_core::{Id, Leg, Mode, Options, Removal, StoreEngine};
use cheesedb_sim::storage::SimStorage;
use libfuzzer_sys::fuzz_target;

/// The agent number the decoders check against: the store's first agent.
const AGENT: u64 = 1;

fn decoders(bytes: &[u8]) {
    for id in [1, 2, u64::MAX] {
        if let Ok(Some(slot)) = decode_key_slot(AGENT, id, bytes) {
            assert_eq!(&encode_key_slot(AGENT, id, &slot)[..], &bytes[..KEY_SLOT_BYTES], "a key slot re-encoded");
        }
        let _ = secret_in_slot(AGENT, &[7; 32], id, bytes);
    }
    for epoch in [1, 2, u32::MAX] {
        if let Ok(slot) = decode_epoch_slot(AGENT, epoch, bytes) {
            let encoded = encode_epoch_slot(AGENT, epoch, &slot);
            assert_eq!(&encoded[..], &bytes[..EPOCH_SLOT_BYTES], "an epoch slot re-encoded");
            if let EpochSlot::Live { .. } = slot {
                assert!(bytes[8..80].iter().any(|byte| *byte != 0), "a live epoch holds a key");
            }
        }
    }
    for (kind, slot_bytes) in [(FILE_KIND_KEY_TABLE, KEY_SLOT_BYTES), (FILE_KIND_EPOCHS, EPOCH_SLOT_BYTES)] {
        let slot_bytes = slot_bytes as u32;
        if check_key_file_header(bytes, kind, slot_bytes, AGENT).is_ok() {
            let encoded = encode_key_file_header(kind, slot_bytes, AGENT);
            assert_eq!(&encoded[..], &bytes[..KEY_FILE_HEADER_BYTES], "a key file header re-encoded");
        }
    }
    if let Some(envelope) = parse_node(bytes) {
        assert_eq!(4 + 24 + 48 + envelope.payload.len(), bytes.len());
    }
    let _ = parse_vector(bytes);
    let _ = split_lot_plain_bytes(bytes);
}

/// An encrypted agent with lots, a memory, a vector and an erased lot, whose key table or
/// epoch file then holds `bytes`: nothing the agent does may panic.
fn agent_with_key_file(bytes: &[u8], epochs: bool) {
    let storage = SimStorage::without_faults(1);
    let options = Options::default().segment_size_max_bytes(4096).preallocate_bytes(0);
    let Ok(mut store) = StoreEngine::open(storage.clone(), options.clone()) else { return };
    let Ok(token) = store.create_encrypted_agent("fuzzed") else { return };
    let Ok(key) = store.authenticate(&token) else { return };
    let Ok(mut agent) = store.open_agent(key) else { return };
    let (Ok(kept), Ok(doomed)) = (agent.add_lot("user", b"kept"), agent.add_lot("tool", b"erased")) else { return };
    let Ok(memory) = agent.remember(b"on both", &[Leg::from([kept, doomed])]) else { return };
    let _ = agent.set_vector(kept, &[1.0, 0.5]);
    let _ = agent.recall(doomed, Mode::Fair, Removal::Erase);
    let _ = agent.add_lot("user", b"after the erase");
    drop(agent);
    let folder = agent_folder(key.number());
    let path = if epochs { epochs_path(&folder) } else { key_table_path(&folder) };
    storage.replace_file_bytes(&path, bytes);
    drop(store);
    let Ok(store) = StoreEngine::open(storage.clone(), options) else { return };
    let Ok(key) = store.authenticate(&token) else { return };
    if let Ok(mut agent) = store.open_agent(key) {
        for id in 1..=agent.node_count().min(100) + 1 {
            let _ = agent.get(Id::from(id));
            let _ = agent.audit(Id::from(id));
        }
        let _ = agent.verify();
        let _ = agent.search_vector(&[1.0, 0.5], 3);
        let _ = agent.add_lot("after", b"more");
        let _ = agent.recall(memory, Mode::Strict, Removal::Erase);
        let _ = agent.compact();
    }
}

fuzz_target!(|bytes: &[u8]| {
    let Some((choice, rest)) = bytes.split_first() else { return };
    decoders(rest);
    if choice & 2 != 0 {
        agent_with_key_file(rest, choice & 1 != 0);
    }
});
