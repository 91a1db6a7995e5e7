//! [`LocalAgent`]: an agent of a store open in this process.

use std::sync::Arc;

use cheesedb_core::{
    AgentEngine, AgentKey, Error, Fingerprint, Hit, Id, Leg, Mode, Node, ReadSet, Removal, Report, SearchPage,
    SearchQuery, StagedBatch, TrustLevel, TrustRules,
};

use super::session::{LocalSession, OpenStaged};
use crate::batch::{Batch, TrackedReads};
use crate::mutex::lock;
use crate::shared::{SharedEngine, SharedStorage, StoreShared};
use crate::verify::verify_on_threads;

/// An agent's engine as one open of it reaches it.
pub(crate) struct LocalAgent<S: SharedStorage> {
    engine: SharedEngine<S>,
    /// The proof its token was checked, which its spaces ask for.
    pub(crate) key: AgentKey,
    pub(crate) store: Arc<StoreShared<S>>,
    session: Arc<LocalSession>,
    trust_rules: Arc<TrustRules>,
}

impl<S: SharedStorage> Clone for LocalAgent<S> {
    fn clone(&self) -> LocalAgent<S> {
        self.engine.compactor.handle_opened();
        LocalAgent {
            engine: self.engine.clone(),
            key: self.key,
            store: self.store.clone(),
            session: self.session.clone(),
            trust_rules: self.trust_rules.clone(),
        }
    }
}

impl<S: SharedStorage> Drop for LocalAgent<S> {
    /// In a process forked from the one that opened the store, the engine must never be dropped:
    /// that would write the snapshot that is due into files the parent goes on writing. One
    /// reference to it is leaked instead, so it lives as long as the child's copy of the memory.
    /// The last handle of the agent also stops its automatic compaction, waiting for the
    /// segment under way.
    fn drop(&mut self) {
        if !self.store.process.is_current() {
            std::mem::forget(self.engine.clone());
            return;
        }
        self.engine.compactor.handle_ended();
    }
}

impl<S: SharedStorage> LocalAgent<S> {
    /// A new open of `engine`, its trust judged by `trust_rules`.
    pub(crate) fn new(
        engine: SharedEngine<S>,
        key: AgentKey,
        store: Arc<StoreShared<S>>,
        trust_rules: Arc<TrustRules>,
    ) -> LocalAgent<S> {
        let session = Arc::new(LocalSession::new(engine.gate.clone(), store.process.clone()));
        engine.compactor.handle_opened();
        LocalAgent { engine, key, store, session, trust_rules }
    }

    /// Runs `action` on the engine, in the process that opened the store only.
    pub(crate) fn with<T>(&self, action: impl FnOnce(&mut AgentEngine<S>) -> Result<T, Error>) -> Result<T, Error> {
        self.store.check_process()?;
        action(&mut *lock(&self.engine.engine)?)
    }

    /// Runs a write once the store is known writable and no staged batch holds the agent; the
    /// process is checked before the gate, which a thread of the parent may hold at a fork.
    fn write<T>(&self, write: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        self.store.check_writable()?;
        self.engine.gate.write(write)
    }

    /// What a handle of this agent to a space keeps of it: the proof of its token, its engine
    /// (its shared nodes are written there), this session's read tracking (what the space shows
    /// is read too) and the trust rules (which judge the space's nodes as they judge its own).
    pub(crate) fn member(&self) -> crate::space::Member<S> {
        crate::space::Member {
            key: self.key,
            engine: self.engine.clone(),
            tracking: self.session.tracking.clone(),
            trust_rules: self.trust_rules.clone(),
        }
    }

    pub(crate) fn space(&self, name: &str) -> Result<crate::Space<S>, Error> {
        crate::space::LocalSpace::open(&self.store, self.member(), name).map(crate::Space::local)
    }

    pub(crate) fn check_same_process(&self) -> Result<(), Error> {
        self.store.check_process()
    }

    pub(crate) fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.write(|| self.engine.add_lot(label, content))
    }

    /// Remembers through the group commit, with what the session read added to `reads`; the
    /// session's reads are forgotten once the memory is written.
    pub(crate) fn remember_tracked(&self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        let session_reads = self.session.tracking.reads();
        let id = match &session_reads {
            None => self.write(|| self.engine.remember_tracked(content, legs, reads))?,
            Some(session) if reads.is_empty() => self.write(|| self.engine.remember_tracked(content, legs, session))?,
            Some(session) => {
                let all: ReadSet = session.ids().iter().chain(reads.ids()).copied().collect();
                self.write(|| self.engine.remember_tracked(content, legs, &all))?
            }
        };
        if let Some(session) = &session_reads {
            self.session.tracking.forget(session);
        }
        Ok(id)
    }

    pub(crate) fn trust_under(&self, id: Id, rules: &TrustRules) -> Result<TrustLevel, Error> {
        self.with(|engine| engine.trust(id, rules))
    }

    pub(crate) fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        self.trust_under(id, &self.trust_rules)
    }

    /// Starts automatic compaction when it is due: after an open and a recall.
    pub(crate) fn compact_if_due(&self) -> Result<(), Error> {
        crate::auto_compaction::start_if_due(&self.engine, &self.store)
    }

    pub(crate) fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        let removed = self.write(|| self.with(|engine| engine.recall(id, mode, removal)))?;
        self.compact_if_due()?;
        Ok(removed)
    }

    pub(crate) fn preview_recall_with(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.with(|engine| engine.preview_recall_with(id, mode, removal))
    }

    pub(crate) fn get(&self, id: Id) -> Result<Node, Error> {
        let node = self.with(|engine| engine.get(id))?;
        self.session.tracking.note_node(&node);
        Ok(node)
    }

    pub(crate) fn audit(&self, id: Id) -> Result<Node, Error> {
        self.with(|engine| engine.audit(id))
    }

    pub(crate) fn name(&self) -> Result<String, Error> {
        let number = self.with(|engine| Ok(engine.agent_number()))?;
        self.store.agent_name(number)
    }

    pub(crate) fn space_name(&self, number: u64) -> Result<String, Error> {
        self.store.check_process()?;
        self.store.catalog()?.space_name(number)
    }

    pub(crate) fn lots(&self) -> Result<Vec<Id>, Error> {
        self.with(|engine| Ok(engine.alive_lots()))
    }

    pub(crate) fn memories(&self) -> Result<Vec<Id>, Error> {
        self.with(|engine| Ok(engine.alive_memories()))
    }

    pub(crate) fn verify(&self, kept: Option<&Fingerprint>) -> Result<Fingerprint, Error> {
        self.with(|engine| verify_on_threads(engine, kept))
    }

    pub(crate) fn compact(&self) -> Result<(), Error> {
        self.write(|| self.with(|engine| engine.compact()))
    }

    pub(crate) fn is_encrypted(&self) -> bool {
        self.engine.encrypted
    }

    /// Still answered after a panic poisoned the handle: the report only describes the past
    /// open, and an empty one would hide a repair. In a forked child, the report as the open
    /// left it (the engine's lock may be held by a thread that does not exist there).
    pub(crate) fn report(&self) -> Report {
        if !self.store.process.is_current() {
            return self.engine.report_at_open.clone();
        }
        let engine = self.engine.engine.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        engine.report()
    }

    pub(crate) fn track_reads(&self, on: bool) -> Result<(), Error> {
        self.store.check_process()?;
        self.session.tracking.set(on);
        Ok(())
    }

    /// One engine batch, with the session's reads given to its memories.
    pub(crate) fn batch<T>(&self, collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>) -> Result<T, Error> {
        let mut tracked = TrackedReads { reads: self.session.tracking.reads(), used: false };
        let value =
            self.write(|| self.with(|engine| engine.batch(|batch| collect(&mut Batch::local(batch, &mut tracked)))))?;
        if let (true, Some(reads)) = (tracked.used, &tracked.reads) {
            self.session.tracking.forget(reads);
        }
        Ok(value)
    }

    /// Opens the session's staged batch now, holding the agent's gate for this thread: waits
    /// while another batch of the agent is open, one of this session opened on another thread
    /// included.
    pub(crate) fn begin_staged(&self) -> Result<(), Error> {
        self.store.check_writable()?;
        let gate = &self.session.gate;
        if self.session.staged().is_some() && gate.held_here() {
            return Err(Error::BatchOpen);
        }
        gate.hold()?;
        // The gate was free, so no batch of this session is open.
        *self.session.staged() = Some(OpenStaged::default());
        Ok(())
    }

    /// One step of the session's staged batch, from any thread; the first opens it.
    pub(crate) fn stage<T>(&self, collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>) -> Result<T, Error> {
        self.store.check_writable()?;
        let mut slot = self.session.staged();
        if slot.is_none() {
            drop(slot);
            self.session.gate.hold()?;
            slot = self.session.staged();
        }
        // Held by this thread now, or by the one that opened the batch this step joins.
        let open = slot.get_or_insert_with(OpenStaged::default);
        let mut tracked = TrackedReads { reads: self.session.tracking.reads(), used: false };
        let outcome =
            self.with(|engine| engine.stage(&mut open.staged, |batch| collect(&mut Batch::local(batch, &mut tracked))));
        if let (true, Some(reads)) = (tracked.used, tracked.reads) {
            open.remembered = true;
            reads.ids().iter().for_each(|id| open.reads_used.note(*id));
        }
        outcome
    }

    /// Writes the session's staged batch, if any, and lets go of the gate.
    pub(crate) fn commit_staged(&self) -> Result<(), Error> {
        self.store.check_process()?;
        let Some(open) = self.session.staged().take() else { return Ok(()) };
        let outcome =
            if open.staged.is_empty() { Ok(()) } else { self.with(|engine| engine.commit_staged(open.staged)) };
        self.session.gate.release();
        outcome?;
        if open.remembered {
            self.session.tracking.forget(&open.reads_used);
        }
        Ok(())
    }

    /// Drops the session's staged batch, if any, and lets go of the gate.
    pub(crate) fn drop_staged(&self) -> Result<(), Error> {
        self.store.check_process()?;
        if self.session.staged().take().is_some() {
            self.session.gate.release();
        }
        Ok(())
    }

    /// A step of a batch the caller holds: an ordinary write at the gate.
    pub(crate) fn stage_into<T>(
        &self,
        staged: &mut StagedBatch,
        collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut tracked = TrackedReads::default();
        self.write(|| self.with(|engine| engine.stage(staged, |batch| collect(&mut Batch::local(batch, &mut tracked)))))
    }

    pub(crate) fn commit_staged_batch(&self, staged: StagedBatch) -> Result<(), Error> {
        self.write(|| self.with(|engine| engine.commit_staged(staged)))
    }

    /// Closes this open: the last handle of the agent takes the snapshot that is due.
    pub(crate) fn close(self) -> Result<(), Error> {
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

    pub(crate) fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        self.found(self.with(|engine| engine.search(query, limit)))
    }

    pub(crate) fn set_vector(&self, id: Id, vector: &[f32]) -> Result<(), Error> {
        self.write(|| self.with(|engine| engine.set_vector(id, vector)))
    }

    pub(crate) fn search_vector(&self, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.found(self.with(|engine| engine.search_vector(vector, limit)))
    }

    pub(crate) fn search_hybrid(&self, query: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.found(self.with(|engine| engine.search_hybrid(query, vector, limit)))
    }

    pub(crate) fn search_page(&self, query: &SearchQuery) -> Result<SearchPage, Error> {
        self.search_page_under(query, &self.trust_rules)
    }

    pub(crate) fn search_page_under(&self, query: &SearchQuery, rules: &TrustRules) -> Result<SearchPage, Error> {
        let page = self.with(|engine| engine.search_page(query, rules))?;
        self.session.tracking.note(page.found.iter().map(|found| found.id));
        Ok(page)
    }

    /// The hits of a search, noted as read.
    fn found(&self, hits: Result<Vec<Hit>, Error>) -> Result<Vec<Hit>, Error> {
        let hits = hits?;
        self.session.tracking.note_hits(&hits);
        Ok(hits)
    }

    pub(crate) fn has_vector(&self, id: Id) -> Result<bool, Error> {
        self.with(|engine| engine.has_vector(id))
    }

    pub(crate) fn search_heap_bytes(&self) -> Result<usize, Error> {
        self.with(|engine| Ok(engine.search_heap_bytes()))
    }

    pub(crate) fn graph_heap_bytes(&self) -> Result<usize, Error> {
        self.with(|engine| Ok(engine.graph_heap_bytes()))
    }
}
