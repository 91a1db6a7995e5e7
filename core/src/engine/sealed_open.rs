//! What opening an encrypted agent adds to replay: each record is checked to be sealed, the
//! key table slots of records sealed under a live epoch are written again from them (a crash
//! may have lost slots that were not yet synced), and an Erase that a crash cut short gets its
//! keys destroyed and its epoch rotated before anything is served.

use alloc::vec::Vec;

use super::sealing::Sealing;
use super::AgentEngine;
use crate::codec::key_table_file::KEY_SLOT_BYTES;
use crate::codec::record::{Body, Record};
use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::graph::Graph;
use crate::id::Removal;
use crate::seal::envelope::parse_node;
use crate::seal::{recovery_associated_data, unwrap_key};
use crate::storage::{Storage, StorageFile};

/// The slots a replay writes again, gathered into runs of consecutive ids.
#[derive(Debug, Default)]
pub(super) struct SlotsToRestore {
    runs: Vec<(u64, Vec<u8>)>,
}

impl SlotsToRestore {
    fn push(&mut self, id: u64, slot: &[u8; KEY_SLOT_BYTES]) {
        match self.runs.last_mut() {
            Some((first, bytes)) if *first + (bytes.len() / KEY_SLOT_BYTES) as u64 == id => {
                bytes.extend_from_slice(slot)
            }
            _ => self.runs.push((id, slot.to_vec())),
        }
    }

    /// Writes the slots that do not already hold their bytes, not synced: the records keep them
    /// recoverable until the key table is synced, which comes before any epoch is destroyed.
    ///
    /// A slot already right is left alone. Written again, unsynced, a crash could tear a slot
    /// that was durable; and when its record lies before the point of a snapshot (an open that
    /// could not read the snapshot replays from the start), the next open, resuming from that
    /// snapshot, would not write it again. After a clean close nothing differs, so nothing is
    /// written (a read-only open stays so). A node an Erase covers gets no key back: its slot is
    /// to be zeroed, not restored.
    ///
    /// Returns how many slots it wrote.
    pub(super) fn write<F: StorageFile>(self, sealing: &mut Sealing<F>, graph: &Graph) -> Result<u64, Error> {
        let mut written = 0;
        for (first, bytes) in self.runs {
            let held = sealing.slots_held(first, bytes.len())?;
            let mut held_slots = held.chunks_exact(KEY_SLOT_BYTES);
            let mut differing = SlotsToRestore::default();
            for (slot, id) in bytes.chunks_exact(KEY_SLOT_BYTES).zip(first..) {
                let differs = held_slots.next() != Some(slot) && !graph.is_erase_requested(id);
                if let (true, Ok(slot)) = (differs, <&[u8; KEY_SLOT_BYTES]>::try_from(slot)) {
                    differing.push(id, slot);
                }
            }
            for (first, bytes) in differing.runs {
                sealing.write_slots(first, &bytes)?;
                written += (bytes.len() / KEY_SLOT_BYTES) as u64;
            }
        }
        Ok(written)
    }
}

/// Checks that `record` is sealed exactly when the agent is encrypted, and gathers the slot
/// of a lot or memory sealed under an epoch whose key is live.
pub(super) fn replay_sealing<F: StorageFile>(
    sealing: Option<&Sealing<F>>,
    record: &Record<'_>,
    restore: &mut SlotsToRestore,
) -> Result<(), CorruptReason> {
    let Some(content) = record.content() else { return Ok(()) };
    let Some(sealing) = sealing else {
        return if content.sealed { Err(CorruptReason::SealedRecordInPlaintextAgent) } else { Ok(()) };
    };
    if !content.sealed {
        return Err(CorruptReason::PlaintextRecordInEncryptedAgent);
    }
    let (Body::Lot { id, .. } | Body::Memory { id, .. }) = record.body else { return Ok(()) };
    let Some((_, bytes)) = content.present else { return Ok(()) };
    let envelope = parse_node(bytes).ok_or(CorruptReason::SealedContentMalformed)?;
    if !sealing.knows_epoch(envelope.epoch) {
        return Err(CorruptReason::EpochOfRecordUnknown);
    }
    // Under a destroyed epoch the slot was synced before the epoch went.
    let Some(epoch_key) = sealing.epoch_key(envelope.epoch) else { return Ok(()) };
    let associated = recovery_associated_data(record.identity.agent, id, envelope.epoch);
    let secret = unwrap_key(&epoch_key, envelope.nonce, &associated, envelope.recovery)
        .map_err(|_| CorruptReason::SealedContentDoesNotOpen)?;
    restore.push(id, &sealing.slot_bytes(id, envelope.nonce, &secret));
    Ok(())
}

/// The sequence of `record` if it is a recall with Erase.
pub(super) fn erase_sequence(record: &Record<'_>) -> Option<u64> {
    matches!(
        record.body,
        Body::Recall { removal: Removal::Erase, .. } | Body::RecallAll { removal: Removal::Erase, .. }
    )
    .then_some(record.identity.sequence)
}

impl<S: Storage> AgentEngine<S> {
    /// Finishes, at open, what an Erase on an encrypted agent left undone: the slots of nodes
    /// it covers that still hold keys, and the rotation of epochs. Returns how many nodes lost
    /// their keys here.
    pub(super) fn finish_key_erasures(&mut self) -> Result<u64, Error> {
        let Some(sealing) = self.sealing.as_ref() else { return Ok(0) };
        let marked: Vec<u64> = self.graph.content_to_remove(false).collect();
        self.snapshot_stale |= !marked.is_empty();
        for id in marked {
            // A slot torn while it was being zeroed fails its check: it is zeroed again below.
            if matches!(sealing.secret(id), Ok(None)) {
                let location = self.graph.location(id)?;
                self.graph.set_location(id, location, false);
            }
        }
        for id in self.graph.vectors_to_remove(false).collect::<Vec<u64>>() {
            if matches!(sealing.secret(id), Ok(None)) {
                self.graph.set_vector_on_disk(id, false);
            }
        }
        // An Erase cut short may cover nodes whose sealed bytes a compaction had dropped
        // before: no record leads to their slots, so each is looked at.
        let covered: Vec<u64> = if self.erase_cut_short() {
            (1..self.graph.next_id())
                .filter(|id| self.graph.is_erase_requested(*id) && !self.graph.is_content_on_disk(*id))
                .filter(|id| !matches!(sealing.secret(*id), Ok(None)))
                .collect()
        } else {
            Vec::new()
        };
        let left = self.graph.content_to_remove(false).next().is_some()
            || self.graph.vectors_to_remove(false).next().is_some()
            || !covered.is_empty();
        let destroyed = if left { self.erase_by_destroying_keys(&covered)? } else { 0 };
        if self.settle_epochs()? {
            self.report.epoch_rotations_finished_on_open += 1;
        }
        Ok(destroyed)
    }

    /// Whether an Erase may have been cut short before its rotation: one replayed from the log
    /// was written under the epoch in force, or the epoch file ends in a torn slot (a rotation
    /// cut short, whose Erase may lie before the point a snapshot let open resume from).
    fn erase_cut_short(&self) -> bool {
        let Some(sealing) = self.sealing.as_ref() else { return false };
        let start = sealing.current_start_sequence();
        sealing.rotation_cut_short() || self.last_erase_sequence_replayed.is_some_and(|erase| erase >= start)
    }

    /// Starts a new epoch when an Erase replayed from the log was written under the epoch in
    /// force (a crash came before its rotation) or when no live epoch is in force, and destroys
    /// every epoch older than the one in force. Returns whether it did either.
    fn settle_epochs(&mut self) -> Result<bool, Error> {
        let next_sequence = self.log.sequence() + 1;
        let erase_under_current = self.erase_cut_short() && !mutant!(SkipEpochRotation);
        let Some(sealing) = self.sealing.as_mut() else { return Ok(false) };
        let mut settled = false;
        if erase_under_current || sealing.current_epoch().is_none() {
            sealing.sync_key_table()?;
            sealing.start_epoch(&self.storage, next_sequence)?;
            settled = true;
        }
        if sealing.has_older_live_epochs() {
            sealing.sync_key_table()?;
            sealing.destroy_older_epochs()?;
            settled = true;
        }
        Ok(settled)
    }
}
