//! `Agent`: a handle to one agent's memory, shared between threads.

use std::sync::Arc;

use cheesedb_core::{
    AgentEngine, Batch, Error, Fingerprint, Hit, Id, Leg, Mode, Node, ReadSet, Removal, Report, SearchPage,
    SearchQuery, StagedBatch, TrustLevel, TrustRules,
};

use crate::files::FileStorage;
use crate::mutex::lock;
use crate::shared::{SharedEngine, SharedStorage, StoreShared};
use crate::verify::verify_on_threads;

/// A handle to one agent, reached only through its token. Clones share one engine; every
/// method takes `&self`, so threads can share a handle. Nothing in it names another agent.
///
/// Dropping the last handle takes the snapshot that is due, if any, and ignores a failure to
/// write it: the log is complete without it, and the next open only replays more. Use
/// [`Agent::close`] to learn of that failure.
///
/// In a process forked from the one that opened the store, every method that can fail fails
/// with `Error::ForkedProcess`, [`Agent::report`] and [`Agent::is_encrypted`] answer from what
/// the open found, and dropping a handle writes nothing (see [`crate::Store`]).
pub struct Agent<S: SharedStorage = FileStorage> {
    engine: SharedEngine<S>,
    store: Arc<StoreShared<S>>,
}

impl<S: SharedStorage> Clone for Agent<S> {
    fn clone(&self) -> Agent<S> {
        Agent { engine: self.engine.clone(), store: self.store.clone() }
    }
}

impl<S: SharedStorage> Drop for Agent<S> {
    /// In a process forked from the one that opened the store, the engine must never be dropped:
    /// that would write the snapshot that is due into files the parent goes on writing. One
    /// reference to it is leaked instead, so it lives as long as the child's copy of the memory.
    fn drop(&mut self) {
        if !self.store.process.is_current() {
            std::mem::forget(self.engine.clone());
        }
    }
}

impl<S: SharedStorage> std::fmt::Debug for Agent<S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Agent").finish_non_exhaustive()
    }
}

impl<S: SharedStorage> Agent<S> {
    pub(crate) fn new(engine: SharedEngine<S>, store: Arc<StoreShared<S>>) -> Agent<S> {
        Agent { engine, store }
    }

    /// Runs `action` on the engine, in the process that opened the store only.
    fn with<T>(&self, action: impl FnOnce(&mut AgentEngine<S>) -> Result<T, Error>) -> Result<T, Error> {
        self.store.check_process()?;
        action(&mut *lock(&self.engine.engine)?)
    }

    /// Fails with `Error::ForkedProcess` when this is not the process that opened the store,
    /// as [`crate::Store::check_same_process`] does.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a process other than the one that opened the store.
    pub fn check_same_process(&self) -> Result<(), Error> {
        self.store.check_process()
    }

    /// Adds a source: a non-empty label and its content. Durable when this returns.
    ///
    /// # Errors
    ///
    /// - `Error::ReadOnly` for a read-only store, `Error::AgentDeleted` once the agent is deleted,
    ///   `Error::Poisoned` after a failed write, `Error::Internal` when a thread panicked holding
    ///   the agent.
    /// - `Error::InvalidName` for an empty label, `Error::LimitExceeded` past a limit: nothing is
    ///   written.
    /// - `Error::OutcomeUnknown` when the write or its sync failed: it may be stored, check
    ///   before retrying. `Error::Io` when the storage failed before any of it was written.
    pub fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.store.check_writable()?;
        self.engine.add_lot(label, content)
    }

    /// Adds a memory learned through `legs`: it lives while at least one leg has all its
    /// parents alive. Refused (and nothing written) without a leg, with an empty leg, or with a
    /// parent that is unknown or recalled. Durable when this returns.
    ///
    /// # Errors
    ///
    /// - `Error::NoLegs`, `Error::EmptyLeg`, `Error::UnknownId` or `Error::DeadParent` for a bad
    ///   leg or parent, `Error::LimitExceeded` past a limit: nothing is written.
    /// - Otherwise as [`Agent::add_lot`].
    pub fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.store.check_writable()?;
        self.engine.remember(content, legs)
    }

    /// Adds a memory learned through `legs` and through everything in `reads` (what a session
    /// read since its previous write): each read id is added to every leg, so a recall of what
    /// was read reaches this memory even though no leg declared it, and [`Node::tracked_parents`]
    /// tells which parents came from tracking. With an empty read set it is
    /// [`Agent::remember`]. `reads` is left as it is: clear it once this succeeded.
    ///
    /// # Errors
    ///
    /// - `Error::LimitExceeded` when the read set, or a leg with it added, would hold more
    ///   parents than a leg may have (nothing is dropped: the write is refused);
    ///   `Error::DeadParent` when a read id was recalled since it was read.
    /// - Otherwise as [`Agent::remember`].
    pub fn remember_tracked(&self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        self.store.check_writable()?;
        self.engine.remember_tracked(content, legs, reads)
    }

    /// How far the lot or memory `id` is to be believed under `rules`: a lot has its label's
    /// level; a memory the best, over its legs, of the worst level among that leg's parents.
    /// For an alive memory only the legs that still hold count; a recalled one is judged over
    /// all its legs. Lot labels are read once, then kept in RAM.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` when no lot or memory has `id`; `Error::Corrupt` or `Error::Io` when
    /// the record of a lot it rests on cannot be read; `Error::AgentDeleted` once the agent is
    /// deleted, `Error::Internal` when a thread panicked holding the agent.
    pub fn trust(&self, id: Id, rules: &TrustRules) -> Result<TrustLevel, Error> {
        self.with(|engine| engine.trust(id, rules))
    }

    /// Recalls `id` and what depended on it (see `Mode`); returns the memories removed because
    /// of it, ascending. With `Removal::Erase` the text is gone from the files when this returns.
    ///
    /// # Errors
    ///
    /// - `Error::UnknownId` when no lot or memory has `id`; `Error::AlreadyRecalled` when it was
    ///   recalled and this recall would change nothing.
    /// - With `Removal::Erase`, `Error::Corrupt` when the log does not match the graph a snapshot
    ///   gave; once the recall is stored, a failed erasure is `Error::OutcomeUnknown` (the next
    ///   open finishes it).
    /// - Otherwise as [`Agent::add_lot`].
    pub fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.store.check_writable()?;
        self.with(|engine| engine.recall(id, mode, removal))
    }

    /// What `recall(id, mode, ..)` would remove, without writing anything.
    ///
    /// # Errors
    ///
    /// As [`Agent::preview_recall_with`].
    pub fn preview_recall(&self, id: Id, mode: Mode) -> Result<Vec<Id>, Error> {
        self.with(|engine| engine.preview_recall(id, mode))
    }

    /// What `recall(id, mode, removal)` would return, or the error it would refuse with,
    /// without writing anything. [`Agent::preview_recall`] is this with `Removal::Untrusted`.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` when no lot or memory has `id`, `Error::AlreadyRecalled` when the recall
    /// would change nothing, `Error::AgentDeleted` once the agent is deleted, `Error::Internal`
    /// when a thread panicked holding the agent.
    pub fn preview_recall_with(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.with(|engine| engine.preview_recall_with(id, mode, removal))
    }

    /// One lot or memory, read from disk and checked against its digest. The content of a
    /// recalled node is withheld (`None`): a recall hides, whether or not its text is still in
    /// the files. See [`Agent::audit`].
    ///
    /// # Errors
    ///
    /// As [`Agent::audit`].
    pub fn get(&self, id: Id) -> Result<Node, Error> {
        self.with(|engine| engine.get(id))
    }

    /// Like [`Agent::get`], and also returns the content of a recalled node while its text is
    /// still in the files (an Untrusted recall before compaction). For a person checking what
    /// was recalled; never hand it to a model.
    ///
    /// # Errors
    ///
    /// - `Error::UnknownId` when no lot or memory has `id`.
    /// - `Error::Corrupt` when its record fails a check; `Error::Io` when it cannot be read.
    /// - `Error::AgentDeleted` once the agent is deleted, `Error::Internal` when a thread panicked
    ///   holding the agent.
    pub fn audit(&self, id: Id) -> Result<Node, Error> {
        self.with(|engine| engine.audit(id))
    }

    /// The name this agent was created with.
    ///
    /// # Errors
    ///
    /// `Error::AgentDeleted` once the agent is deleted, `Error::Internal` when a thread panicked
    /// holding the agent.
    pub fn name(&self) -> Result<String, Error> {
        let number = self.with(|engine| Ok(engine.agent_number()))?;
        self.store.agent_name(number)
    }

    /// The alive lots, ascending.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the agent.
    pub fn lots(&self) -> Result<Vec<Id>, Error> {
        self.with(|engine| Ok(engine.alive_lots()))
    }

    /// The alive memories, ascending.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the agent.
    pub fn memories(&self) -> Result<Vec<Id>, Error> {
        self.with(|engine| Ok(engine.alive_memories()))
    }

    /// Re-reads and checks the whole history; returns its head fingerprint. The segments are
    /// checked on as many threads as the machine has cores; the result, and the error for a
    /// damaged log, are those of a check in one pass.
    ///
    /// # Errors
    ///
    /// `Error::Corrupt` for the first damage in log order, `Error::Io` when a segment cannot be
    /// read, `Error::AgentDeleted` once the agent is deleted, `Error::Internal` when a thread
    /// panicked holding the agent.
    pub fn verify(&self) -> Result<Fingerprint, Error> {
        self.with(|engine| verify_on_threads(engine, None))
    }

    /// Like [`Agent::verify`], and checks the history still passes through `kept`.
    ///
    /// # Errors
    ///
    /// As [`Agent::verify`], and `Error::HistoryMismatch` when the history does not pass through
    /// `kept`.
    pub fn verify_extends(&self, kept: &Fingerprint) -> Result<Fingerprint, Error> {
        self.with(|engine| verify_on_threads(engine, Some(kept)))
    }

    /// Rewrites the files without the text of recalled nodes.
    ///
    /// # Errors
    ///
    /// - `Error::ReadOnly` for a read-only store, `Error::AgentDeleted` once the agent is deleted,
    ///   `Error::Poisoned` after a failed write, `Error::Internal` when a thread panicked holding
    ///   the agent.
    /// - `Error::Corrupt` when a segment to rewrite fails a check; `Error::Io` when the storage
    ///   fails before a segment was replaced, `Error::OutcomeUnknown` once one may be. Each of
    ///   these poisons the agent until it is reopened.
    pub fn compact(&self) -> Result<(), Error> {
        self.store.check_writable()?;
        self.with(|engine| engine.compact())
    }

    /// Whether the agent is encrypted (made by [`crate::Store::create_encrypted_agent`]).
    #[must_use]
    pub fn is_encrypted(&self) -> bool {
        self.engine.encrypted
    }

    /// What opening this agent found and did. Still answered after a panic poisoned the
    /// handle: the report only describes the past open, and an empty one would hide a repair.
    /// In a process forked from the one that opened the store, the report as the open left it
    /// (the engine's lock may be held by a thread that does not exist there).
    #[must_use]
    pub fn report(&self) -> Report {
        if !self.store.process.is_current() {
            return self.engine.report_at_open.clone();
        }
        let engine = self.engine.engine.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        engine.report()
    }

    /// All writes made through the batch commit together with one sync, or none do.
    ///
    /// # Errors
    ///
    /// - The error `collect` returns, or `Error::LimitExceeded` when the batch is too large as
    ///   written: nothing is written.
    /// - Otherwise as [`Agent::add_lot`].
    pub fn batch<T>(&self, collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>) -> Result<T, Error> {
        self.store.check_writable()?;
        self.with(|engine| engine.batch(collect))
    }

    /// Runs one step of a batch that stays open between calls (for callers that cannot pass
    /// one closure to [`Agent::batch`]): `collect` works on a batch holding the writes of
    /// `staged`, which keeps what it adds. The ids handed out are final as long as nothing
    /// else writes to this agent before [`Agent::commit_staged`]; keep other writers out
    /// meanwhile.
    ///
    /// # Errors
    ///
    /// `Error::BatchConflict` when another write reached the agent since the first step; the
    /// error `collect` returns; otherwise as [`Agent::add_lot`] before anything is written.
    pub fn stage<T>(
        &self,
        staged: &mut StagedBatch,
        collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.store.check_writable()?;
        self.with(|engine| engine.stage(staged, collect))
    }

    /// Writes a staged batch: one commit, one sync, all or nothing. Every write is checked
    /// again against the agent as it is now.
    ///
    /// # Errors
    ///
    /// `Error::BatchConflict` when another write reached the agent since the first step; a
    /// check the writes no longer pass (`Error::DeadParent` after a recall, say); otherwise as
    /// [`Agent::batch`].
    pub fn commit_staged(&self, staged: StagedBatch) -> Result<(), Error> {
        self.store.check_writable()?;
        self.with(|engine| engine.commit_staged(staged))
    }

    /// Closes this handle. When it is the last handle of its agent, the snapshot that is due
    /// is taken now and a failure to write it is returned (dropping the handle instead does
    /// the same but ignores that failure). A read-only store writes nothing.
    ///
    /// # Errors
    ///
    /// `Error::Io` or `Error::OutcomeUnknown` when writing the snapshot fails; `Error::Poisoned`
    /// when a thread panicked holding the agent; `Error::ForkedProcess` in a process forked
    /// from the one that opened the store, where nothing is written.
    pub fn close(self) -> Result<(), Error> {
        self.store.check_process()?;
        if self.store.read_only.is_some() {
            return Ok(());
        }
        let (engine, store) = (self.engine.clone(), self.store.clone());
        drop(self);
        let outcome = match Arc::try_unwrap(engine) {
            Ok(shared) => shared.into_engine()?.close(),
            // Another handle of this agent is still open: the snapshot waits for the last one.
            Err(_other_handles) => Ok(()),
        };
        // The folder stays locked until the snapshot is written.
        drop(store);
        outcome
    }

    /// Lots and memories whose content holds words of `query`, best first by BM25 (k1 1.2,
    /// b 0.75), ties by ascending id, at most `limit`. Words are split on Unicode word
    /// boundaries and lower-cased; a hit holds at least one word of the query; an empty query
    /// or a `limit` of 0 finds nothing. Recalled lots and memories are never found, from the
    /// moment their recall returns.
    ///
    /// The index lives in RAM, derived from the log: the first search after open builds it
    /// with one read of the agent's files, later writes and recalls keep it in step.
    ///
    /// # Errors
    ///
    /// `Error::Io` or `Error::Corrupt` if the log cannot be read to build the index;
    /// `Error::AgentDeleted`; `Error::Poisoned` after a panic while the agent was in use.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        self.with(|engine| engine.search(query, limit))
    }

    /// Attaches `vector` (an embedding the caller computed) to the alive lot or memory `id`,
    /// replacing any vector it had. Durable when this returns. An agent's alive vectors share
    /// one dimension: that of the first, until none is left.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId`, `Error::AlreadyRecalled` for an id that is not alive;
    /// `Error::InvalidVector` for an empty vector, a number that is not finite, all zeros or
    /// another dimension; `Error::LimitExceeded` past `limits::VECTOR_DIMENSION_MAX` numbers;
    /// the errors of any write (`Error::Io`, `Error::OutcomeUnknown`, `Error::Poisoned`,
    /// `Error::ReadOnly`).
    pub fn set_vector(&self, id: Id, vector: &[f32]) -> Result<(), Error> {
        self.store.check_writable()?;
        self.with(|engine| engine.set_vector(id, vector))
    }

    /// Alive lots and memories with a vector, best first by the cosine of their vector and
    /// `vector`, computed exactly for every one (the score is the cosine), ties by ascending id.
    /// An agent without vectors finds nothing.
    ///
    /// # Errors
    ///
    /// `Error::InvalidVector` or `Error::LimitExceeded` for a vector that cannot be compared
    /// (as for [`Agent::set_vector`]); otherwise as for [`Agent::search`].
    pub fn search_vector(&self, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.with(|engine| engine.search_vector(vector, limit))
    }

    /// Keyword and vector search fused by reciprocal rank fusion (k = 60): a node scores the
    /// sum of 1 / (60 + its rank) over the two rankings, each cut at its best
    /// `max(limit, 100)`.
    ///
    /// # Errors
    ///
    /// As for [`Agent::search_vector`].
    pub fn search_hybrid(&self, query: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.with(|engine| engine.search_hybrid(query, vector, limit))
    }

    /// Whether the alive lot or memory `id` has a vector.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` or `Error::AlreadyRecalled` for an id that is not alive; otherwise
    /// as for [`Agent::search`].
    pub fn has_vector(&self, id: Id) -> Result<bool, Error> {
        self.with(|engine| engine.has_vector(id))
    }

    /// One page of hits with what a caller shows of each, in one call: the best `query.limit`
    /// alive lots and memories, each with its score, kind (a lot's label, a memory's tracked
    /// parents), content, trust level under `rules` (as [`Agent::trust`] judges it) and whether
    /// it has a vector.
    ///
    /// By words as [`Agent::search`] ranks them; with `query.vector`, by words and vector
    /// fused as [`Agent::search_hybrid`] fuses them, or by words when the vector cannot be
    /// compared with the agent's, which [`Ranking::KeywordInstead`](crate::Ranking) says with
    /// the reason. Hits below `query.least_trust` or outside `query.among` are passed over while
    /// the ranking is collected, so the page is full whenever enough hits match, however many
    /// better-ranked ones were passed over. A recalled lot or memory is never found.
    ///
    /// ```
    /// # fn main() -> Result<(), cheesedb::Error> {
    /// use cheesedb::{Leg, SearchQuery, TrustLevel, TrustRules};
    ///
    /// # let folder = tempfile::tempdir().unwrap();
    /// let store = cheesedb::Store::open(folder.path())?;
    /// let alice = store.open_agent(&store.create_agent("alice")?)?;
    /// let web = alice.add_lot("web_page", b"rain in Pune all week")?;
    /// let user = alice.add_lot("user_message", b"it will rain, take the bus")?;
    /// let rules = TrustRules::new().with("web_page", TrustLevel::Low);
    /// let page = alice.search_page(&SearchQuery::new("rain", 10).least_trust(TrustLevel::Normal), &rules)?;
    /// assert_eq!(page.found.len(), 1);
    /// assert_eq!((page.found[0].id, page.found[0].label()), (user, Some("user_message")));
    /// # let _ = web;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Agent::search`]; `Error::Corrupt` or `Error::Io` when the record of a hit, or of a
    /// lot a hit's trust rests on, cannot be read.
    pub fn search_page(&self, query: &SearchQuery, rules: &TrustRules) -> Result<SearchPage, Error> {
        self.with(|engine| engine.search_page(query, rules))
    }

    /// Bytes of RAM held by this agent's search index (0 until the first search builds it).
    ///
    /// # Errors
    ///
    /// `Error::Poisoned` after a panic while the agent was in use.
    pub fn search_heap_bytes(&self) -> Result<usize, Error> {
        self.with(|engine| Ok(engine.search_heap_bytes()))
    }

    /// Bytes of RAM held by this agent's recall graph.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the agent.
    pub fn graph_heap_bytes(&self) -> Result<usize, Error> {
        self.with(|engine| Ok(engine.graph_heap_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    #[test]
    fn report_survives_a_poisoned_lock() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(folder.path()).unwrap();
        let token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        let before = alice.report();
        assert_ne!(before, Report::default(), "an open agent has at least one segment");
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = alice.with(|_| -> Result<(), Error> { panic!("a panic while holding the engine") });
        }));
        assert!(panicked.is_err());
        assert_eq!(alice.lots(), Err(crate::mutex::LOCK_POISONED));
        assert_eq!(alice.report(), before);
    }

    /// Opens a store whose agents snapshot at every close, with one agent that wrote a lot,
    /// and puts a folder where the snapshot's temporary file goes, so that writing it fails.
    fn agent_whose_snapshot_fails(folder: &std::path::Path) -> (Store, Agent) {
        let options = cheesedb_core::Options::default().snapshot_after_bytes(1);
        let store = Store::builder(folder).options(options).open().unwrap();
        let token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        alice.add_lot("note", b"hello").unwrap();
        let agent_folder = std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("agent-")))
            .unwrap();
        std::fs::create_dir(agent_folder.join("snapshot.tmp")).unwrap();
        (store, alice)
    }

    #[test]
    fn close_returns_the_failure_to_write_the_snapshot() {
        let folder = tempfile::tempdir().unwrap();
        let (_store, alice) = agent_whose_snapshot_fails(folder.path());
        let result = alice.close();
        assert!(matches!(result, Err(Error::Io { .. })), "close gave {result:?}");
    }

    /// The folder of the only agent of the store in `folder`.
    fn agent_folder(folder: &std::path::Path) -> std::path::PathBuf {
        std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("agent-")))
            .unwrap()
    }

    fn is_forked_process(result: Result<impl std::fmt::Debug, Error>) -> bool {
        matches!(
            result,
            Err(Error::ForkedProcess { opening_process_id, current_process_id })
                if current_process_id == std::process::id() && opening_process_id != current_process_id
        )
    }

    /// Real forks are in the Python tests (the workspace forbids the code a fork needs here):
    /// this stands in for a child by changing the opening process the store remembers.
    #[test]
    fn a_forked_process_is_refused_every_call_and_its_drops_write_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let options = cheesedb_core::Options::default().snapshot_after_bytes(1);
        let store = Store::builder(folder.path()).options(options).open().unwrap();
        let token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        let lot = alice.add_lot("note", b"the parent's lot").unwrap();
        let report = alice.report();
        let snapshot = agent_folder(folder.path()).join("snapshot");

        store.shared.process.pretend_opened_by(std::process::id().wrapping_add(1));
        assert!(is_forked_process(alice.check_same_process()));
        assert!(is_forked_process(store.check_same_process()));
        assert!(is_forked_process(alice.add_lot("note", b"the child's lot")));
        assert!(is_forked_process(alice.remember(b"the child's memory", &[Leg::from([lot])])));
        assert!(is_forked_process(alice.batch(|batch| batch.add_lot("note", b"batched"))));
        let mut staged = StagedBatch::default();
        assert!(is_forked_process(alice.stage(&mut staged, |batch| batch.add_lot("note", b"staged"))));
        assert!(is_forked_process(alice.commit_staged(staged)));
        assert!(is_forked_process(alice.recall(lot, Mode::Fair, Removal::Erase)));
        assert!(is_forked_process(alice.set_vector(lot, &[1.0])));
        assert!(is_forked_process(alice.compact()));
        assert!(is_forked_process(alice.get(lot)));
        assert!(is_forked_process(alice.lots()));
        assert!(is_forked_process(alice.search("lot", 10)));
        assert!(is_forked_process(alice.verify()));
        assert!(is_forked_process(alice.name()));
        assert!(is_forked_process(store.create_agent("bob")));
        assert!(is_forked_process(store.open_agent(&token)));
        assert!(is_forked_process(store.agent_names()));
        assert!(is_forked_process(store.delete_agent("alice")));
        assert_eq!(alice.report(), report, "a child is told what the open found, without the engine's lock");
        assert!(!alice.is_encrypted());
        // The snapshot due at the last handle's close or drop is never written by a child.
        assert!(is_forked_process(alice.clone().close()));
        drop(alice);
        assert!(!snapshot.exists(), "a forked process wrote a snapshot");

        // The parent's store goes on as if the child had never been.
        store.shared.process.pretend_opened_by(std::process::id());
        let alice = store.open_agent(&token).unwrap();
        assert_eq!(alice.lots(), Ok(vec![lot]));
        assert_eq!(alice.get(lot).unwrap().content(), Some(&b"the parent's lot"[..]));
        assert_eq!(alice.add_lot("note", b"the parent's second lot").map(Id::get), Ok(2));
    }

    #[test]
    fn close_waits_for_the_last_handle() {
        let folder = tempfile::tempdir().unwrap();
        let (_store, alice) = agent_whose_snapshot_fails(folder.path());
        let other = alice.clone();
        assert_eq!(alice.close(), Ok(()));
        assert!(other.close().is_err());
    }
}
