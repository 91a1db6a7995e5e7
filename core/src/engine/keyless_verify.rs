//! Verifying an agent's files without its token and without opening it: every check that needs
//! no key. For an encrypted agent that is everything but opening sealed contents: checksums,
//! digests of the sealed bytes, the chain and commit markers, that every content record is
//! sealed, and the crcs of every key table and epoch slot. It reads and never writes, so it
//! also suits a copy of a store (a backup) checked by someone who holds no token.

use alloc::string::String;
use alloc::vec::Vec;

use super::files::read_all;
use super::io_error;
use super::sealing::open_key_file;
use super::verify::{check_segment, SegmentPlace};
use crate::codec::epoch_file::{decode_epoch_slot, EPOCH_SLOT_BYTES};
use crate::codec::key_file_header::{
    check_key_file_header, FILE_KIND_EPOCHS, FILE_KIND_KEY_TABLE, KEY_FILE_HEADER_BYTES,
};
use crate::codec::key_table_file::{decode_key_slot, KEY_SLOT_BYTES};
use crate::convert::bounded_count_u32;
use crate::corrupt_reason::CorruptReason;
use crate::digest::chain_genesis;
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::fingerprint::Fingerprint;
use crate::log::names::{agent_folder, epochs_path, key_table_path, parse_segment_name, segment_path};
use crate::storage::Storage;

/// Checks the files of agent `agent` as they are on disk, without a key: the log from its first
/// segment to its last, and, when `encrypted`, that every content is sealed and every slot of
/// the key files passes its check. Returns the head fingerprint of what the files hold.
///
/// A store that a crash left unrepaired (a torn last write not yet cut by an open) fails here
/// with `Corrupt` at the torn bytes: open the store once, then check.
///
/// # Errors
///
/// `Error::Corrupt` for the first damage found, in log order, then in the key files;
/// `Error::Io` when a file cannot be listed or read.
pub fn verify_files_without_token<S: Storage>(storage: &S, agent: u64, encrypted: bool) -> Result<Fingerprint, Error> {
    let folder = agent_folder(agent);
    let last = count_segments(storage, &folder)?;
    let mut sequence = 0;
    let mut chain = chain_genesis(agent);
    for segment in 1..=last {
        let path = segment_path(&folder, segment);
        let file =
            storage.open_file(&path, false).map_err(|error| io_error(StorageOperation::Opening, &path, error))?;
        let bytes = read_all(&file, &path)?;
        let place = SegmentPlace { agent, segment, last: segment == last, path, encrypted, opener: None };
        let checked = check_segment(&bytes, &place, None).map_err(|failed| failed.error)?;
        if (checked.sequence_before, checked.chain_before) != (sequence, chain) {
            return Err(place.corrupt(0, CorruptReason::SegmentHeaderBelongsElsewhere));
        }
        (sequence, chain) = (checked.sequence, checked.chain);
    }
    if encrypted {
        check_key_table(storage, &folder, agent)?;
        check_epochs(storage, &folder, agent)?;
    }
    Ok(Fingerprint { records: sequence, chain })
}

/// How many segments the folder holds, after checking they are numbered 1, 2, … with no gap.
fn count_segments<S: Storage>(storage: &S, folder: &str) -> Result<u64, Error> {
    let names = storage.list(folder).map_err(|error| io_error(StorageOperation::Listing, folder, error))?;
    let mut numbers: Vec<u64> = names.iter().filter_map(|name| parse_segment_name(name)).collect();
    numbers.sort_unstable();
    for (expected, found) in (1u64..).zip(numbers.iter().copied()) {
        if found != expected {
            let file = segment_path(folder, expected);
            return Err(Error::Corrupt { file, offset: 0, reason: CorruptReason::SegmentFileMissing });
        }
    }
    Ok(numbers.len() as u64)
}

fn read_key_file<S: Storage>(storage: &S, path: &str) -> Result<Vec<u8>, Error> {
    read_all(&open_key_file(storage, path)?, path)
}

fn check_key_table<S: Storage>(storage: &S, folder: &str, agent: u64) -> Result<(), Error> {
    let path = key_table_path(folder);
    let bytes = read_key_file(storage, &path)?;
    let corrupt =
        |offset: usize, reason| Error::Corrupt { file: String::from(path.as_str()), offset: offset as u64, reason };
    check_key_file_header(&bytes, FILE_KIND_KEY_TABLE, slot_size(KEY_SLOT_BYTES), agent)
        .map_err(|reason| corrupt(header_damage_offset(&bytes, reason), reason))?;
    let slots = bytes.get(KEY_FILE_HEADER_BYTES..).unwrap_or_default();
    // A slot cut short at the end is an unsynced write a crash tore; open writes it again.
    for (index, slot) in slots.chunks_exact(KEY_SLOT_BYTES).enumerate() {
        decode_key_slot(agent, index as u64 + 1, slot)
            .map_err(|reason| corrupt(KEY_FILE_HEADER_BYTES + index * KEY_SLOT_BYTES, reason))?;
    }
    Ok(())
}

fn check_epochs<S: Storage>(storage: &S, folder: &str, agent: u64) -> Result<(), Error> {
    let path = epochs_path(folder);
    let bytes = read_key_file(storage, &path)?;
    let corrupt =
        |offset: usize, reason| Error::Corrupt { file: String::from(path.as_str()), offset: offset as u64, reason };
    check_key_file_header(&bytes, FILE_KIND_EPOCHS, slot_size(EPOCH_SLOT_BYTES), agent)
        .map_err(|reason| corrupt(header_damage_offset(&bytes, reason), reason))?;
    let slots = bytes.get(KEY_FILE_HEADER_BYTES..).unwrap_or_default();
    if slots.len() % EPOCH_SLOT_BYTES != 0 || slots.is_empty() {
        return Err(corrupt(bytes.len(), CorruptReason::KeyFileCutShort));
    }
    for (index, slot) in slots.chunks_exact(EPOCH_SLOT_BYTES).enumerate() {
        decode_epoch_slot(agent, bounded_count_u32(index + 1)?, slot)
            .map_err(|reason| corrupt(KEY_FILE_HEADER_BYTES + index * EPOCH_SLOT_BYTES, reason))?;
    }
    Ok(())
}

/// Where a key file whose header failed with `reason` is damaged: at its end when it ends
/// inside the header, at its start otherwise.
fn header_damage_offset(bytes: &[u8], reason: CorruptReason) -> usize {
    if reason == CorruptReason::KeyFileCutShort {
        bytes.len()
    } else {
        0
    }
}

fn slot_size(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use crate::corrupt_reason::CorruptReason;
    use crate::error::Error;
    use crate::id::{Leg, Mode, Removal};
    use crate::limits::Options;
    use crate::ram_storage::RamStorage;
    use crate::storage::{Storage, StorageFile};
    use crate::store::StoreEngine;

    fn flip(storage: &RamStorage, path: &str, offset: u64) {
        let mut file = storage.open_file(path, false).unwrap();
        let mut byte = [0u8];
        file.read_at(offset, &mut byte).unwrap();
        file.write_at(offset, &[byte[0] ^ 1]).unwrap();
    }

    #[test]
    fn without_the_token_the_files_give_the_fingerprint_the_agent_gives_and_damage_is_found() {
        let storage = RamStorage::default();
        let mut store = StoreEngine::open(storage.clone(), Options::default()).unwrap();
        let token = store.create_encrypted_agent("alice").unwrap();
        store.create_agent("bob").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let lot = alice.add_lot("web", b"text").unwrap();
        alice.remember(b"derived", &[Leg::from([lot])]).unwrap();
        alice.add_lot("tool", b"kept").unwrap();
        alice.recall(lot, Mode::Fair, Removal::Erase).unwrap();
        let fingerprint = alice.verify().unwrap();
        drop(alice);
        assert_eq!(store.verify_agent_without_token("alice").unwrap(), fingerprint);
        store.verify_agent_without_token("bob").unwrap();
        flip(&storage, "agent-0000000000000001/keys", 64 + 2 * 80 + 30);
        let found = store.verify_agent_without_token("alice");
        assert!(
            matches!(found, Err(Error::Corrupt { reason: CorruptReason::KeySlotChecksumMismatch, offset: 224, .. })),
            "{found:?}"
        );
        assert!(matches!(store.verify_agent_without_token("nobody"), Err(Error::UnknownAgent { .. })));
    }
}
