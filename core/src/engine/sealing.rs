//! An encrypted agent's two key files, the key table and the epoch file, and the epoch keys
//! held in RAM while the agent is open.
//!
//! The rules that make erasure by destroying keys sound (docs/FORMAT.md has the argument):
//! - a node's slot is written, not synced, with its record; its record carries the same secret
//!   under the epoch key in force, so a crash before the key table reached the disk loses
//!   nothing: open writes the slot again from the record;
//! - the key table is synced before an epoch is destroyed and before a snapshot is saved, so
//!   every slot an open could no longer write again from a record is durable;
//! - an Erase zeroes slots, syncs and reads them back, then starts a new epoch, then zeroes the
//!   key of every older epoch, syncs and reads it back.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::files::read_all;
use super::{io_error, StorageMisbehaved};
use crate::codec::epoch_file::{decode_epoch_slot, encode_epoch_slot, epoch_slot_offset, EpochSlot, EPOCH_SLOT_BYTES};
use crate::codec::key_file_header::{
    check_key_file_header, encode_key_file_header, FILE_KIND_EPOCHS, FILE_KIND_KEY_TABLE, KEY_FILE_HEADER_BYTES,
};
use crate::codec::key_table_file::{encode_key_slot, key_slot_offset, KeySlot, KEY_SLOT_BYTES};
use crate::convert::bounded_count_u32;
use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::error_facts::{InternalRule, StorageOperation};
use crate::log::names::{epochs_path, key_table_path};
use crate::seal::{
    epoch_associated_data, secret_in_slot, slot_associated_data, unwrap_key, wrap_key, AgentSecrets, ContentOpener,
    Nonce, SecretKey,
};
use crate::storage::{Storage, StorageFile};

/// One epoch as the agent holds it.
#[derive(Clone, Copy)]
enum Epoch {
    Live {
        start_sequence: u64,
        key: SecretKey,
    },
    /// Destroyed by an Erase, or found torn where an Erase was destroying it: no key either way.
    Gone,
}

/// The keys of an open encrypted agent.
pub(crate) struct Sealing<F> {
    agent: u64,
    secrets: AgentSecrets,
    key_table_path: String,
    epochs_path: String,
    key_table: F,
    epochs_file: F,
    /// Epoch `n` at index `n - 1`; the last is the one in force.
    epochs: Vec<Epoch>,
    /// Slots were written since the key table was last synced.
    key_table_unsynced: bool,
    /// Open found the epoch file ending in a torn slot: a rotation was cut short.
    rotation_cut_short: bool,
    /// Older epoch slots open found failing their check and wrote again as destroyed.
    epoch_slots_destroyed_on_open: u64,
}

impl<F> core::fmt::Debug for Sealing<F> {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.debug_struct("Sealing").field("epochs", &self.epochs.len()).finish_non_exhaustive()
    }
}

impl<F: StorageFile> Sealing<F> {
    /// Makes the key files of a new encrypted agent in `folder`, durably (the caller syncs the
    /// folder): an empty key table, and an epoch file whose first epoch starts at `start_sequence`.
    pub(crate) fn create<S: Storage<File = F>>(
        storage: &S,
        folder: &str,
        agent: u64,
        secrets: AgentSecrets,
        start_sequence: u64,
    ) -> Result<Sealing<F>, Error> {
        let key_table_path = key_table_path(folder);
        let epochs_path = epochs_path(folder);
        let key_table = create_file(
            storage,
            &key_table_path,
            &encode_key_file_header(FILE_KIND_KEY_TABLE, slot_size(KEY_SLOT_BYTES), agent),
        )?;
        let epochs_file = create_file(
            storage,
            &epochs_path,
            &encode_key_file_header(FILE_KIND_EPOCHS, slot_size(EPOCH_SLOT_BYTES), agent),
        )?;
        let mut sealing = Sealing::holding(agent, secrets, (key_table_path, key_table), (epochs_path, epochs_file));
        sealing.start_epoch(storage, start_sequence)?;
        Ok(sealing)
    }

    /// The state over two key files just made or opened, with no epoch loaded yet.
    fn holding(agent: u64, secrets: AgentSecrets, key_table: (String, F), epochs: (String, F)) -> Sealing<F> {
        let ((key_table_path, key_table), (epochs_path, epochs_file)) = (key_table, epochs);
        Sealing {
            agent,
            secrets,
            key_table_path,
            epochs_path,
            key_table,
            epochs_file,
            epochs: Vec::new(),
            key_table_unsynced: false,
            rotation_cut_short: false,
            epoch_slots_destroyed_on_open: 0,
        }
    }

    /// Opens the key files of the encrypted agent in `folder`, and unwraps the keys of its live
    /// epochs. A last epoch slot that a crash tore while it was being added is removed; an older
    /// one that fails its check was being destroyed, and counts as destroyed.
    pub(crate) fn open<S: Storage<File = F>>(
        storage: &S,
        folder: &str,
        agent: u64,
        secrets: AgentSecrets,
    ) -> Result<Sealing<F>, Error> {
        let key_table_path = key_table_path(folder);
        let epochs_path = epochs_path(folder);
        let key_table = open_key_file(storage, &key_table_path)?;
        let length = key_table.len().map_err(|error| io_error(StorageOperation::Measuring, &key_table_path, error))?;
        if length < KEY_FILE_HEADER_BYTES as u64 {
            let reason = CorruptReason::KeyFileCutShort;
            return Err(Error::Corrupt { file: key_table_path, offset: length, reason });
        }
        let mut header = [0u8; KEY_FILE_HEADER_BYTES];
        read_exactly(&key_table, &key_table_path, 0, &mut header)?;
        check_key_file_header(&header, FILE_KIND_KEY_TABLE, slot_size(KEY_SLOT_BYTES), agent)
            .map_err(|reason| Error::Corrupt { file: key_table_path.clone(), offset: 0, reason })?;
        let epochs_file = open_key_file(storage, &epochs_path)?;
        let mut sealing = Sealing::holding(agent, secrets, (key_table_path, key_table), (epochs_path, epochs_file));
        // What the page cache shows may not be on the medium yet (a process that failed a sync
        // may have left slots an Erase zeroed): the first sync must really happen.
        sealing.key_table_unsynced = true;
        sealing.load_epochs()?;
        Ok(sealing)
    }

    fn load_epochs(&mut self) -> Result<(), Error> {
        let path = self.epochs_path.clone();
        let bytes = read_all(&self.epochs_file, &path)?;
        check_key_file_header(&bytes, FILE_KIND_EPOCHS, slot_size(EPOCH_SLOT_BYTES), self.agent).map_err(|reason| {
            let offset = if reason == CorruptReason::KeyFileCutShort { bytes.len() as u64 } else { 0 };
            Error::Corrupt { file: path.clone(), offset, reason }
        })?;
        let slots = bytes.get(KEY_FILE_HEADER_BYTES..).unwrap_or_default();
        let whole = slots.len() / EPOCH_SLOT_BYTES;
        let mut kept_bytes = KEY_FILE_HEADER_BYTES + whole * EPOCH_SLOT_BYTES;
        let mut torn_older = Vec::new();
        for (index, slot) in slots.chunks_exact(EPOCH_SLOT_BYTES).enumerate() {
            let epoch = bounded_count_u32(index + 1)?;
            let offset = (KEY_FILE_HEADER_BYTES + index * EPOCH_SLOT_BYTES) as u64;
            match decode_epoch_slot(self.agent, epoch, slot) {
                Ok(EpochSlot::Live { start_sequence, nonce, wrapped }) => {
                    let associated = epoch_associated_data(self.agent, epoch, start_sequence);
                    let key =
                        unwrap_key(&self.secrets.epoch_wrapping_key, &nonce, &associated, &wrapped).map_err(|_| {
                            Error::Corrupt { file: path.clone(), offset, reason: CorruptReason::EpochKeyDoesNotOpen }
                        })?;
                    self.epochs.push(Epoch::Live { start_sequence, key });
                }
                Ok(EpochSlot::Destroyed { .. }) => self.epochs.push(Epoch::Gone),
                // The last slot is added by one write and synced before anything is sealed
                // under it: torn, it was never used. Torn is only possible while the epoch
                // before it is live, since older epochs go only once it is durable.
                Err(_) if index + 1 == whole && self.last_is_live() => kept_bytes -= EPOCH_SLOT_BYTES,
                // Otherwise it was whole and in force: damage, reported with the file as it is.
                Err(reason) if index + 1 == whole => return Err(Error::Corrupt { file: path, offset, reason }),
                // An older slot is only ever overwritten to destroy it: torn, it was on the way.
                // The tear may have spared its key (a sector of the overwrite that never made it
                // while the checksum's did), so the destruction is finished here.
                Err(_) => {
                    self.epochs.push(Epoch::Gone);
                    let start_sequence =
                        slot.get(..8).and_then(|bytes| bytes.try_into().ok()).map_or(0, u64::from_le_bytes);
                    torn_older
                        .push((offset, encode_epoch_slot(self.agent, epoch, &EpochSlot::Destroyed { start_sequence })));
                }
            }
        }
        if !self.last_is_live() {
            // Creation adds a live epoch, and an Erase adds the next before it destroys any: an
            // epoch file whose last epoch is not live lost slots. Starting a new epoch here would
            // give the lost one's number to a new key, which its records do not open under.
            let offset = (KEY_FILE_HEADER_BYTES + whole * EPOCH_SLOT_BYTES) as u64;
            return Err(Error::Corrupt { file: path, offset, reason: CorruptReason::KeyFileCutShort });
        }
        if kept_bytes != bytes.len() {
            let cut = self.epochs_file.set_len(kept_bytes as u64);
            cut.map_err(|error| io_error(StorageOperation::CuttingTornEpoch, &path, error))?;
            // Only starting an epoch adds a slot: an Erase's rotation (or this settling at an
            // earlier open) was cut short, and may have been meant to cover an Erase.
            self.rotation_cut_short = true;
        }
        for (offset, slot) in torn_older {
            self.epochs_file
                .write_at(offset, &slot)
                .map_err(|error| io_error(StorageOperation::Writing, &path, error))?;
            self.epoch_slots_destroyed_on_open += 1;
        }
        // The epochs served from now on must be the medium's: an epoch key an Erase destroyed
        // in the page cache only (its sync failed) is still on the medium until this sync.
        self.epochs_file.sync().map_err(|error| io_error(StorageOperation::Syncing, &path, error))?;
        Ok(())
    }

    /// Whether the last epoch loaded so far is live.
    fn last_is_live(&self) -> bool {
        matches!(self.epochs.last(), Some(Epoch::Live { .. }))
    }

    /// The epoch in force and its key, if it is live.
    pub(crate) fn current_epoch(&self) -> Option<(u32, SecretKey)> {
        match self.epochs.last() {
            Some(Epoch::Live { key, .. }) => Some((u32::try_from(self.epochs.len()).ok()?, *key)),
            _ => None,
        }
    }

    /// The sequence of the first record of the epoch in force (0 when it is not live).
    pub(crate) fn current_start_sequence(&self) -> u64 {
        match self.epochs.last() {
            Some(Epoch::Live { start_sequence, .. }) => *start_sequence,
            _ => 0,
        }
    }

    /// Whether open found a rotation cut short (the epoch file ended in a torn slot).
    pub(crate) fn rotation_cut_short(&self) -> bool {
        self.rotation_cut_short
    }

    /// How many older epoch slots open found failing their check and wrote again as destroyed.
    pub(crate) fn epoch_slots_destroyed_on_open(&self) -> u64 {
        self.epoch_slots_destroyed_on_open
    }

    /// Whether an epoch other than the one in force still has its key.
    pub(crate) fn has_older_live_epochs(&self) -> bool {
        let older = self.epochs.len().saturating_sub(1);
        self.epochs.iter().take(older).any(|epoch| matches!(epoch, Epoch::Live { .. }))
    }

    /// Whether `epoch` is one of the agent's epochs, live or destroyed.
    pub(crate) fn knows_epoch(&self, epoch: u32) -> bool {
        epoch >= 1 && usize::try_from(epoch).is_ok_and(|epoch| epoch <= self.epochs.len())
    }

    /// The key of `epoch`, if it is live.
    pub(crate) fn epoch_key(&self, epoch: u32) -> Option<SecretKey> {
        let index = usize::try_from(epoch.checked_sub(1)?).ok()?;
        match self.epochs.get(index)? {
            Epoch::Live { key, .. } => Some(*key),
            Epoch::Gone => None,
        }
    }

    /// The slot of node `id` holding `secret`, sealed with `nonce` (the nonce of its record).
    pub(crate) fn slot_bytes(&self, id: u64, nonce: &Nonce, secret: &SecretKey) -> [u8; KEY_SLOT_BYTES] {
        let wrapped = wrap_key(&self.secrets.slot_key, nonce, &slot_associated_data(self.agent, id), secret);
        encode_key_slot(self.agent, id, &KeySlot { nonce: *nonce, wrapped })
    }

    /// Writes `bytes`, the slots of ids from `first_id` on, where they belong; not synced.
    pub(crate) fn write_slots(&mut self, first_id: u64, bytes: &[u8]) -> Result<(), Error> {
        if bytes.is_empty() {
            return Ok(());
        }
        let offset = key_slot_offset(first_id).ok_or(Error::Internal { what: InternalRule::NodeIdHasKeySlot })?;
        self.key_table_unsynced = true;
        let path = &self.key_table_path;
        self.key_table.write_at(offset, bytes).map_err(|error| io_error(StorageOperation::Writing, path, error))
    }

    /// Cuts the key table just after the slot of node `last_id`, the last node. Slots past it
    /// are an append's unsynced writes that a crash kept while it lost their records: no record
    /// names them and the next append writes them again, but one the crash tore fails the check
    /// of a copy verified without the token (a restored replica). Not synced: a crash that
    /// undoes the cut leaves what the next open cuts again. Returns the slots cut (a partial
    /// one counted whole).
    pub(crate) fn cut_slots_after(&mut self, last_id: u64) -> Result<u64, Error> {
        let path = &self.key_table_path;
        let kept = key_slot_offset(last_id + 1).ok_or(Error::Internal { what: InternalRule::NodeIdHasKeySlot })?;
        let length = self.key_table.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?;
        if length <= kept {
            return Ok(0);
        }
        self.key_table.set_len(kept).map_err(|error| io_error(StorageOperation::CuttingTornEnd, path, error))?;
        self.key_table_unsynced = true;
        Ok((length - kept).div_ceil(KEY_SLOT_BYTES as u64))
    }

    /// The bytes the key table holds where the slots of ids from `first_id` on lie, `length`
    /// of them: fewer when the table ends before.
    pub(crate) fn slots_held(&self, first_id: u64, length: usize) -> Result<Vec<u8>, Error> {
        let path = &self.key_table_path;
        let offset = key_slot_offset(first_id).ok_or(Error::Internal { what: InternalRule::NodeIdHasKeySlot })?;
        let table_length = self.key_table.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?;
        let available = table_length.saturating_sub(offset).min(u64::try_from(length).unwrap_or(u64::MAX));
        let mut bytes = vec![0u8; usize::try_from(available).unwrap_or(0)];
        if !bytes.is_empty() {
            self.key_table
                .read_at(offset, &mut bytes)
                .map_err(|error| io_error(StorageOperation::Reading, path, error))?;
        }
        Ok(bytes)
    }

    /// The secret of node `id`: `None` when its slot holds no key or lies past the table's end.
    ///
    /// A slot the table's end cuts short is `Corrupt` (`KeyFileCutShort`).
    pub(crate) fn secret(&self, id: u64) -> Result<Option<SecretKey>, Error> {
        let path = &self.key_table_path;
        let offset = key_slot_offset(id).ok_or(Error::Internal { what: InternalRule::NodeIdHasKeySlot })?;
        let length = self.key_table.len().map_err(|error| io_error(StorageOperation::Reading, path, error))?;
        if offset >= length {
            return Ok(None);
        }
        // The table's end inside the slot: its write was torn by a crash, and what is left of it
        // may still hold the key. Damage, to be destroyed if an Erase covers the node.
        if offset.saturating_add(KEY_SLOT_BYTES as u64) > length {
            return Err(Error::Corrupt { file: path.clone(), offset, reason: CorruptReason::KeyFileCutShort });
        }
        let mut slot = [0u8; KEY_SLOT_BYTES];
        read_exactly(&self.key_table, path, offset, &mut slot)?;
        secret_in_slot(self.agent, &self.secrets.slot_key, id, &slot).map_err(|reason| Error::Corrupt {
            file: path.clone(),
            offset,
            reason,
        })
    }

    /// Makes every slot written so far durable.
    pub(crate) fn sync_key_table(&mut self) -> Result<(), Error> {
        if self.key_table_unsynced {
            let path = &self.key_table_path;
            self.key_table.sync().map_err(|error| io_error(StorageOperation::Syncing, path, error))?;
            self.key_table_unsynced = false;
        }
        Ok(())
    }

    /// Overwrites the slots of `ids` (ascending) with zeros where they lie, syncs, and reads
    /// them back: a write that landed elsewhere fails rather than leaving a key in place. Slots
    /// past the table's end hold no key already.
    pub(crate) fn destroy_slots(&mut self, ids: &[u64]) -> Result<(), Error> {
        let path = self.key_table_path.clone();
        let length = self.key_table.len().map_err(|error| io_error(StorageOperation::Reading, &path, error))?;
        let mut runs: Vec<(u64, usize)> = Vec::new();
        for id in ids {
            let offset = key_slot_offset(*id).ok_or(Error::Internal { what: InternalRule::NodeIdHasKeySlot })?;
            if offset >= length {
                continue;
            }
            match runs.last_mut() {
                Some((start, bytes)) if *start + *bytes as u64 == offset => *bytes += KEY_SLOT_BYTES,
                _ => runs.push((offset, KEY_SLOT_BYTES)),
            }
        }
        if runs.is_empty() {
            return Ok(());
        }
        for (offset, bytes) in &runs {
            let zeros = vec![0u8; *bytes];
            self.key_table
                .write_at(*offset, &zeros)
                .map_err(|error| io_error(StorageOperation::Writing, &path, error))?;
        }
        self.key_table.sync().map_err(|error| io_error(StorageOperation::Syncing, &path, error))?;
        self.key_table_unsynced = false;
        for (offset, bytes) in runs {
            let mut found = vec![0xffu8; bytes];
            read_exactly(&self.key_table, &path, offset, &mut found)?;
            if found.iter().any(|byte| *byte != 0) {
                let misbehaved = StorageMisbehaved("a key slot read back after it was destroyed still holds its key");
                return Err(io_error(StorageOperation::Checking, &path, misbehaved));
            }
        }
        Ok(())
    }

    /// Adds a new epoch whose first record will be `start_sequence`, with a fresh random key,
    /// durably; it is the one in force from now on.
    pub(crate) fn start_epoch<S: Storage<File = F>>(&mut self, storage: &S, start_sequence: u64) -> Result<(), Error> {
        let epoch = bounded_count_u32(self.epochs.len() + 1)?;
        let mut random = [0u8; 32 + 24];
        storage
            .fill_random(&mut random)
            .map_err(|error| io_error(StorageOperation::DrawingRandomBytes, &self.epochs_path, error))?;
        let (key_part, nonce_part) = random.split_at(32);
        let key: SecretKey = key_part.try_into().map_err(|_| Error::Internal { what: InternalRule::KeyIs32Bytes })?;
        let nonce: Nonce = nonce_part.try_into().map_err(|_| Error::Internal { what: InternalRule::NonceIs24Bytes })?;
        let associated = epoch_associated_data(self.agent, epoch, start_sequence);
        let wrapped = wrap_key(&self.secrets.epoch_wrapping_key, &nonce, &associated, &key);
        let slot = encode_epoch_slot(self.agent, epoch, &EpochSlot::Live { start_sequence, nonce, wrapped });
        let offset = epoch_slot_offset(epoch).ok_or(Error::Internal { what: InternalRule::EpochHasSlot })?;
        let path = &self.epochs_path;
        let written = self.epochs_file.write_at(offset, &slot).and_then(|()| self.epochs_file.sync());
        written.map_err(|error| io_error(StorageOperation::Writing, path, error))?;
        self.epochs.push(Epoch::Live { start_sequence, key });
        Ok(())
    }

    /// Destroys the key of every epoch but the one in force where it lies, syncs, and reads the
    /// slots back. The key table must be durable first: the caller syncs it.
    pub(crate) fn destroy_older_epochs(&mut self) -> Result<(), Error> {
        debug_assert!(!self.key_table_unsynced, "slots must be durable before the epochs that recover them go");
        let older = self.epochs.len().saturating_sub(1);
        let path = self.epochs_path.clone();
        let mut destroyed = Vec::new();
        for index in 0..older {
            let Some(Epoch::Live { start_sequence, .. }) = self.epochs.get(index).copied() else { continue };
            let epoch = bounded_count_u32(index + 1)?;
            let offset = epoch_slot_offset(epoch).ok_or(Error::Internal { what: InternalRule::EpochHasSlot })?;
            let slot = encode_epoch_slot(self.agent, epoch, &EpochSlot::Destroyed { start_sequence });
            self.epochs_file
                .write_at(offset, &slot)
                .map_err(|error| io_error(StorageOperation::Writing, &path, error))?;
            destroyed.push((epoch, offset, slot));
        }
        if destroyed.is_empty() {
            return Ok(());
        }
        self.epochs_file.sync().map_err(|error| io_error(StorageOperation::Syncing, &path, error))?;
        for (epoch, offset, slot) in destroyed {
            let mut found = [0u8; EPOCH_SLOT_BYTES];
            read_exactly(&self.epochs_file, &path, offset, &mut found)?;
            if found != slot {
                let misbehaved = StorageMisbehaved("an epoch key read back after it was destroyed is still there");
                return Err(io_error(StorageOperation::Checking, &path, misbehaved));
            }
            if let Some(entry) = usize::try_from(epoch - 1).ok().and_then(|index| self.epochs.get_mut(index)) {
                *entry = Epoch::Gone;
            }
        }
        Ok(())
    }

    /// An opener over the whole key table as it is now, for a pass over the whole log.
    pub(crate) fn opener(&self) -> Result<ContentOpener, Error> {
        let table = read_all(&self.key_table, &self.key_table_path)?;
        Ok(ContentOpener::new(self.agent, self.secrets.slot_key, table))
    }

    /// The key table's path, for errors.
    pub(crate) fn key_table_path(&self) -> &str {
        &self.key_table_path
    }
}

/// Opens the key file at `path` of an agent the catalog names.
///
/// Both key files are durable before the catalog names the agent, and nothing removes them
/// while it does: one that is gone is damage to the agent (`Corrupt`, `KeyFileMissing`), not a
/// failure of the storage.
pub(crate) fn open_key_file<S: Storage>(storage: &S, path: &str) -> Result<S::File, Error> {
    if !storage.exists(path).map_err(|error| io_error(StorageOperation::Checking, path, error))? {
        return Err(Error::Corrupt { file: String::from(path), offset: 0, reason: CorruptReason::KeyFileMissing });
    }
    storage.open_file(path, false).map_err(|error| io_error(StorageOperation::Opening, path, error))
}

fn slot_size(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

fn create_file<S: Storage>(storage: &S, path: &str, header: &[u8]) -> Result<S::File, Error> {
    let mut file = storage.open_file(path, true).map_err(|error| io_error(StorageOperation::Creating, path, error))?;
    let written = file.set_len(0).and_then(|()| file.write_at(0, header)).and_then(|()| file.sync());
    written.map_err(|error| io_error(StorageOperation::Writing, path, error))?;
    Ok(file)
}

fn read_exactly<F: StorageFile>(file: &F, path: &str, offset: u64, out: &mut [u8]) -> Result<(), Error> {
    file.read_at(offset, out).map_err(|error| io_error(StorageOperation::Reading, path, error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ram_storage::RamStorage;

    const AGENT: u64 = 3;

    /// A key table with a slot for every id from 1 to `count`, each holding a key.
    fn filled_table(count: u64) -> Sealing<<RamStorage as Storage>::File> {
        let storage = RamStorage::default();
        storage.create_folder("agent").unwrap();
        let secrets = AgentSecrets::from_token(&[7u8; 32]);
        let mut sealing = Sealing::create(&storage, "agent", AGENT, secrets, 1).unwrap();
        let mut slots = Vec::new();
        for id in 1..=count {
            let byte = u8::try_from(id % 251).unwrap();
            slots.extend_from_slice(&sealing.slot_bytes(id, &[byte; 24], &[byte; 32]));
        }
        sealing.write_slots(1, &slots).unwrap();
        sealing
    }

    #[test]
    fn destroyed_slots_lose_their_keys_and_the_others_keep_theirs() {
        let count = 2_000;
        let mut sealing = filled_table(count);
        // Neighbours, a run, slots close together, slots far apart, the last.
        let doomed = [2, 3, 4, 10, 300, 301, 1_200, 1_999, 2_000];
        sealing.destroy_slots(&doomed).unwrap();
        for id in 1..=count {
            let secret = sealing.secret(id).unwrap();
            assert_eq!(secret.is_none(), doomed.contains(&id), "slot {id}");
        }
        assert!(!sealing.key_table_unsynced);
    }

    #[test]
    fn a_slot_cut_short_at_the_end_of_the_table_is_zeroed_whole() {
        let mut sealing = filled_table(40);
        let length = sealing.key_table.len().unwrap();
        sealing.key_table.set_len(length - 30).unwrap();
        sealing.destroy_slots(&[5, 40]).unwrap();
        assert_eq!(sealing.key_table.len().unwrap(), length);
        assert!(sealing.secret(40).unwrap().is_none());
        assert!(sealing.secret(5).unwrap().is_none());
        assert!(sealing.secret(39).unwrap().is_some());
    }
}
