//! Following a replica: bringing a restored agent's files up to the bucket's newest head, only
//! when that head extends the history the files hold.
//!
//! Each update is checked whole before a byte of the files changes: every piece against its
//! digest, then the files as they would be (a view of them with the new bytes laid over, in
//! memory) verified to the head's fingerprint, and the point the follower held found in them
//! with the same chain hash. Anything else (a rewritten or missing object, a head that goes
//! backwards, a history that no longer passes through the held point) is `Corrupt`, naming
//! the object, and the files stay as they were.

use alloc::string::String;
use alloc::vec::Vec;

use crate::corrupt_reason::CorruptReason;
use crate::digest::{replica_piece_digest, Hash};
use crate::engine::{io_error, verify_files_without_token};
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::fingerprint::Fingerprint;
use crate::log::names::{agent_folder, parse_segment_name, segment_path};
use crate::replica::head::{Piece, ReplicaHead};
use crate::storage::{Storage, StorageFile};

use super::bucket::Bucket;
use super::commit_point::find_commit_point;
use super::keys::{head_key, Owner, ReplicaPrefix};
use super::local_files::{corrupt, file_length, read_range};
use super::patched_storage::{Image, PatchedStorage};
use super::restore::{fetch_head, fetch_piece, files_of, last_segment_of, margin_after};

/// The follower of one agent's replica, over the agent's restored files.
#[derive(Debug)]
pub struct Follower {
    prefix: ReplicaPrefix,
    name: String,
    agent: u64,
    token_hash: Hash,
    encrypted: bool,
    space: bool,
    /// The fingerprint the files hold.
    held: Fingerprint,
    /// The version of the head last applied (0 before the first).
    applied_version: u64,
    /// Pieces the files are known to hold, from the last head applied.
    pieces_held: Vec<Piece>,
}

impl Follower {
    /// Starts following the agent restored from `head` into `storage`: its files are checked
    /// and their fingerprint becomes the point every later head must extend.
    ///
    /// # Errors
    ///
    /// `Error::Corrupt` when the files fail a check; `Error::Io` when the storage fails.
    pub fn start<S: Storage>(storage: &S, prefix: ReplicaPrefix, head: &ReplicaHead) -> Result<Follower, Error> {
        let held = verify_files_without_token(storage, head.agent, head.encrypted)?;
        // Files just restored from this very head hold all it names: nothing to fetch again.
        let (applied_version, pieces_held) =
            if held == head.fingerprint { (head.version, head.pieces.clone()) } else { (0, Vec::new()) };
        Ok(Follower {
            prefix,
            name: head.name.clone(),
            agent: head.agent,
            token_hash: head.token_hash,
            encrypted: head.encrypted,
            space: head.space,
            held,
            applied_version,
            pieces_held,
        })
    }

    /// The fingerprint the follower's files hold.
    #[must_use]
    pub fn held(&self) -> Fingerprint {
        self.held
    }

    /// The agent's or space's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whose replica it follows.
    #[must_use]
    pub fn owner(&self) -> Owner<'_> {
        Owner { name: &self.name, space: self.space }
    }

    /// Brings the files up to the bucket's head if it moved; returns the new fingerprint, or
    /// `None` when there was nothing new. Call it while nothing else has the files open.
    ///
    /// # Errors
    ///
    /// - `Error::Corrupt` naming the object at fault: a head that is gone, another agent's, or
    ///   behind what is held; a piece missing or rewritten; an update that does not verify to
    ///   its head or does not pass through the held point. The files are unchanged.
    /// - `Error::ObjectStore` when the bucket fails; `Error::Io` when the storage fails.
    pub fn step<S: Storage, B: Bucket>(&mut self, storage: &S, bucket: &mut B) -> Result<Option<Fingerprint>, Error> {
        let key = head_key(&self.prefix, self.owner());
        let Some((head, _)) = fetch_head(bucket, &self.prefix, self.owner())? else {
            return Err(corrupt(&key, 0, CorruptReason::ReplicaHeadWentBackwards));
        };
        if head.agent != self.agent
            || head.token_hash != self.token_hash
            || head.encrypted != self.encrypted
            || head.space != self.space
        {
            return Err(corrupt(&key, 0, CorruptReason::ReplicaHeadOfAnotherAgent));
        }
        if head.version < self.applied_version || head.fingerprint.records < self.held.records {
            return Err(corrupt(&key, 0, CorruptReason::ReplicaHeadWentBackwards));
        }
        if head.version == self.applied_version {
            return Ok(None);
        }
        apply_head(storage, bucket, &self.prefix, self.held, &self.pieces_held, &head)?;
        self.held = head.fingerprint;
        self.applied_version = head.version;
        self.pieces_held = head.pieces;
        Ok(Some(self.held))
    }
}

/// Lays the replica `head` over the agent's files in `storage`, which hold `held` and (known
/// without reading) `pieces_held`, after checking the result as the module says.
///
/// # Errors
///
/// As [`Follower::step`].
pub fn apply_head<S: Storage, B: Bucket>(
    storage: &S,
    bucket: &mut B,
    prefix: &ReplicaPrefix,
    held: Fingerprint,
    pieces_held: &[Piece],
    head: &ReplicaHead,
) -> Result<(), Error> {
    let folder = agent_folder(head.agent);
    let last = last_segment_of(head);
    let mut images: Vec<(String, Image)> = Vec::new();
    for (name, pieces) in files_of(head) {
        let path = alloc::format!("{folder}/{name}");
        let length = file_length(storage, &path)?.unwrap_or(0);
        let mut image = Image { length: pieces.last().map_or(0, |piece| piece.end), patches: Vec::new() };
        for piece in pieces {
            // A piece held is the same piece only with the same digest: a stretch shipped again
            // whole (after an Erase) keeps its bounds and changes its bytes.
            let held = if mutant!(FollowerTrustsRangeWithoutDigest) {
                pieces_held
                    .iter()
                    .any(|held| (&held.file, held.start, held.end) == (&piece.file, piece.start, piece.end))
            } else {
                pieces_held.contains(piece)
            };
            let known = held
                || (piece.end <= length
                    && replica_piece_digest(&read_range(storage, &path, piece.start, piece.length())?) == piece.digest);
            if !known {
                image.patches.push((piece.start, fetch_piece(bucket, prefix, head.owner(), piece)?));
            }
        }
        if parse_segment_name(&name) == Some(last) {
            // The margin is written as zeros: whatever the files held past the committed end
            // (an update a crash interrupted) must not read as a torn write.
            let committed_end = image.length;
            let margin = margin_of(storage, &path, &image)?;
            image.length = image.length.saturating_add(margin);
            image.patches.push((committed_end, alloc::vec![0; usize::try_from(margin).unwrap_or(0)]));
        }
        if !image.patches.is_empty() || length != image.length {
            images.push((path, image));
        }
    }
    let removed = files_after(storage, &folder, last)?;
    let view = PatchedStorage { inner: storage, images: &images, removed: &removed };
    check_update(&view, prefix, head, held)?;
    write_images(storage, &images)?;
    for path in &removed {
        storage.remove_file(path).map_err(|error| io_error(StorageOperation::Removing, path, error))?;
    }
    storage.sync_folder(&folder).map_err(|error| io_error(StorageOperation::Syncing, &folder, error))
}

/// The write margin the last segment's header promises, read from the header as it will be.
fn margin_of<S: Storage>(storage: &S, path: &str, image: &Image) -> Result<u64, Error> {
    match image.patches.first() {
        Some((0, bytes)) => Ok(crate::codec::segment_header::write_margin_bytes(bytes)),
        _ => margin_after(storage, path),
    }
}

/// The segments past the head's last one: none unless the files held more than the head does,
/// which the checks then refuse anyway.
fn files_after<S: Storage>(storage: &S, folder: &str, last: u64) -> Result<Vec<String>, Error> {
    let names = storage.list(folder).map_err(|error| io_error(StorageOperation::Listing, folder, error))?;
    Ok(names
        .iter()
        .filter_map(|name| parse_segment_name(name))
        .filter(|segment| *segment > last)
        .map(|segment| segment_path(folder, segment))
        .collect())
}

/// The files as they would be verify to the head's fingerprint, and pass through `held`.
fn check_update<S: Storage>(
    view: &S,
    prefix: &ReplicaPrefix,
    head: &ReplicaHead,
    held: Fingerprint,
) -> Result<(), Error> {
    let key = head_key(prefix, head.owner());
    let found = verify_files_without_token(view, head.agent, head.encrypted).map_err(|error| match error {
        Error::Corrupt { .. } => corrupt(&key, 0, CorruptReason::ReplicaDoesNotVerifyToItsHead),
        other => other,
    })?;
    if found != head.fingerprint {
        return Err(corrupt(&key, 0, CorruptReason::ReplicaDoesNotVerifyToItsHead));
    }
    if mutant!(FollowerSkipsChainCheck) {
        return Ok(());
    }
    match find_commit_point(view, head.agent, held.records)? {
        Some(point) if point.chain == held.chain => Ok(()),
        _ => Err(corrupt(&key, 0, CorruptReason::ReplicaHistoryDiverged)),
    }
}

fn write_images<S: Storage>(storage: &S, images: &[(String, Image)]) -> Result<(), Error> {
    for (path, image) in images {
        let mut file =
            storage.open_file(path, true).map_err(|error| io_error(StorageOperation::Creating, path, error))?;
        for (start, bytes) in &image.patches {
            file.write_at(*start, bytes).map_err(|error| io_error(StorageOperation::Writing, path, error))?;
        }
        file.set_len(image.length).map_err(|error| io_error(StorageOperation::Trimming, path, error))?;
        file.sync().map_err(|error| io_error(StorageOperation::Syncing, path, error))?;
    }
    Ok(())
}
