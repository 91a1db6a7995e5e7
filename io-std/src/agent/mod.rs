//! [`Agent`]: a handle to one agent's memory, whether its store is open in this process or
//! served by a memory server, shared between threads.

mod local;
mod served;
mod session;

use cheesedb_core::{
    Error, Fingerprint, Hit, Id, Leg, LocalOperation, Mode, Node, ReadSet, Removal, Report, SearchPage, SearchQuery,
    StagedBatch, TrustLevel, TrustRules,
};

pub(crate) use local::LocalAgent;
pub(crate) use served::ServedAgent;

use crate::batch::Batch;
use crate::files::FileStorage;
use crate::shared::{SharedStorage, StoreShared};
use std::sync::Arc;

/// A handle to one agent, reached only through its token. Nothing in it names another agent.
///
/// One type whether the agent's store is open in this process ([`crate::Store::open`]) or held
/// by a memory server (`cheesedb serve`, reached with [`crate::Store::connect`]): the methods,
/// their answers and their errors are the same. Through a server each call is one request, and
/// may also fail with the errors of a connection (`Error::ConnectionLost`, `Error::FrameTooLarge`,
/// ...); a server that answers writes only once they are shipped to an object store
/// (`--wait-for-ship`) answers a write it stored but could not ship with
/// `Error::StoredNotShipped`, carrying the id the write was given. The few operations a server
/// does not offer fail there with `Error::NeedsLocalStore` and send nothing; each says so.
///
/// Clones share one session: the agent's engine (in this process) or connection (to a
/// server), the read tracking ([`Agent::track_reads`]) and the staged batch ([`Agent::stage`]).
/// Every method takes `&self`, so threads can share a handle; another [`crate::Store::open_agent`]
/// of the same agent is another session, sharing the engine.
///
/// Dropping the last handle of a local agent takes the snapshot that is due, if any, and ignores
/// a failure to write it: the log is complete without it, and the next open only replays more.
/// Use [`Agent::close`] to learn of that failure.
///
/// In a process forked from the one that opened the store (or connected), every method that can
/// fail fails with `Error::ForkedProcess` and sends nothing, [`Agent::report`] and
/// [`Agent::is_encrypted`] answer from what the open found, and dropping a handle writes nothing
/// (see [`crate::Store`]).
pub struct Agent<S: SharedStorage = FileStorage> {
    reach: Reach<S>,
}

/// Where the agent is.
enum Reach<S: SharedStorage> {
    /// Its store is open in this process.
    Local(LocalAgent<S>),
    /// A memory server holds its store.
    Served(ServedAgent),
}

impl<S: SharedStorage> Clone for Agent<S> {
    fn clone(&self) -> Agent<S> {
        let reach = match &self.reach {
            Reach::Local(agent) => Reach::Local(agent.clone()),
            Reach::Served(agent) => Reach::Served(agent.clone()),
        };
        Agent { reach }
    }
}

impl<S: SharedStorage> std::fmt::Debug for Agent<S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Agent").field("served", &self.is_served()).finish_non_exhaustive()
    }
}

/// Calls the method of the same name on either kind of agent.
macro_rules! either {
    ($agent:expr, $method:ident($($argument:expr),*)) => {
        match &$agent.reach {
            Reach::Local(agent) => agent.$method($($argument),*),
            Reach::Served(agent) => agent.$method($($argument),*),
        }
    };
}

impl<S: SharedStorage> Agent<S> {
    pub(crate) fn local(agent: LocalAgent<S>) -> Agent<S> {
        Agent { reach: Reach::Local(agent) }
    }

    pub(crate) fn served(agent: ServedAgent) -> Agent<S> {
        Agent { reach: Reach::Served(agent) }
    }

    /// The agent in this process, for what only a local store offers.
    fn in_process(&self, operation: LocalOperation) -> Result<&LocalAgent<S>, Error> {
        match &self.reach {
            Reach::Local(agent) => Ok(agent),
            Reach::Served(_) => Err(Error::NeedsLocalStore { operation }),
        }
    }

    /// Whether a memory server holds the agent's store (the handle came from a store made by
    /// [`crate::Store::connect`]).
    #[must_use]
    pub fn is_served(&self) -> bool {
        matches!(self.reach, Reach::Served(_))
    }

    /// Fails with `Error::ForkedProcess` when this is not the process that opened the store
    /// (or connected), as [`crate::Store::check_same_process`] does.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a process other than the one that opened the handle.
    pub fn check_same_process(&self) -> Result<(), Error> {
        either!(self, check_same_process())
    }

    /// Adds a source: a non-empty label and its content. Durable when this returns. Waits while
    /// a staged batch of another thread holds the agent.
    ///
    /// # Errors
    ///
    /// - `Error::ReadOnly` for a read-only store, `Error::AgentDeleted` once the agent is deleted,
    ///   `Error::Poisoned` after a failed write, `Error::Internal` when a thread panicked holding
    ///   the agent.
    /// - `Error::BatchOpen` when a staged batch of this agent is open on this thread.
    /// - `Error::InvalidName` for an empty label, `Error::LimitExceeded` past a limit: nothing is
    ///   written.
    /// - `Error::OutcomeUnknown` when the write or its sync failed: it may be stored, check
    ///   before retrying. `Error::Io` when the storage failed before any of it was written.
    /// - Through a server, the errors of a connection: `Error::ConnectionLost` with
    ///   `write_in_flight` when it broke before the answer (the lot may be stored).
    pub fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        either!(self, add_lot(label, content))
    }

    /// Adds a memory learned through `legs`: it lives while at least one leg has all its
    /// parents alive. Refused (and nothing written) without a leg, with an empty leg, or with a
    /// parent that is unknown or recalled. Durable when this returns. With read tracking on,
    /// what the handle read since its previous memory is added to each leg, and forgotten once
    /// the memory is stored.
    ///
    /// # Errors
    ///
    /// - `Error::NoLegs`, `Error::EmptyLeg`, `Error::UnknownId` or `Error::DeadParent` for a bad
    ///   leg or parent, `Error::LimitExceeded` past a limit: nothing is written.
    /// - With tracking, `Error::LimitExceeded` when the reads would pass the limit on parents
    ///   and `Error::DeadParent` for a read recalled since; the reads are kept.
    /// - Otherwise as [`Agent::add_lot`].
    pub fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.remember_tracked(content, legs, &ReadSet::new())
    }

    /// Adds a memory learned through `legs` and through everything in `reads` (what a session
    /// read since its previous write, kept by the caller): each read id is added to every leg,
    /// so a recall of what was read reaches this memory even though no leg declared it, and
    /// [`Node::tracked_parents`] tells which parents came from tracking. When the handle tracks
    /// reads itself, its own are added too. With an empty read set it is [`Agent::remember`].
    /// `reads` is left as it is: clear it once this succeeded.
    ///
    /// # Errors
    ///
    /// - `Error::LimitExceeded` when the read set, or a leg with it added, would hold more
    ///   parents than a leg may have (nothing is dropped: the write is refused);
    ///   `Error::DeadParent` when a read id was recalled since it was read.
    /// - Otherwise as [`Agent::remember`].
    pub fn remember_tracked(&self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        either!(self, remember_tracked(content, legs, reads))
    }

    /// How far the lot or memory `id` is to be believed under the store's trust rules (those
    /// given to [`crate::StoreBuilder::trust_rules`] or [`crate::Store::with_trust_rules`]; a
    /// server's are its data folder's `trust.toml`): a lot has its label's level; a memory the
    /// best, over its legs, of the worst level among that leg's parents. For an alive memory
    /// only the legs that still hold count; a recalled one is judged over all its legs. Lot
    /// labels are read once, then kept in RAM.
    ///
    /// Before 1.1 this took the rules as a second argument; [`Agent::trust_under`] still does.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` when no lot or memory has `id`; `Error::Corrupt` or `Error::Io` when
    /// the record of a lot it rests on cannot be read; `Error::AgentDeleted` once the agent is
    /// deleted, `Error::Internal` when a thread panicked holding the agent; through a server,
    /// the errors of a connection.
    pub fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        either!(self, trust(id))
    }

    /// As [`Agent::trust`], under `rules` rather than the store's.
    ///
    /// # Errors
    ///
    /// As [`Agent::trust`]; `Error::NeedsLocalStore` through a server, which applies its own
    /// rules only.
    pub fn trust_under(&self, id: Id, rules: &TrustRules) -> Result<TrustLevel, Error> {
        self.in_process(LocalOperation::TrustUnderGivenRules)?.trust_under(id, rules)
    }

    /// This agent's handle to the space named `name`, if it holds a role in it now: a
    /// non-member, a revoked member and a wrong name get the same `Error::UnknownSpace`. Every
    /// call of the handle is bounded by the agent's role at that moment.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::Corrupt` or `Error::Io` when the space's log cannot be
    /// read; through a server, the errors of a connection.
    pub fn space(&self, name: &str) -> Result<crate::Space<S>, Error> {
        match &self.reach {
            Reach::Local(agent) => agent.space(name),
            Reach::Served(agent) => crate::space::ServedSpace::open(agent.as_member(), name).map(crate::Space::served),
        }
    }

    /// The agent through a server, for a request its session makes.
    pub(crate) fn served_agent(&self) -> Option<&ServedAgent> {
        match &self.reach {
            Reach::Local(_) => None,
            Reach::Served(agent) => Some(agent),
        }
    }

    /// The agent in this process, which must be of the store `store` (a key is a number in one
    /// catalog only).
    pub(crate) fn local_of(&self, store: &Arc<StoreShared<S>>) -> Result<&LocalAgent<S>, Error> {
        match &self.reach {
            Reach::Local(agent) if Arc::ptr_eq(&agent.store, store) => Ok(agent),
            // A served agent is of the server's store, never of one open here.
            Reach::Local(_) | Reach::Served(_) => Err(Error::UnknownToken),
        }
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
        either!(self, recall(id, mode, removal))
    }

    /// What `recall(id, mode, ..)` would remove, without writing anything.
    ///
    /// # Errors
    ///
    /// As [`Agent::preview_recall_with`].
    pub fn preview_recall(&self, id: Id, mode: Mode) -> Result<Vec<Id>, Error> {
        self.preview_recall_with(id, mode, Removal::Untrusted)
    }

    /// What `recall(id, mode, removal)` would return, or the error it would refuse with,
    /// without writing anything. [`Agent::preview_recall`] is this with `Removal::Untrusted`.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` when no lot or memory has `id`, `Error::AlreadyRecalled` when the recall
    /// would change nothing, `Error::AgentDeleted` once the agent is deleted, `Error::Internal`
    /// when a thread panicked holding the agent; through a server, the errors of a connection.
    pub fn preview_recall_with(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        either!(self, preview_recall_with(id, mode, removal))
    }

    /// One lot or memory, read from disk and checked against its digest. The content of a
    /// recalled node is withheld (`None`): a recall hides, whether or not its text is still in
    /// the files. With read tracking on, an alive node counts as read. See [`Agent::audit`].
    ///
    /// # Errors
    ///
    /// As [`Agent::audit`].
    pub fn get(&self, id: Id) -> Result<Node, Error> {
        either!(self, get(id))
    }

    /// Like [`Agent::get`], and also returns the content of a recalled node while its text is
    /// still in the files (an Untrusted recall before compaction). For a person checking what
    /// was recalled; never hand it to a model. Never counts as a read.
    ///
    /// # Errors
    ///
    /// - `Error::UnknownId` when no lot or memory has `id`.
    /// - `Error::Corrupt` when its record fails a check; `Error::Io` when it cannot be read.
    /// - `Error::AgentDeleted` once the agent is deleted, `Error::Internal` when a thread panicked
    ///   holding the agent; through a server, the errors of a connection.
    pub fn audit(&self, id: Id) -> Result<Node, Error> {
        either!(self, audit(id))
    }

    /// The name this agent was created with.
    ///
    /// # Errors
    ///
    /// `Error::AgentDeleted` once the agent is deleted, `Error::Internal` when a thread panicked
    /// holding the agent; through a server, the errors of a connection.
    pub fn name(&self) -> Result<String, Error> {
        either!(self, name())
    }

    /// The name of the space numbered `number`: a shared node of this agent
    /// (`NodeKind::Shared`) names its space by number.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` when no space has that number; `Error::Internal` when a thread
    /// panicked holding the store; through a server, the errors of a connection.
    pub fn space_name(&self, number: u64) -> Result<String, Error> {
        either!(self, space_name(number))
    }

    /// The alive lots, ascending. Listing is not reading.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the agent; through a server, the errors
    /// of a connection.
    pub fn lots(&self) -> Result<Vec<Id>, Error> {
        either!(self, lots())
    }

    /// The alive memories, ascending. Listing is not reading.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the agent; through a server, the errors
    /// of a connection.
    pub fn memories(&self) -> Result<Vec<Id>, Error> {
        either!(self, memories())
    }

    /// Re-reads and checks the whole history; returns its head fingerprint. The segments are
    /// checked on as many threads as the machine has cores; the result, and the error for a
    /// damaged log, are those of a check in one pass.
    ///
    /// # Errors
    ///
    /// `Error::Corrupt` for the first damage in log order, `Error::Io` when a segment cannot be
    /// read, `Error::AgentDeleted` once the agent is deleted, `Error::Internal` when a thread
    /// panicked holding the agent; through a server, the errors of a connection.
    pub fn verify(&self) -> Result<Fingerprint, Error> {
        either!(self, verify(None))
    }

    /// Like [`Agent::verify`], and checks the history still passes through `kept`.
    ///
    /// # Errors
    ///
    /// As [`Agent::verify`], and `Error::HistoryMismatch` when the history does not pass through
    /// `kept`.
    pub fn verify_extends(&self, kept: &Fingerprint) -> Result<Fingerprint, Error> {
        either!(self, verify(Some(kept)))
    }

    /// Rewrites the files without the text of recalled nodes.
    ///
    /// # Errors
    ///
    /// - `Error::ReadOnly` for a read-only store, `Error::AgentDeleted` once the agent is deleted,
    ///   `Error::Poisoned` after a failed write, `Error::Internal` when a thread panicked holding
    ///   the agent, `Error::BatchOpen` when a staged batch of it is open on this thread.
    /// - `Error::Corrupt` when a segment to rewrite fails a check; `Error::Io` when the storage
    ///   fails before a segment was replaced, `Error::OutcomeUnknown` once one may be. Each of
    ///   these poisons the agent until it is reopened.
    /// - Through a server, the errors of a connection.
    pub fn compact(&self) -> Result<(), Error> {
        either!(self, compact())
    }

    /// Whether the agent is encrypted (made by [`crate::Store::create_encrypted_agent`] or
    /// converted by [`crate::Store::encrypt_agent`], which refuses an agent that is open): for a
    /// served agent, as the server said when the handle was opened.
    #[must_use]
    pub fn is_encrypted(&self) -> bool {
        either!(self, is_encrypted())
    }

    /// What opening this agent found and did. Still answered after a panic poisoned the
    /// handle: the report only describes the past open, and an empty one would hide a repair.
    /// In a process forked from the one that opened the store, the report as the open left it
    /// (the engine's lock may be held by a thread that does not exist there).
    ///
    /// For a served agent, the report of the server's open of the agent, asked afresh; when the
    /// server cannot be asked (the connection broke, or this is a forked process), the one it
    /// gave when this handle was opened.
    #[must_use]
    pub fn report(&self) -> Report {
        either!(self, report())
    }

    /// Turns read tracking on or off for this session (off when opened). While on, every id
    /// that `get` and the searches return becomes a parent of the next memory remembered
    /// through this session (its clones included), in each of its legs, in a batch too;
    /// listing lots or memories and `audit` do not count as reading them. Turning it off
    /// forgets what was read. Through a server, the server's session keeps the reads.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a forked process; through a server, the errors of a
    /// connection.
    pub fn track_reads(&self, on: bool) -> Result<(), Error> {
        either!(self, track_reads(on))
    }

    /// All writes made through the batch commit together with one sync, or none do.
    ///
    /// For an agent open here the batch holds the agent's engine while `collect` runs. Through a
    /// server each write is checked by the server as it is made (the batch is staged there, and
    /// other writers of the agent wait until it ends), so ids handed out are final; a batch the
    /// server hears nothing of for its client timeout is dropped.
    ///
    /// # Errors
    ///
    /// - The error `collect` returns, or `Error::LimitExceeded` when the batch is too large as
    ///   written: nothing is written.
    /// - Otherwise as [`Agent::add_lot`].
    pub fn batch<T>(&self, collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>) -> Result<T, Error> {
        match &self.reach {
            Reach::Local(agent) => agent.batch(collect),
            Reach::Served(agent) => agent.batch(collect),
        }
    }

    /// Runs one step of a batch that stays open between calls, for callers that cannot pass
    /// one closure to [`Agent::batch`] (a Python `with` block, a server's session): the writes
    /// `collect` makes join this session's staged batch, each checked and given its final id
    /// at once. The first step opens the batch, unless [`Agent::begin_staged`] did; a step may
    /// come from any thread. Nothing is written until [`Agent::commit_staged`];
    /// [`Agent::drop_staged`] drops it, and so does dropping the last handle of the session.
    ///
    /// While it is open, the batch holds the agent for the thread that opened it: writes of
    /// other threads, through any handle of the agent opened from the same store, wait for it
    /// to end; a write on the batch's own thread outside it is refused with `Error::BatchOpen`,
    /// since it would wait for itself. The batch may be committed or dropped from any thread.
    /// Reads go on meanwhile.
    ///
    /// Before 1.1 a local agent took the staged batch as an argument, which
    /// [`Agent::stage_into`] still does.
    ///
    /// # Errors
    ///
    /// `Error::BatchOpen` when a batch of another handle of the agent is open on this thread;
    /// `Error::BatchConflict` when another write reached the agent since the first step; the
    /// error `collect` returns; otherwise as [`Agent::add_lot`] before anything is written. The
    /// batch stays open after an error of one step: drop it or go on.
    pub fn stage<T>(&self, collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>) -> Result<T, Error> {
        match &self.reach {
            Reach::Local(agent) => agent.stage(collect),
            Reach::Served(agent) => agent.stage(collect),
        }
    }

    /// Opens this session's staged batch now, before its first step, for this thread: waits
    /// while another batch of the agent is open (one this session opened on another thread
    /// included), so that the steps that follow join a batch of their own. See
    /// [`Agent::stage`].
    ///
    /// # Errors
    ///
    /// `Error::BatchOpen` when a batch of this agent is open on this thread already;
    /// `Error::ReadOnly` for a read-only store; `Error::ForkedProcess` in a forked process.
    pub fn begin_staged(&self) -> Result<(), Error> {
        either!(self, begin_staged())
    }

    /// Writes this session's staged batch with one commit and one sync (an empty or absent
    /// batch writes nothing), and lets the agent's other writers go on. Every write is checked
    /// again against the agent as it is now.
    ///
    /// Before 1.1 a local agent took the staged batch as an argument, which
    /// [`Agent::commit_staged_batch`] still does.
    ///
    /// # Errors
    ///
    /// `Error::BatchConflict` when another write reached the agent since the first step; a
    /// check the writes no longer pass (`Error::DeadParent` after a recall, say); otherwise as
    /// [`Agent::batch`]. The batch is ended either way.
    pub fn commit_staged(&self) -> Result<(), Error> {
        either!(self, commit_staged())
    }

    /// Drops this session's staged batch, if any: nothing of it is written, and the agent's
    /// other writers go on.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a forked process; through a server, the errors of a
    /// connection.
    pub fn drop_staged(&self) -> Result<(), Error> {
        either!(self, drop_staged())
    }

    /// One step of a staged batch that the caller holds in `staged` (which keeps what `collect`
    /// adds), for an agent open in this process. The ids handed out are final as long as
    /// nothing else writes to this agent before [`Agent::commit_staged_batch`]: keep other
    /// writers out meanwhile, or use [`Agent::stage`], which does. Memories get no tracked reads
    /// here beyond those given to `remember_tracked`.
    ///
    /// # Errors
    ///
    /// `Error::NeedsLocalStore` through a server; `Error::BatchConflict` when another write
    /// reached the agent since the first step; the error `collect` returns; otherwise as
    /// [`Agent::add_lot`] before anything is written.
    pub fn stage_into<T>(
        &self,
        staged: &mut StagedBatch,
        collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.in_process(LocalOperation::BatchHeldByCaller)?.stage_into(staged, collect)
    }

    /// Writes a staged batch the caller holds: one commit, one sync, all or nothing. Every
    /// write is checked again against the agent as it is now.
    ///
    /// # Errors
    ///
    /// `Error::NeedsLocalStore` through a server; `Error::BatchConflict` when another write
    /// reached the agent since the first step; a check the writes no longer pass
    /// (`Error::DeadParent` after a recall, say); otherwise as [`Agent::batch`].
    pub fn commit_staged_batch(&self, staged: StagedBatch) -> Result<(), Error> {
        self.in_process(LocalOperation::BatchHeldByCaller)?.commit_staged_batch(staged)
    }

    /// Closes this handle. When it is the last handle of a local agent, the snapshot that is
    /// due is taken now and a failure to write it is returned (dropping the handle instead
    /// does the same but ignores that failure). A read-only store writes nothing. A served
    /// handle closes its connection when it is the last of its session, which ends the session
    /// on the server.
    ///
    /// # Errors
    ///
    /// `Error::Io` or `Error::OutcomeUnknown` when writing the snapshot fails; `Error::Poisoned`
    /// when a thread panicked holding the agent; `Error::ForkedProcess` in a process forked
    /// from the one that opened the store, where nothing is written or sent.
    pub fn close(self) -> Result<(), Error> {
        match self.reach {
            Reach::Local(agent) => agent.close(),
            Reach::Served(agent) => agent.close(),
        }
    }

    /// Lots and memories whose content holds words of `query`, best first by BM25 (k1 1.2,
    /// b 0.75), ties by ascending id, at most `limit`. Words are split on Unicode word
    /// boundaries and lower-cased; a hit holds at least one word of the query; an empty query
    /// or a `limit` of 0 finds nothing. Recalled lots and memories are never found, from the
    /// moment their recall returns. With read tracking on, the ids found count as read.
    ///
    /// The index lives in RAM, derived from the log: the first search after open builds it
    /// with one read of the agent's files, later writes and recalls keep it in step.
    ///
    /// # Errors
    ///
    /// `Error::Io` or `Error::Corrupt` if the log cannot be read to build the index;
    /// `Error::AgentDeleted`; `Error::Poisoned` after a panic while the agent was in use;
    /// through a server, the errors of a connection.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        either!(self, search(query, limit))
    }

    /// One page of hits with what a caller shows of each, in one call (one request through a
    /// server): the best `query.limit` alive lots and memories, each with its score, kind (a
    /// lot's label, a memory's tracked parents), content, trust level under the store's rules
    /// (as [`Agent::trust`] judges it) and whether it has a vector.
    ///
    /// By words as [`Agent::search`] ranks them; with `query.vector`, by words and vector
    /// fused as [`Agent::search_hybrid`] fuses them, or by words when the vector cannot be
    /// compared with the agent's, which [`Ranking::KeywordInstead`](crate::Ranking) says with
    /// the reason. Hits below `query.least_trust` or outside `query.among` are passed over while
    /// the ranking is collected, so the page is full whenever enough hits match, however many
    /// better-ranked ones were passed over. A recalled lot or memory is never found. With read
    /// tracking on, the ids found count as read.
    ///
    /// ```
    /// # fn main() -> Result<(), cheesedb::Error> {
    /// use cheesedb::{SearchQuery, TrustLevel, TrustRules};
    ///
    /// # let folder = tempfile::tempdir().unwrap();
    /// let rules = TrustRules::new().with("web_page", TrustLevel::Low);
    /// let store = cheesedb::Store::builder(folder.path()).trust_rules(rules).open()?;
    /// let alice = store.open_agent(&store.create_agent("alice")?)?;
    /// let web = alice.add_lot("web_page", b"rain in Pune all week")?;
    /// let user = alice.add_lot("user_message", b"it will rain, take the bus")?;
    /// let page = alice.search_page(&SearchQuery::new("rain", 10).least_trust(TrustLevel::Normal))?;
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
    /// lot a hit's trust rests on, cannot be read; through a server, the errors of a connection
    /// (`Error::FrameTooLarge` for a query whose `among` holds too many ids for a frame).
    pub fn search_page(&self, query: &SearchQuery) -> Result<SearchPage, Error> {
        either!(self, search_page(query))
    }

    /// As [`Agent::search_page`], judging trust under `rules` rather than the store's.
    ///
    /// # Errors
    ///
    /// As [`Agent::search_page`]; `Error::NeedsLocalStore` through a server, which applies its
    /// own rules only.
    pub fn search_page_under(&self, query: &SearchQuery, rules: &TrustRules) -> Result<SearchPage, Error> {
        self.in_process(LocalOperation::TrustUnderGivenRules)?.search_page_under(query, rules)
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
    /// `Error::ReadOnly`, `Error::BatchOpen`, those of a connection).
    pub fn set_vector(&self, id: Id, vector: &[f32]) -> Result<(), Error> {
        either!(self, set_vector(id, vector))
    }

    /// Alive lots and memories with a vector, best first by the cosine of their vector and
    /// `vector`, computed exactly for every one (the score is the cosine), ties by ascending id.
    /// An agent without vectors finds nothing. Tracked as a search.
    ///
    /// # Errors
    ///
    /// `Error::InvalidVector` or `Error::LimitExceeded` for a vector that cannot be compared
    /// (as for [`Agent::set_vector`]); otherwise as for [`Agent::search`].
    pub fn search_vector(&self, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        either!(self, search_vector(vector, limit))
    }

    /// Keyword and vector search fused by reciprocal rank fusion (k = 60): a node scores the
    /// sum of 1 / (60 + its rank) over the two rankings, each cut at its best
    /// `max(limit, 100)`. Tracked as a search.
    ///
    /// # Errors
    ///
    /// As for [`Agent::search_vector`].
    pub fn search_hybrid(&self, query: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        either!(self, search_hybrid(query, vector, limit))
    }

    /// Whether the alive lot or memory `id` has a vector.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` or `Error::AlreadyRecalled` for an id that is not alive; otherwise
    /// as for [`Agent::search`].
    pub fn has_vector(&self, id: Id) -> Result<bool, Error> {
        either!(self, has_vector(id))
    }

    /// Bytes of RAM held by this agent's search index (0 until the first search builds it).
    ///
    /// # Errors
    ///
    /// `Error::Poisoned` after a panic while the agent was in use; `Error::NeedsLocalStore`
    /// through a server.
    pub fn search_heap_bytes(&self) -> Result<usize, Error> {
        self.in_process(LocalOperation::HeapFigures)?.search_heap_bytes()
    }

    /// Bytes of RAM held by this agent's recall graph.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the agent; `Error::NeedsLocalStore`
    /// through a server.
    pub fn graph_heap_bytes(&self) -> Result<usize, Error> {
        self.in_process(LocalOperation::HeapFigures)?.graph_heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    fn in_process(agent: &Agent) -> &LocalAgent<FileStorage> {
        agent.in_process(LocalOperation::HeapFigures).unwrap()
    }

    #[test]
    fn report_survives_a_poisoned_lock() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(folder.path()).unwrap();
        let token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        let before = alice.report();
        assert_ne!(before, Report::default(), "an open agent has at least one segment");
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = in_process(&alice).with(|_| -> Result<(), Error> { panic!("a panic while holding the engine") });
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

        store.local(LocalOperation::Replication).unwrap().process.pretend_opened_by(std::process::id().wrapping_add(1));
        assert!(is_forked_process(alice.check_same_process()));
        assert!(is_forked_process(store.check_same_process()));
        assert!(is_forked_process(alice.add_lot("note", b"the child's lot")));
        assert!(is_forked_process(alice.remember(b"the child's memory", &[Leg::from([lot])])));
        assert!(is_forked_process(alice.batch(|batch| batch.add_lot("note", b"batched"))));
        assert!(is_forked_process(alice.stage(|batch| batch.add_lot("note", b"staged"))));
        assert!(is_forked_process(alice.commit_staged()));
        assert!(is_forked_process(alice.drop_staged()));
        let mut staged = StagedBatch::default();
        assert!(is_forked_process(alice.stage_into(&mut staged, |batch| batch.add_lot("note", b"staged"))));
        assert!(is_forked_process(alice.commit_staged_batch(staged)));
        assert!(is_forked_process(alice.track_reads(true)));
        assert!(is_forked_process(alice.trust(lot)));
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
        store.local(LocalOperation::Replication).unwrap().process.pretend_opened_by(std::process::id());
        let alice = store.open_agent(&token).unwrap();
        assert_eq!(alice.lots(), Ok(vec![lot]));
        assert_eq!(alice.get(lot).unwrap().content(), Some(&b"the parent's lot"[..]));
        assert_eq!(alice.add_lot("note", b"the parent's second lot").map(Id::get), Ok(2));
    }

    /// A store with one agent, opened twice: two sessions of one engine.
    fn two_sessions(folder: &std::path::Path) -> (Store, Agent, Agent) {
        let store = Store::open(folder).unwrap();
        let token = store.create_agent("alice").unwrap();
        let (first, second) = (store.open_agent(&token).unwrap(), store.open_agent(&token).unwrap());
        (store, first, second)
    }

    #[test]
    fn a_staged_batch_keeps_other_threads_waiting_and_refuses_its_own_thread() {
        let folder = tempfile::tempdir().unwrap();
        let (_store, alice, other) = two_sessions(folder.path());
        let staged = alice.stage(|batch| batch.add_lot("tool", b"staged")).unwrap();
        assert_eq!(alice.add_lot("note", b"outside"), Err(Error::BatchOpen), "it would wait for itself");
        assert_eq!(other.add_lot("note", b"other handle"), Err(Error::BatchOpen));
        assert_eq!(other.stage(|batch| batch.add_lot("note", b"second batch")), Err(Error::BatchOpen));
        assert_eq!(alice.begin_staged(), Err(Error::BatchOpen));
        let (started, started_seen) = std::sync::mpsc::channel();
        let writer = std::thread::spawn(move || {
            started.send(()).unwrap();
            other.add_lot("note", b"from another thread")
        });
        started_seen.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(alice.lots(), Ok(vec![]), "nothing passed the batch; reads go on");
        let more = alice.stage(|batch| batch.add_lot("tool", b"staged too")).unwrap();
        alice.commit_staged().unwrap();
        assert_eq!(writer.join().unwrap(), Ok(Id::from(3)), "the write waited for the commit");
        assert_eq!((staged, more), (Id::from(1), Id::from(2)));
        assert_eq!(alice.commit_staged(), Ok(()), "nothing is open any more");
        assert_eq!(alice.drop_staged(), Ok(()));
    }

    #[test]
    fn a_step_of_another_thread_joins_the_batch_and_a_begin_waits_for_it() {
        let folder = tempfile::tempdir().unwrap();
        let (_store, alice, _other) = two_sessions(folder.path());
        alice.begin_staged().unwrap();
        let first = alice.stage(|batch| batch.add_lot("tool", b"first")).unwrap();
        let joined = {
            let alice = alice.clone();
            std::thread::spawn(move || alice.stage(|batch| batch.add_lot("tool", b"joined"))).join().unwrap()
        };
        assert_eq!(joined, Ok(Id::from(2)), "a step of another thread joins the open batch");
        let (began, began_seen) = std::sync::mpsc::channel();
        let next = {
            let alice = alice.clone();
            std::thread::spawn(move || {
                alice.begin_staged().unwrap();
                began.send(()).unwrap();
                let id = alice.stage(|batch| batch.add_lot("tool", b"next batch"));
                alice.commit_staged().map(|()| id)
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(began_seen.try_recv().is_err(), "a new batch waits for the open one");
        alice.commit_staged().unwrap();
        assert_eq!(next.join().unwrap(), Ok(Ok(Id::from(3))));
        assert_eq!(alice.lots().unwrap(), vec![first, Id::from(2), Id::from(3)]);
    }

    #[test]
    fn the_last_handle_of_a_session_drops_its_batch_and_lets_the_agent_go() {
        let folder = tempfile::tempdir().unwrap();
        let (_store, alice, other) = two_sessions(folder.path());
        let clone = alice.clone();
        alice.stage(|batch| batch.add_lot("tool", b"never committed")).unwrap();
        drop(alice);
        assert_eq!(other.add_lot("note", b"x"), Err(Error::BatchOpen), "a clone keeps the session");
        drop(clone);
        assert_eq!(other.add_lot("note", b"x"), Ok(Id::from(1)), "the dropped batch took no id");
    }

    #[test]
    fn a_session_tracks_its_reads_and_its_clones_share_them() {
        let folder = tempfile::tempdir().unwrap();
        let (_store, alice, other) = two_sessions(folder.path());
        let declared = alice.add_lot("user_message", b"declared").unwrap();
        let read = alice.add_lot("web_page", b"read and not declared").unwrap();
        let found = alice.add_lot("web_page", b"found by a search").unwrap();
        alice.track_reads(true).unwrap();
        alice.clone().get(read).unwrap();
        other.get(found).unwrap();
        alice.lots().unwrap();
        alice.audit(declared).unwrap();
        let memory = alice.remember(b"m", &[Leg::from([declared])]).unwrap();
        assert_eq!(alice.get(memory).unwrap().tracked_parents(), [read], "another session's reads never count");
        let next = alice.remember(b"n", &[Leg::from([declared])]).unwrap();
        assert_eq!(alice.get(next).unwrap().tracked_parents(), [memory], "the reads went with the memory");
        alice.search("search", 10).unwrap();
        let batched = alice.batch(|batch| batch.remember(b"in a batch", &[Leg::from([declared])])).unwrap();
        assert_eq!(alice.get(batched).unwrap().tracked_parents(), [found, next]);
        let staged = alice.stage(|batch| batch.remember(b"staged", &[Leg::from([declared])])).unwrap();
        alice.commit_staged().unwrap();
        assert_eq!(alice.get(staged).unwrap().tracked_parents(), [batched]);
        let after = alice.remember(b"after", &[Leg::from([declared])]).unwrap();
        assert_eq!(alice.get(after).unwrap().tracked_parents(), [staged], "the staged memory used the reads");
        alice.track_reads(false).unwrap();
        alice.get(read).unwrap();
        let untracked = alice.remember(b"off", &[Leg::from([declared])]).unwrap();
        assert!(alice.get(untracked).unwrap().tracked_parents().is_empty());
    }

    #[test]
    fn trust_follows_the_rules_the_store_was_given() {
        let folder = tempfile::tempdir().unwrap();
        let rules = TrustRules::new().with("web_page", TrustLevel::Low);
        let store = Store::builder(folder.path()).trust_rules(rules.clone()).open().unwrap();
        let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
        let page = alice.add_lot("web_page", b"p").unwrap();
        assert_eq!(alice.trust(page), Ok(TrustLevel::Low));
        assert_eq!(alice.trust_under(page, &TrustRules::new()), Ok(TrustLevel::Normal));
        let bob = store.create_agent("bob").unwrap();
        let plain = store.clone().with_trust_rules(TrustRules::new()).open_agent(&bob).unwrap();
        assert_eq!(plain.add_lot("web_page", b"q").and_then(|id| plain.trust(id)), Ok(TrustLevel::Normal));
        assert_eq!(alice.trust(page), Ok(TrustLevel::Low), "other handles keep their rules");
        assert!(!alice.is_served() && !store.is_served() && store.socket_path().is_none());
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
