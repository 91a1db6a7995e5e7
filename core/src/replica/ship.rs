//! Shipping one agent: what its files hold that the bucket does not (read while the agent's
//! writes wait), then the uploads, the head and the deletions (done while they go on).
//!
//! The order is what keeps the bucket whole: every piece a head names is written before the
//! head; a piece a head stops naming is deleted only after that head is written. A crash
//! anywhere leaves the last head and all it names, plus at most some objects no head names,
//! which the next run deletes once it holds the head.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use crate::digest::replica_piece_digest;
use crate::error::Error;
use crate::error_facts::FenceReason;
use crate::fingerprint::Fingerprint;
use crate::log::names::{agent_folder, epochs_path, key_table_path, segment_path, EPOCHS_NAME, KEY_TABLE_NAME};
use crate::replica::head::{Piece, ReplicaHead};
use crate::storage::Storage;

use super::bucket::{Bucket, BucketError, ObjectTag};
use super::commit_point::find_commit_point;
use super::grants::AgentEntry;
use super::keys::{agent_prefix, head_key, is_piece_key_of, piece_key, ReplicaPrefix};
use super::local_files::{advance, committed_end_of_segment, cursor_at_end, file_length, read_range, Advance, Cursor};
use super::pieces::{file_extent_shipped, plan_file_pieces, FilePlan};

/// The shipping state of one agent of one store, kept between ships.
#[derive(Debug)]
pub struct AgentShipper {
    prefix: ReplicaPrefix,
    /// What the catalog says of the agent or space shipped.
    identity: AgentEntry,
    /// This run's number: part of every piece key it writes, so two runs never collide.
    run: u64,
    /// The head as the bucket holds it, once read.
    head: Option<(ReplicaHead, ObjectTag)>,
    head_loaded: bool,
    /// Where the shipped log ends, once the files were read in this run.
    cursor: Option<Cursor>,
    /// The agent's count of rewrites at the last plan: when it moves, shipped stretches may have
    /// changed (an Erase, a compaction) and are checked again.
    rewrites_seen: Option<u64>,
    /// Objects no head names any more that are still to be deleted.
    deletions_pending: BTreeSet<String>,
    /// Whether objects left by earlier runs were looked for since this run wrote a head.
    leftovers_removed: bool,
    fenced: Option<FenceReason>,
}

/// What one agent's ship will do: computed with the agent's writes held, carried out without.
#[derive(Debug)]
pub struct ShipPlan {
    head: ReplicaHead,
    uploads: Vec<(Piece, Vec<u8>)>,
    superseded: Vec<Piece>,
    cursor: Cursor,
    rewrites: u64,
}

impl ShipPlan {
    /// Bytes the plan uploads.
    #[must_use]
    pub fn upload_bytes(&self) -> u64 {
        self.uploads.iter().map(|(piece, _)| piece.length()).sum()
    }

    /// What the agent's files held when the plan was made: the head it writes names this.
    #[must_use]
    pub fn local_fingerprint(&self) -> Fingerprint {
        Fingerprint { records: self.cursor.sequence, chain: self.cursor.chain }
    }
}

/// What a ship did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShipOutcome {
    /// Pieces written.
    pub pieces_uploaded: u64,
    /// Bytes written in them.
    pub bytes_uploaded: u64,
    /// Objects deleted that no head names any more.
    pub objects_deleted: u64,
}

impl AgentShipper {
    /// The shipper of the agent or space `entry` describes, for a run numbered `run` (drawn at
    /// random, so that no two runs name a piece alike).
    #[must_use]
    pub fn new(prefix: ReplicaPrefix, entry: AgentEntry, run: u64) -> AgentShipper {
        AgentShipper {
            prefix,
            identity: entry,
            run,
            head: None,
            head_loaded: false,
            cursor: None,
            rewrites_seen: None,
            deletions_pending: BTreeSet::new(),
            leftovers_removed: false,
            fenced: None,
        }
    }

    /// The agent's or space's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.identity.name
    }

    /// Whose replica it ships.
    #[must_use]
    pub fn owner(&self) -> super::keys::Owner<'_> {
        self.identity.owner()
    }

    /// How far the bucket's head reaches, as this shipper last wrote or read it.
    #[must_use]
    pub fn shipped(&self) -> Option<Fingerprint> {
        self.head.as_ref().map(|(head, _)| head.fingerprint)
    }

    /// What the agent's files held at the last plan.
    #[must_use]
    pub fn local_fingerprint(&self) -> Option<Fingerprint> {
        self.cursor.map(|cursor| Fingerprint { records: cursor.sequence, chain: cursor.chain })
    }

    /// Objects that no head names any more but are not yet deleted: while any is, an erased
    /// text may still be in the bucket.
    #[must_use]
    pub fn deletions_pending(&self) -> usize {
        // Until this run has looked for what earlier runs left, that is unknown: count it.
        self.deletions_pending.len() + usize::from(!self.leftovers_removed && self.head.is_some())
    }

    fn check_not_fenced(&self) -> Result<(), Error> {
        match self.fenced {
            Some(reason) => Err(Error::ReplicaFenced { name: self.identity.name.clone(), reason }),
            None => Ok(()),
        }
    }

    fn fence(&mut self, reason: FenceReason) -> Error {
        self.fenced = Some(reason);
        Error::ReplicaFenced { name: self.identity.name.clone(), reason }
    }

    /// Reads the agent's head from the bucket, once per run, before the first plan.
    ///
    /// # Errors
    ///
    /// `Error::ObjectStore` when the bucket fails; `Error::Corrupt` (naming the head) when the
    /// head does not decode; `Error::ReplicaFenced` when it is another agent's.
    pub fn load_head<B: Bucket>(&mut self, bucket: &mut B) -> Result<(), Error> {
        self.check_not_fenced()?;
        if self.head_loaded {
            return Ok(());
        }
        let head = super::restore::fetch_head(bucket, &self.prefix, self.identity.owner())?;
        if let Some((found, _)) = &head {
            let identity = &self.identity;
            if found.agent != identity.number
                || found.token_hash != identity.token_hash
                || found.encrypted != identity.encrypted
                || found.space != identity.space
            {
                return Err(self.fence(FenceReason::AnotherAgentOfThatName));
            }
        }
        self.head = head;
        self.head_loaded = true;
        // A head read anew is checked against the files before anything is planned on it.
        self.cursor = None;
        Ok(())
    }

    /// What the agent's files hold that the bucket does not, read from `storage` while no write
    /// of the agent can happen. `rewrites` is the agent's count of changes to stretches already
    /// written (see `AgentEngine::rewrite_count`). `None` when there is nothing to ship.
    ///
    /// # Errors
    ///
    /// `Error::ReplicaFenced` when the bucket holds a history the files do not contain;
    /// `Error::Corrupt` when the files fail a check; `Error::Io` when the storage fails.
    pub fn plan<S: Storage>(&mut self, storage: &S, rewrites: u64) -> Result<Option<ShipPlan>, Error> {
        self.check_not_fenced()?;
        debug_assert!(self.head_loaded, "load_head comes before the first plan");
        let agent = self.identity.number;
        let full_check = self.cursor.is_none() || self.rewrites_seen != Some(rewrites);
        if self.rewrites_seen.is_some_and(|seen| seen != rewrites) {
            // Objects no head names (a crashed run's, a fenced store's) may hold text just
            // erased: look for them again before reporting no deletion pending.
            self.leftovers_removed = false;
        }
        let (cursor, advanced) = match self.cursor.filter(|_| !full_check) {
            Some(mut cursor) => {
                let advanced = advance(storage, agent, &mut cursor)?;
                (cursor, advanced)
            }
            None => cursor_at_end(storage, agent)?,
        };
        let shipped_pieces: Vec<Piece> = self.head.as_ref().map(|(head, _)| head.pieces.clone()).unwrap_or_default();
        if full_check {
            self.check_history_contains_head(storage)?;
        }
        let mut files = self.file_names(&cursor, &shipped_pieces);
        files.sort_by_key(|name| file_order(name));
        files.dedup();
        let mut uploads = Vec::new();
        let mut superseded = Vec::new();
        let mut pieces = Vec::new();
        for name in files {
            let path = self.path_of(&name);
            let old: Vec<Piece> = shipped_pieces.iter().filter(|piece| piece.file == name).cloned().collect();
            let rewritten = full_check && !stretches_unchanged(storage, &path, &old)?;
            let extent = self.extent(storage, &name, &path, &cursor, &advanced, &old, full_check)?;
            let plan = plan_file_pieces(&name, &old, extent, rewritten, self.run);
            self.collect(storage, &path, plan, &mut pieces, &mut uploads, &mut superseded)?;
        }
        let fingerprint = Fingerprint { records: cursor.sequence, chain: cursor.chain };
        let unchanged = self.head.as_ref().is_some_and(|(head, _)| head.fingerprint == fingerprint)
            && uploads.is_empty()
            && superseded.is_empty();
        if unchanged {
            self.cursor = Some(cursor);
            self.rewrites_seen = Some(rewrites);
            return Ok(None);
        }
        let version = self.head.as_ref().map_or(1, |(head, _)| head.version.saturating_add(1));
        let identity = &self.identity;
        let head = ReplicaHead {
            version,
            agent,
            name: identity.name.clone(),
            token_hash: identity.token_hash,
            encrypted: identity.encrypted,
            space: identity.space,
            fingerprint,
            pieces,
        };
        Ok(Some(ShipPlan { head, uploads, superseded, cursor, rewrites }))
    }

    /// Uploads the plan's pieces, then its head (conditionally on the head this shipper knows),
    /// then deletes what no head names any more. Call it without holding the agent's writes.
    ///
    /// # Errors
    ///
    /// `Error::ReplicaFenced` when another store wrote the head or a piece meanwhile (this
    /// shipper stops for good); `Error::ObjectStore` when the bucket fails: what was uploaded
    /// stays unnamed until a later ship, and nothing is reported shipped that was not.
    pub fn execute<B: Bucket>(&mut self, bucket: &mut B, plan: ShipPlan) -> Result<ShipOutcome, Error> {
        self.check_not_fenced()?;
        let mut outcome = ShipOutcome::default();
        for (piece, bytes) in &plan.uploads {
            if let Err(error) = self.upload_piece(bucket, piece, bytes) {
                // A failed upload may have landed: look for it once a head is written.
                self.leftovers_removed = false;
                return Err(error);
            }
            outcome.pieces_uploaded += 1;
            outcome.bytes_uploaded += piece.length();
        }
        let tag = match self.write_head(bucket, &plan.head) {
            Ok(tag) => tag,
            Err(error) => {
                // The pieces just uploaded are named by no head this run knows of.
                self.leftovers_removed = false;
                if !matches!(error, Error::ReplicaFenced { .. }) {
                    // The write may have landed with its reply lost: its tag is unknown here,
                    // so the next ship reads the head again (and finds it a point of this log).
                    self.head_loaded = false;
                }
                return Err(error);
            }
        };
        for piece in &plan.superseded {
            self.deletions_pending.insert(piece_key(&self.prefix, self.identity.owner(), piece));
        }
        self.head = Some((plan.head, tag));
        self.cursor = Some(plan.cursor);
        self.rewrites_seen = Some(plan.rewrites);
        outcome.objects_deleted = self.delete_pending(bucket)?;
        Ok(outcome)
    }

    /// Deletes what no head names any more (listing the agent's objects first, once per run and
    /// after a failed ship); returns how many objects went.
    ///
    /// # Errors
    ///
    /// `Error::ObjectStore` when a delete fails: the object stays pending.
    pub fn delete_pending<B: Bucket>(&mut self, bucket: &mut B) -> Result<u64, Error> {
        // Also when a plan finds nothing new: a run that starts after a crash must still remove
        // what the crashed run left, which may hold text erased since.
        if !self.leftovers_removed && self.head.is_some() {
            self.find_leftovers(bucket)?;
            self.leftovers_removed = true;
        }
        let mut deleted = 0;
        while let Some(key) = self.deletions_pending.first().cloned() {
            bucket.delete(&key).map_err(BucketError::into_error)?;
            self.deletions_pending.remove(&key);
            deleted += 1;
        }
        Ok(deleted)
    }

    /// Everything under the agent's folder that the head does not name: pieces of runs that
    /// crashed before their head, or whose deletions did not finish.
    fn find_leftovers<B: Bucket>(&mut self, bucket: &mut B) -> Result<(), Error> {
        let Some((head, _)) = &self.head else { return Ok(()) };
        let named: BTreeSet<String> = head
            .pieces
            .iter()
            .map(|piece| piece_key(&self.prefix, self.identity.owner(), piece))
            .chain(core::iter::once(head_key(&self.prefix, self.identity.owner())))
            .collect();
        let folder = agent_prefix(&self.prefix, self.identity.owner());
        for key in bucket.list(&folder).map_err(BucketError::into_error)? {
            // The answer is the object store's word: a key it names outside this agent's
            // folder, or of a shape no shipper writes, is someone else's and stays.
            let own = is_piece_key_of(&self.prefix, self.identity.owner(), &key) || mutant!(ShipperDeletesForeignKeys);
            if own && !named.contains(&key) {
                self.deletions_pending.insert(key);
            }
        }
        Ok(())
    }

    fn upload_piece<B: Bucket>(&mut self, bucket: &mut B, piece: &Piece, bytes: &[u8]) -> Result<(), Error> {
        let key = piece_key(&self.prefix, self.identity.owner(), piece);
        match bucket.put_new(&key, bytes) {
            Ok(_) => Ok(()),
            Err(BucketError::PreconditionFailed) => {
                // This run's key: only an earlier try of this very upload, whose reply was lost,
                // can have written it, and then with these bytes.
                match bucket.get(&key).map_err(BucketError::into_error)? {
                    Some((found, _)) if replica_piece_digest(&found) == piece.digest => Ok(()),
                    _ => Err(self.fence(FenceReason::PieceWrittenBySomeoneElse)),
                }
            }
            Err(error) => Err(error.into_error()),
        }
    }

    fn write_head<B: Bucket>(&mut self, bucket: &mut B, head: &ReplicaHead) -> Result<ObjectTag, Error> {
        let key = head_key(&self.prefix, self.identity.owner());
        let bytes = head.encode();
        let written = match &self.head {
            None => bucket.put_new(&key, &bytes),
            Some((_, tag)) => bucket.put_replacing(&key, &bytes, tag),
        };
        match written {
            Ok(tag) => Ok(tag),
            Err(BucketError::PreconditionFailed) => match bucket.get(&key).map_err(BucketError::into_error)? {
                // An earlier try of this very write landed and its reply was lost.
                Some((found, tag)) if found == bytes => Ok(tag),
                _ => Err(self.fence(FenceReason::HeadReplaced)),
            },
            Err(error) => Err(error.into_error()),
        }
    }

    /// The head names a history; the files must contain it, or this store is not the one that
    /// shipped it.
    fn check_history_contains_head<S: Storage>(&mut self, storage: &S) -> Result<(), Error> {
        let Some((head, _)) = &self.head else { return Ok(()) };
        let wanted = head.fingerprint;
        match find_commit_point(storage, self.identity.number, wanted.records)? {
            Some(point) if point.chain == wanted.chain => Ok(()),
            _ => Err(self.fence(FenceReason::HistoryNotInLog)),
        }
    }

    /// Every file to consider: the segments up to the cursor's, the key files of an encrypted
    /// agent, and whatever the head lists.
    fn file_names(&self, cursor: &Cursor, shipped: &[Piece]) -> Vec<String> {
        let folder = agent_folder(self.identity.number);
        let mut names: Vec<String> = (1..=cursor.segment)
            .map(|segment| {
                let path = segment_path(&folder, segment);
                String::from(path.rsplit('/').next().unwrap_or_default())
            })
            .collect();
        if self.identity.encrypted {
            names.push(String::from(KEY_TABLE_NAME));
            names.push(String::from(EPOCHS_NAME));
        }
        names.extend(shipped.iter().map(|piece| piece.file.clone()));
        names
    }

    fn path_of(&self, name: &str) -> String {
        let folder = agent_folder(self.identity.number);
        match name {
            KEY_TABLE_NAME => key_table_path(&folder),
            EPOCHS_NAME => epochs_path(&folder),
            _ => alloc::format!("{folder}/{name}"),
        }
    }

    /// How many bytes of the file the bucket should hold now. On a `full_check` (a new run, or
    /// after a rewrite) a segment before the cursor's is read to its committed end: it may have
    /// grown, and been sealed, since the head was written, and the cursor, read from the last
    /// segment only, does not say.
    #[allow(clippy::too_many_arguments)]
    fn extent<S: Storage>(
        &self,
        storage: &S,
        name: &str,
        path: &str,
        cursor: &Cursor,
        advanced: &Advance,
        old: &[Piece],
        full_check: bool,
    ) -> Result<u64, Error> {
        let Some(segment) = crate::log::names::parse_segment_name(name) else {
            // The key files: all their bytes (a slot cut short is written again at open).
            return Ok(file_length(storage, path)?.unwrap_or(0));
        };
        if segment == cursor.segment {
            return Ok(cursor.committed_end);
        }
        if let Some((_, end)) = advanced.segments.iter().find(|(number, _)| *number == segment) {
            return Ok(*end);
        }
        if full_check || old.is_empty() {
            return committed_end_of_segment(storage, self.identity.number, segment);
        }
        Ok(file_extent_shipped(old))
    }

    fn collect<S: Storage>(
        &self,
        storage: &S,
        path: &str,
        plan: FilePlan,
        pieces: &mut Vec<Piece>,
        uploads: &mut Vec<(Piece, Vec<u8>)>,
        superseded: &mut Vec<Piece>,
    ) -> Result<(), Error> {
        for mut piece in plan.pieces {
            if plan.new_ranges.contains(&(piece.start, piece.end)) {
                let bytes = read_range(storage, path, piece.start, piece.length())?;
                piece.digest = replica_piece_digest(&bytes);
                uploads.push((piece.clone(), bytes));
            }
            pieces.push(piece);
        }
        superseded.extend(plan.superseded);
        Ok(())
    }
}

/// Whether every stretch the bucket holds of the file is still what the file holds there.
fn stretches_unchanged<S: Storage>(storage: &S, path: &str, shipped: &[Piece]) -> Result<bool, Error> {
    if shipped.is_empty() {
        return Ok(true);
    }
    let length = file_length(storage, path)?.unwrap_or(0);
    for piece in shipped {
        if piece.end > length
            || replica_piece_digest(&read_range(storage, path, piece.start, piece.length())?) != piece.digest
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Segments in order, then the key table, then the epoch file.
fn file_order(name: &str) -> (u8, u64) {
    match crate::log::names::parse_segment_name(name) {
        Some(segment) => (0, segment),
        None if name == KEY_TABLE_NAME => (1, 0),
        None => (2, 0),
    }
}
