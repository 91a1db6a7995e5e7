//! Reading a replica back: the head, every piece checked against the digest the head keeps, the
//! files written whole into a new agent folder, cut at a kept fingerprint when asked, and
//! verified before anything is reported restored.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::segment_header::{write_margin_bytes, SEGMENT_HEADER_BYTES};
use crate::corrupt_reason::CorruptReason;
use crate::digest::replica_piece_digest;
use crate::engine::{io_error, verify_files_without_token};
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::fingerprint::Fingerprint;
use crate::log::names::{agent_folder, parse_segment_name, segment_path, EPOCHS_NAME, KEY_TABLE_NAME};
use crate::replica::head::{Piece, ReplicaHead};
use crate::storage::{Storage, StorageFile};

use super::bucket::{Bucket, BucketError, ObjectTag};
use super::commit_point::find_commit_point;
use super::keys::{head_key, piece_key, Owner, ReplicaPrefix};
use super::local_files::{corrupt, read_range};

/// The head of the agent named `name`, or `None` when the bucket holds no replica of it.
///
/// # Errors
///
/// `Error::ObjectStore` when the bucket fails; `Error::Corrupt` naming the head's key as
/// [`parse_head`] says.
pub fn fetch_head<B: Bucket>(
    bucket: &mut B,
    prefix: &ReplicaPrefix,
    owner: Owner<'_>,
) -> Result<Option<(ReplicaHead, ObjectTag)>, Error> {
    let key = head_key(prefix, owner);
    let Some((bytes, tag)) = bucket.get(&key).map_err(BucketError::into_error)? else { return Ok(None) };
    Ok(Some((parse_head(prefix, &key, &bytes)?, tag)))
}

/// The head held by the object at `key`, checked: it decodes, `key` is the one its agent's name
/// gives, and its pieces follow each other.
///
/// # Errors
///
/// `Error::Corrupt` naming `key` for the first check that fails.
pub fn parse_head(prefix: &ReplicaPrefix, key: &str, bytes: &[u8]) -> Result<ReplicaHead, Error> {
    let head = ReplicaHead::decode(bytes).map_err(|reason| corrupt(key, 0, reason))?;
    if head_key(prefix, head.owner()) != key {
        return Err(corrupt(key, 0, CorruptReason::ReplicaHeadOfAnotherAgent));
    }
    check_layout(&head, key)?;
    // An encrypted agent always has both key files and a plaintext one neither: a flag that
    // says otherwise would open the files with the wrong engine.
    let lists = |file: &str| head.pieces.iter().any(|piece| piece.file == file);
    if [lists(KEY_TABLE_NAME), lists(EPOCHS_NAME)] != [head.encrypted; 2] {
        return Err(corrupt(key, 0, CorruptReason::ReplicaHeadFlagsDisagreeWithItsFiles));
    }
    Ok(head)
}

/// The bytes of `piece`, checked against its digest.
///
/// # Errors
///
/// `Error::Corrupt` naming the piece's key when it is missing or differs from its digest;
/// `Error::ObjectStore` when the bucket fails.
pub fn fetch_piece<B: Bucket>(
    bucket: &mut B,
    prefix: &ReplicaPrefix,
    owner: Owner<'_>,
    piece: &Piece,
) -> Result<Vec<u8>, Error> {
    let key = piece_key(prefix, owner, piece);
    let Some((bytes, _)) = bucket.get(&key).map_err(BucketError::into_error)? else {
        return Err(corrupt(&key, 0, CorruptReason::ReplicaPieceMissing));
    };
    if bytes.len() as u64 != piece.length() || replica_piece_digest(&bytes) != piece.digest {
        return Err(corrupt(&key, 0, CorruptReason::ReplicaPieceDigestMismatch));
    }
    Ok(bytes)
}

/// Checks that each file's pieces start at 0 and follow each other with no gap or overlap,
/// files grouped and segments numbered from 1 with none missing.
fn check_layout(head: &ReplicaHead, key: &str) -> Result<(), Error> {
    let mut segments_seen = 0u64;
    let mut previous: Option<&Piece> = None;
    for piece in &head.pieces {
        let continues = previous.is_some_and(|before| before.file == piece.file);
        let contiguous = match previous {
            Some(before) if continues => before.end == piece.start,
            _ => piece.start == 0,
        };
        let in_order = match parse_segment_name(&piece.file) {
            Some(segment) if !continues => {
                segments_seen += 1;
                segment == segments_seen
            }
            _ => true,
        };
        if !contiguous || !in_order {
            return Err(corrupt(key, 0, CorruptReason::ReplicaPiecesNotContiguous));
        }
        previous = Some(piece);
    }
    Ok(())
}

/// The file names a head holds, in order, each with its pieces.
pub(crate) fn files_of(head: &ReplicaHead) -> Vec<(String, Vec<&Piece>)> {
    let mut files: Vec<(String, Vec<&Piece>)> = Vec::new();
    for piece in &head.pieces {
        match files.last_mut() {
            Some((file, pieces)) if *file == piece.file => pieces.push(piece),
            _ => files.push((piece.file.clone(), alloc::vec![piece])),
        }
    }
    files
}

/// The last segment a head holds: the one a restored agent writes to next.
pub(crate) fn last_segment_of(head: &ReplicaHead) -> u64 {
    head.pieces.iter().filter_map(|piece| parse_segment_name(&piece.file)).max().unwrap_or(0)
}

/// Zeros after the committed part of the last segment: the write margin its header promises
/// (see FORMAT.md, "Zeros written ahead"), which open requires of the segment it writes to.
pub(crate) fn margin_after<S: Storage>(storage: &S, path: &str) -> Result<u64, Error> {
    let header = read_range(storage, path, 0, SEGMENT_HEADER_BYTES as u64)?;
    Ok(write_margin_bytes(&header))
}

/// Writes the files of the replica `head` into the agent's folder of `storage` (made empty by
/// the caller), cut at `point` when one is given, and checks that they verify to the head's
/// fingerprint (or to `point`). Returns that fingerprint.
///
/// # Errors
///
/// - `Error::Corrupt` naming the object at fault: a piece missing or rewritten, pieces that
///   leave a gap, or files that do not verify to the head's fingerprint.
/// - `Error::HistoryMismatch` when `point` is not a point of the replica's history.
/// - `Error::ObjectStore` when the bucket fails; `Error::Io` when the storage fails.
pub fn restore_agent_files<S: Storage, B: Bucket>(
    storage: &S,
    bucket: &mut B,
    prefix: &ReplicaPrefix,
    head: &ReplicaHead,
    point: Option<Fingerprint>,
) -> Result<Fingerprint, Error> {
    let folder = agent_folder(head.agent);
    let last = last_segment_of(head);
    for (name, pieces) in files_of(head) {
        let path = alloc::format!("{folder}/{name}");
        let mut file =
            storage.open_file(&path, true).map_err(|error| io_error(StorageOperation::Creating, &path, error))?;
        for piece in pieces {
            let bytes = fetch_piece(bucket, prefix, head.owner(), piece)?;
            file.write_at(piece.start, &bytes).map_err(|error| io_error(StorageOperation::Writing, &path, error))?;
        }
        file.sync().map_err(|error| io_error(StorageOperation::Syncing, &path, error))?;
    }
    let wanted = match point {
        Some(point) => {
            cut_at(storage, head, point)?;
            point
        }
        None => {
            if last > 0 {
                extend_by_margin(storage, &segment_path(&folder, last), None)?;
            }
            head.fingerprint
        }
    };
    storage.sync_folder(&folder).map_err(|error| io_error(StorageOperation::Syncing, &folder, error))?;
    let found = verify_files_without_token(storage, head.agent, head.encrypted)?;
    if found != wanted {
        let key = head_key(prefix, head.owner());
        return Err(corrupt(&key, 0, CorruptReason::ReplicaDoesNotVerifyToItsHead));
    }
    Ok(found)
}

/// Cuts the restored log just after the durable write that reaches `point`: the segment holding
/// it ends there (with its margin of zeros) and later segments go.
fn cut_at<S: Storage>(storage: &S, head: &ReplicaHead, point: Fingerprint) -> Result<(), Error> {
    let folder = agent_folder(head.agent);
    let found = find_commit_point(storage, head.agent, point.records)?;
    let Some(commit) = found.filter(|commit| commit.chain == point.chain) else {
        return Err(Error::HistoryMismatch { records: point.records });
    };
    for segment in commit.segment + 1..=last_segment_of(head) {
        let path = segment_path(&folder, segment);
        storage.remove_file(&path).map_err(|error| io_error(StorageOperation::Removing, &path, error))?;
    }
    extend_by_margin(storage, &segment_path(&folder, commit.segment), Some(commit.end))
}

/// Sets the file's length to `committed_end` (its length when `None`) plus its write margin of
/// zeros, and syncs it.
fn extend_by_margin<S: Storage>(storage: &S, path: &str, committed_end: Option<u64>) -> Result<(), Error> {
    let margin = margin_after(storage, path)?;
    let mut file = storage.open_file(path, false).map_err(|error| io_error(StorageOperation::Opening, path, error))?;
    let end = match committed_end {
        Some(end) => end,
        None => file.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?,
    };
    // Two steps, so the bytes after the cut read as zeros whatever the file held there.
    file.set_len(end).map_err(|error| io_error(StorageOperation::Trimming, path, error))?;
    file.set_len(end + margin).map_err(|error| io_error(StorageOperation::Growing, path, error))?;
    file.sync().map_err(|error| io_error(StorageOperation::Syncing, path, error))
}
