//! The engine of one agent: its graph in RAM and its log on disk, kept in step.
//!
//! Every method that changes anything first writes it durably (records, then a commit marker,
//! then a sync), and only then changes the graph, so RAM never runs ahead of the disk.

mod active_log;
mod append;
mod batch;
mod encrypted_copy;
mod files;
mod key_erase;
mod keyless_verify;
mod open;
mod read;
mod read_tracking;
mod recall;
mod redact;
mod replay;
mod rewrite;
mod sealed_append;
mod sealed_open;
mod sealed_verify;
mod sealing;
mod search;
mod segment_files;
mod shared_nodes;
mod snapshot;
pub(crate) mod space_ledger;
mod space_log;
mod trust;
pub mod verify;

use alloc::string::String;
use alloc::vec::Vec;

pub use batch::{Batch, StagedBatch, Write};
pub(crate) use files::read_all;
pub(crate) use keyless_verify::verify_files_without_token;
pub use search::build as search_build;

use crate::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::digest::chain_genesis;
use crate::engine::space_ledger::SpaceLedger;
use crate::error::Error;
use crate::error_facts::{Limit, StorageOperation};
use crate::graph::{Graph, Kind};
use crate::id::Id;
use crate::limits::Options;
use crate::log::names::{agent_folder, segment_path};
use crate::report::Report;
use crate::seal::AgentSecrets;
use crate::storage::{Storage, StorageFile};
use crate::storage_error::{StorageError, StorageErrorKind};
use active_log::ActiveLog;
use segment_files::SegmentFiles;

/// One agent's memory: the recall graph and the durable log behind it.
pub struct AgentEngine<S: Storage> {
    storage: S,
    agent: u64,
    folder: String,
    options: Options,
    graph: Graph,
    /// The segment files held open: the active one, and a few sealed ones read recently.
    segments: SegmentFiles<S::File>,
    /// The tail of the active log and whether it may still be written: its one owner.
    log: ActiveLog,
    deleted: bool,
    report: Report,
    /// Log bytes written or replayed since the snapshot point.
    bytes_since_snapshot: u64,
    /// An Erase changed flags the snapshot holds: the next close or seal saves a fresh one.
    snapshot_stale: bool,
    /// Open found the snapshot's name holding something that is not a plain file (a folder, a
    /// link): it is left where it is, so no snapshot is saved over it or removed in its place.
    snapshot_name_taken: bool,
    /// The graph came from a snapshot and was not yet checked against the log: it must be before
    /// anything destructive is computed from it.
    graph_unconfirmed: bool,
    /// The search index, built from the log when first needed after open, then kept in step.
    search: Option<search::SearchIndex>,
    /// What builds the search index, when not the engine's own pass over the segments.
    search_builder: Option<search_build::SearchIndexBuilder<S>>,
    /// Lot labels read for trust levels, kept since a label never changes.
    lot_labels: trust::LotLabels,
    /// An encrypted agent's keys; `None` for a plaintext agent.
    sealing: Option<sealing::Sealing<S::File>>,
    /// The sequence of the last recall with Erase that open replayed from the log.
    last_erase_sequence_replayed: Option<u64>,
    /// Erases and compactions begun by this engine: each may change bytes already written.
    rewrites: u64,
    /// A space's members and the author of each node; `None` for an agent's own log.
    space: Option<SpaceLedger>,
    /// The member whose call is being written now, in a space: its records name it.
    author: Option<u64>,
    /// In a space, the author of each entry of the write under way when its members differ (a
    /// group of several members' writes); empty otherwise.
    entry_authors: Vec<u64>,
    /// The agent's nodes that stand for nodes of spaces.
    shared: shared_nodes::SharedNodes,
}

impl<S: Storage> core::fmt::Debug for AgentEngine<S> {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter
            .debug_struct("AgentEngine")
            .field("agent", &self.agent)
            .field("nodes", &self.graph.len())
            .field("segments", &self.segments.count())
            .field("poisoned", &self.log.is_poisoned())
            .finish_non_exhaustive()
    }
}

/// A segment just created, durable, holding only its header and its write margin.
struct StartedSegment<F> {
    number: u64,
    file: F,
    write_margin_bytes: u64,
}

/// Wraps a backend error with what the engine was doing and where.
pub(crate) fn io_error(operation: StorageOperation, path: &str, error: impl StorageError) -> Error {
    Error::from_storage(operation, path, error)
}

/// A storage failure the engine found itself, with no backend error behind it: the disk
/// answered without an error, but not as it promised (a read back shows other bytes).
#[derive(Debug)]
pub(crate) struct StorageMisbehaved(pub(crate) &'static str);

impl core::fmt::Display for StorageMisbehaved {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.write_str(self.0)
    }
}

impl core::error::Error for StorageMisbehaved {}

impl StorageError for StorageMisbehaved {
    fn kind(&self) -> StorageErrorKind {
        StorageErrorKind::Other
    }
}

/// The error of a file or span too long to read into memory at once on this machine.
pub(crate) fn too_large_to_read(length_bytes: u64) -> Error {
    Error::LimitExceeded {
        what: Limit::ReadIntoMemoryBytes,
        size: length_bytes,
        limit: u64::try_from(usize::MAX).unwrap_or(u64::MAX),
    }
}

/// The error of a write whose bytes may already be on the disk: a storage failure becomes
/// `OutcomeUnknown`, so the caller never takes it for a refusal; other errors stay as they are.
pub(crate) fn outcome_unknown(error: Error) -> Error {
    match error {
        Error::Io { operation, path, kind, source } => Error::OutcomeUnknown { operation, path, kind, source },
        other => other,
    }
}

impl<S: Storage> AgentEngine<S> {
    /// An engine for agent `agent` with nothing loaded yet. It starts poisoned: not fit to
    /// write until create or open has finished, so that dropping a half-opened engine (open
    /// failed) never saves a snapshot of a half-replayed graph.
    fn empty(storage: S, agent: u64, options: Options) -> Result<AgentEngine<S>, Error> {
        options.validate()?;
        Ok(AgentEngine {
            storage,
            agent,
            folder: agent_folder(agent),
            options,
            graph: Graph::default(),
            segments: SegmentFiles::default(),
            log: ActiveLog::new(chain_genesis(agent)),
            deleted: false,
            report: Report::default(),
            bytes_since_snapshot: 0,
            snapshot_stale: false,
            snapshot_name_taken: false,
            graph_unconfirmed: false,
            search: None,
            search_builder: None,
            lot_labels: trust::LotLabels::default(),
            sealing: None,
            last_erase_sequence_replayed: None,
            rewrites: 0,
            space: None,
            author: None,
            entry_authors: Vec::new(),
            shared: shared_nodes::SharedNodes::default(),
        })
    }

    /// Makes the folder and first segment of a new agent, durably.
    ///
    /// # Errors
    ///
    /// `Error::LimitExceeded` when `options` are out of range; `Error::Io` when the storage
    /// fails.
    pub fn create(storage: S, agent: u64, options: Options) -> Result<AgentEngine<S>, Error> {
        AgentEngine::create_with(storage, agent, options, None)
    }

    /// Makes the folder, first segment and key files of a new encrypted agent, durably: its
    /// contents are sealed under keys that only `secrets` (made from its token) unlock.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::create`].
    pub fn create_encrypted(
        storage: S,
        agent: u64,
        options: Options,
        secrets: AgentSecrets,
    ) -> Result<AgentEngine<S>, Error> {
        AgentEngine::create_with(storage, agent, options, Some(secrets))
    }

    fn create_with(
        storage: S,
        agent: u64,
        options: Options,
        secrets: Option<AgentSecrets>,
    ) -> Result<AgentEngine<S>, Error> {
        let mut engine = AgentEngine::empty(storage, agent, options)?;
        let folder = engine.folder.clone();
        engine.storage.create_folder(&folder).map_err(|error| io_error(StorageOperation::Creating, &folder, error))?;
        engine.storage.sync_folder("").map_err(|error| io_error(StorageOperation::Syncing, "", error))?;
        if let Some(secrets) = secrets {
            // Made before the first segment, whose folder sync makes them durable with it.
            engine.sealing = Some(sealing::Sealing::create(&engine.storage, &folder, agent, secrets, 1)?);
        }
        engine.start_segment(1)?;
        engine.log.open_for_writes();
        engine.report.segments = 1;
        Ok(engine)
    }

    /// Creates segment `number` with its header, durably, and makes it the active one.
    fn start_segment(&mut self, number: u64) -> Result<(), Error> {
        let started = self.create_segment_file(number)?;
        self.make_active(started);
        Ok(())
    }

    /// Makes a segment just created the active one.
    fn make_active(&mut self, started: StartedSegment<S::File>) {
        self.log.start_segment(started.write_margin_bytes);
        self.segments.start(started.number, started.file);
    }

    /// Creates segment `number` holding only its header, which starts where the log ends now,
    /// and the zeros of its write margin, durably (file and folder entry). The margin is half
    /// the zeros written ahead: with none written ahead, the segment promises none.
    fn create_segment_file(&self, number: u64) -> Result<StartedSegment<S::File>, Error> {
        let path = segment_path(&self.folder, number);
        let write_margin_bytes = u32::try_from(self.options.preallocate_bytes / 2).unwrap_or(u32::MAX);
        let mut bytes = SegmentHeader {
            agent: self.agent,
            segment: number,
            sequence_before: self.log.sequence(),
            chain_before: self.log.chain(),
        }
        .encode_with_write_margin(write_margin_bytes);
        bytes.resize(SEGMENT_HEADER_BYTES + write_margin_bytes as usize, 0);
        let mut file =
            self.storage.open_file(&path, true).map_err(|error| io_error(StorageOperation::Creating, &path, error))?;
        let written = file.set_len(0).and_then(|()| file.write_at(0, &bytes)).and_then(|()| file.sync());
        written.map_err(|error| io_error(StorageOperation::Writing, &path, error))?;
        self.storage
            .sync_folder(&self.folder)
            .map_err(|error| io_error(StorageOperation::Syncing, &self.folder, error))?;
        Ok(StartedSegment { number, file, write_margin_bytes: u64::from(write_margin_bytes) })
    }

    /// The agent's number in the store.
    #[must_use]
    pub fn agent_number(&self) -> u64 {
        self.agent
    }

    /// What opening this agent found and did, and its text left for compaction now.
    #[must_use]
    pub fn report(&self) -> Report {
        Report { segments: self.segments.count(), dead_text_nodes: self.dead_text_nodes(), ..self.report.clone() }
    }

    /// Alive lots, ascending.
    #[must_use]
    pub fn alive_lots(&self) -> Vec<Id> {
        self.graph.alive(Kind::Lot).map(Id::from).collect()
    }

    /// Alive memories, ascending.
    #[must_use]
    pub fn alive_memories(&self) -> Vec<Id> {
        self.graph.alive(Kind::Memory).map(Id::from).collect()
    }

    /// How many lots and memories were ever added (alive or not).
    #[must_use]
    pub fn node_count(&self) -> u64 {
        self.graph.len()
    }

    /// Bytes of RAM held by the recall graph.
    #[must_use]
    pub fn graph_heap_bytes(&self) -> usize {
        self.graph.heap_bytes()
    }

    /// How many Erases and compactions this engine began: each may have changed bytes already
    /// written to the files, which a copy of them (a replica) must then take again.
    #[must_use]
    pub fn rewrite_count(&self) -> u64 {
        self.rewrites
    }

    /// Counts an operation that may change bytes already written.
    pub(crate) fn count_rewrite(&mut self) {
        self.rewrites += 1;
    }

    /// Refuses every later write: the agent was deleted from the store.
    pub fn mark_deleted(&mut self) {
        self.deleted = true;
    }

    /// Whether the agent's contents are sealed (an encrypted agent).
    #[must_use]
    pub fn is_encrypted(&self) -> bool {
        self.sealing.is_some()
    }

    /// Whether a failed write or sync stopped this engine.
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.log.is_poisoned()
    }

    fn check_writable(&self) -> Result<(), Error> {
        if self.deleted {
            return Err(Error::AgentDeleted);
        }
        if self.log.is_poisoned() {
            return Err(Error::Poisoned);
        }
        Ok(())
    }

    fn check_readable(&self) -> Result<(), Error> {
        if self.deleted {
            return Err(Error::AgentDeleted);
        }
        Ok(())
    }

    /// How many segment files this engine holds open now: never more than one active file and
    /// [`SEALED_FILES_OPEN_MAX`](crate::limits::SEALED_FILES_OPEN_MAX) sealed ones, however many
    /// segments the agent has.
    #[must_use]
    pub fn open_segment_files(&self) -> usize {
        self.segments.open_count()
    }

    fn active_segment(&self) -> u64 {
        self.segments.count()
    }
}
