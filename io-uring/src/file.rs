//! [`UringFile`]: writes are queued as owned buffers and reach the kernel at `sync`, all of them
//! linked to one `fdatasync` in a single submission; large reads are split into pieces read in
//! parallel.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use cheesedb_core::StorageFile;

use crate::pool::RingPool;
use crate::ring::{errno, Operation, Ring, Target, OPERATION_MAX_BYTES, RING_ENTRIES};

/// Pieces a large read is split into, so the kernel can work on several at once.
const READ_PIECE_BYTES: usize = 1 << 20;

/// Queued bytes past which writes go to the kernel before the next sync, to bound memory.
const QUEUED_MAX_BYTES: usize = 64 << 20;

/// One write waiting for the next submission; it owns its bytes.
#[derive(Debug)]
struct QueuedWrite {
    offset: u64,
    bytes: Vec<u8>,
}

impl QueuedWrite {
    fn end(&self) -> u64 {
        self.offset + self.bytes.len() as u64
    }
}

/// One open file of a [`UringStorage`](crate::UringStorage).
///
/// A file that has synced once keeps a ring of its own, with its descriptor registered in the
/// ring's file table, until it is dropped; reads borrow an idle ring of the storage.
#[derive(Debug)]
pub struct UringFile {
    file: File,
    queued: Vec<QueuedWrite>,
    queued_bytes: usize,
    ring: Option<Ring>,
    pool: Arc<RingPool>,
}

/// The result of one operation as a `Result` of bytes moved.
fn outcome(result: i32) -> io::Result<usize> {
    usize::try_from(result).map_err(|_| io::Error::from_raw_os_error(result.saturating_neg()))
}

impl UringFile {
    pub(crate) fn new(file: File, pool: Arc<RingPool>) -> UringFile {
        UringFile { file, queued: Vec::new(), queued_bytes: 0, ring: None, pool }
    }

    /// This file's ring, with its descriptor in the ring's file table.
    fn own_ring(&mut self) -> io::Result<(Ring, Target)> {
        let mut ring = match self.ring.take() {
            Some(ring) => ring,
            None => self.pool.take_ring()?,
        };
        let target = ring.assign_file(self.file.as_raw_fd());
        Ok((ring, target))
    }

    /// Hands every queued write to the kernel, followed by an `fdatasync` when `sync`, in one
    /// chained submission, and waits for all of them. Any failure is an error, and the queued
    /// writes are gone either way (the engine stops writing to a file whose sync failed).
    fn submit_queued(&mut self, sync: bool) -> io::Result<()> {
        let writes = std::mem::take(&mut self.queued);
        self.queued_bytes = 0;
        let (mut ring, target) = self.own_ring()?;
        let outcome = write_and_sync(&mut ring, target, &writes, sync);
        if !ring.is_broken() {
            self.ring = Some(ring);
        }
        outcome
    }

    /// Copies the queued writes that overlap `[offset, offset + out.len())` over `out`, oldest
    /// first, so a read sees the file as it will be.
    fn overlay_queued(&self, offset: u64, out: &mut [u8]) {
        let end = offset + out.len() as u64;
        for write in &self.queued {
            let start = write.offset.max(offset);
            let stop = write.end().min(end);
            if start >= stop {
                continue;
            }
            let source = write.bytes.get((start - write.offset) as usize..(stop - write.offset) as usize);
            let target = out.get_mut((start - offset) as usize..(stop - offset) as usize);
            if let (Some(source), Some(target)) = (source, target) {
                target.copy_from_slice(source);
            }
        }
    }
}

/// Writes every piece of `writes`, then (with `sync`) an `fdatasync`, each operation linked to
/// the one before, as few submissions as the ring's size allows (one, for up to 63 writes).
/// A short write is continued and the sync repeated after it.
fn write_and_sync(ring: &mut Ring, target: Target, writes: &[QueuedWrite], sync: bool) -> io::Result<()> {
    let mut pending: VecDeque<(u64, &[u8])> = VecDeque::new();
    for write in writes {
        for (index, piece) in write.bytes.chunks(OPERATION_MAX_BYTES).enumerate() {
            pending.push_back((write.offset + (index * OPERATION_MAX_BYTES) as u64, piece));
        }
    }
    let mut synced = !sync;
    while !pending.is_empty() || !synced {
        let room = RING_ENTRIES as usize - 1;
        let round: Vec<(u64, &[u8])> = pending.drain(..pending.len().min(room)).collect();
        let with_sync = sync && pending.is_empty();
        let mut operations: Vec<Operation<'_>> =
            round.iter().map(|(offset, bytes)| Operation::Write { target, offset: *offset, bytes }).collect();
        if with_sync {
            operations.push(Operation::SyncData { target });
        }
        let results = ring.run(&mut operations, true)?;
        let mut unfinished = Vec::new();
        for ((offset, bytes), result) in round.iter().zip(&results) {
            if *result == -errno::ECANCELED {
                unfinished.push((*offset, *bytes)); // An earlier write of the chain was short.
                continue;
            }
            let written = outcome(*result)?;
            if written == 0 {
                return Err(io::Error::new(io::ErrorKind::WriteZero, "the kernel wrote nothing"));
            }
            if let Some(rest) = bytes.get(written..).filter(|rest| !rest.is_empty()) {
                unfinished.push((offset + written as u64, rest));
            }
        }
        if with_sync {
            match results.last().copied() {
                Some(result) if result == -errno::ECANCELED && !unfinished.is_empty() => {}
                Some(result) => {
                    outcome(result)?;
                    synced = unfinished.is_empty();
                }
                None => return Err(io::Error::other("the sync has no completion")),
            }
        }
        for piece in unfinished.into_iter().rev() {
            pending.push_front(piece);
        }
    }
    Ok(())
}

/// Fills `out` from `offset` with reads of [`READ_PIECE_BYTES`], up to a ring's worth per
/// submission; short reads are continued, and the end of the file is an error.
fn read_pieces(ring: &mut Ring, target: Target, offset: u64, out: &mut [u8]) -> io::Result<()> {
    let mut pending: VecDeque<(u64, &mut [u8])> = out
        .chunks_mut(READ_PIECE_BYTES)
        .enumerate()
        .map(|(index, piece)| (offset + (index * READ_PIECE_BYTES) as u64, piece))
        .collect();
    while !pending.is_empty() {
        let round: Vec<(u64, &mut [u8])> = pending.drain(..pending.len().min(RING_ENTRIES as usize)).collect();
        let mut operations: Vec<Operation<'_>> =
            round.into_iter().map(|(offset, buffer)| Operation::Read { target, offset, buffer }).collect();
        let results = ring.run(&mut operations, false)?;
        for (operation, result) in operations.into_iter().zip(results) {
            let Operation::Read { offset, buffer, .. } = operation else { continue };
            let read = outcome(result)?;
            if read == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file"));
            }
            if let Some(rest) = buffer.get_mut(read..).filter(|rest| !rest.is_empty()) {
                pending.push_back((offset + read as u64, rest));
            }
        }
    }
    Ok(())
}

impl StorageFile for UringFile {
    type Error = io::Error;

    fn len(&self) -> io::Result<u64> {
        let stored = self.file.metadata()?.len();
        Ok(self.queued.iter().map(QueuedWrite::end).fold(stored, u64::max))
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let end = offset
            .checked_add(out.len() as u64)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
        if end > self.len()? {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file"));
        }
        // What lies beyond the stored length exists only in queued writes (or the zeros of a gap).
        let stored = self.file.metadata()?.len();
        let from_disk = usize::try_from(stored.saturating_sub(offset)).unwrap_or(usize::MAX).min(out.len());
        let (disk_part, beyond) = out.split_at_mut(from_disk);
        beyond.fill(0);
        if !disk_part.is_empty() {
            let mut ring = self.pool.take_ring()?;
            let outcome = read_pieces(&mut ring, Target::Plain(self.file.as_raw_fd()), offset, disk_part);
            self.pool.give_back(ring);
            outcome?;
        }
        self.overlay_queued(offset, out);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        offset
            .checked_add(bytes.len() as u64)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
        self.queued.push(QueuedWrite { offset, bytes: bytes.to_vec() });
        self.queued_bytes += bytes.len();
        if self.queued_bytes > QUEUED_MAX_BYTES {
            self.submit_queued(false)?;
        }
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.submit_queued(true)
    }

    fn set_len(&mut self, length: u64) -> io::Result<()> {
        // Queued writes come first, so a cut after them cuts them as it would have on disk.
        if !self.queued.is_empty() {
            self.submit_queued(false)?;
        }
        self.file.set_len(length)
    }
}

impl Drop for UringFile {
    fn drop(&mut self) {
        // Unsynced writes may be lost by a crash, not by closing a file: hand them over.
        if !self.queued.is_empty() {
            let _ = self.submit_queued(false);
        }
        // The ring must let go of the descriptor before the file closes it.
        if let Some(mut ring) = self.ring.take() {
            ring.release_file();
            self.pool.give_back(ring);
        }
    }
}

#[cfg(test)]
mod tests {
    use cheesedb_core::StorageFile;

    use crate::{UringFile, UringStorage};

    fn storage() -> (tempfile::TempDir, UringStorage) {
        let folder = tempfile::tempdir().unwrap();
        let storage = UringStorage::new().unwrap();
        (folder, storage)
    }

    fn open_file(folder: &tempfile::TempDir, storage: &UringStorage, name: &str, create: bool) -> UringFile {
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(folder.path().join(name));
        storage.adopt_file(opened.unwrap())
    }

    #[test]
    fn queued_writes_are_visible_to_reads_and_length_before_the_sync() {
        let (folder, storage) = storage();
        let mut file = open_file(&folder, &storage, "data", true);
        file.write_at(0, b"hello world").unwrap();
        file.write_at(6, b"WORLD").unwrap();
        file.write_at(14, b"!").unwrap();
        assert_eq!(file.len().unwrap(), 15);
        let mut back = [0xffu8; 15];
        file.read_at(0, &mut back).unwrap();
        assert_eq!(&back, b"hello WORLD\0\0\0!");
        assert_eq!(storage.submissions(), 0, "nothing reached the kernel yet but the probe");
        file.sync().unwrap();
        assert_eq!(storage.submissions(), 1, "three writes and their sync are one submission");
        assert_eq!(storage.operations(), 4);
        let mut again = [0u8; 15];
        file.read_at(0, &mut again).unwrap();
        assert_eq!(back, again);
        assert_eq!(std::fs::read(folder.path().join("data")).unwrap(), b"hello WORLD\0\0\0!");
    }

    #[test]
    fn more_writes_than_a_ring_holds_still_land_in_order() {
        let (folder, storage) = storage();
        let mut file = open_file(&folder, &storage, "data", true);
        for index in 0..200u32 {
            // Every write overlaps the one before, so the order is visible in the result.
            file.write_at(u64::from(index), &[index as u8; 4]).unwrap();
        }
        file.sync().unwrap();
        let stored = std::fs::read(folder.path().join("data")).unwrap();
        let expected: Vec<u8> = (0..200u32).map(|index| index as u8).chain([199, 199, 199]).collect();
        assert_eq!(stored, expected);
        assert_eq!(storage.submissions(), 4, "200 writes and a sync in rounds of 63");
    }

    #[test]
    fn a_large_read_is_split_and_a_read_past_the_end_fails() {
        let (folder, storage) = storage();
        let bytes: Vec<u8> = (0..5_000_000u32).map(|index| (index % 251) as u8).collect();
        std::fs::write(folder.path().join("big"), &bytes).unwrap();
        let file = open_file(&folder, &storage, "big", false);
        let mut back = vec![0u8; bytes.len() - 7];
        file.read_at(7, &mut back).unwrap();
        assert_eq!(&back[..], &bytes[7..]);
        assert_eq!(storage.operations(), 5, "five pieces of at most 1 MiB");
        assert_eq!(storage.submissions(), 1);
        let mut past = [0u8; 8];
        assert_eq!(
            file.read_at(bytes.len() as u64 - 4, &mut past).unwrap_err().kind(),
            std::io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn set_len_cuts_after_the_queued_writes() {
        let (folder, storage) = storage();
        let mut file = open_file(&folder, &storage, "data", true);
        file.write_at(0, b"0123456789").unwrap();
        file.set_len(4).unwrap();
        file.sync().unwrap();
        assert_eq!(std::fs::read(folder.path().join("data")).unwrap(), b"0123");
    }

    #[test]
    fn unsynced_writes_reach_the_file_when_it_is_closed() {
        let (folder, storage) = storage();
        let mut file = open_file(&folder, &storage, "data", true);
        file.write_at(0, b"kept").unwrap();
        drop(file);
        assert_eq!(std::fs::read(folder.path().join("data")).unwrap(), b"kept");
    }
}
