//! [`ClientAgent`]: an agent reached through the memory server, with the methods of
//! [`Agent`](crate::Agent).
#![allow(deprecated)] // The deprecated type is this module's own.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cheesedb_core::{
    Error, Fingerprint, Hit, Id, Leg, MessageProblem, Mode, Node, ReadSet, Removal, Report, SearchPage, SearchQuery,
    TrustLevel,
};

use super::batch::ClientBatch;
use super::connection::Connection;
use crate::process::OpeningProcess;
use crate::protocol::{wire_leg, Request, Response, WireFound};

/// An agent opened through a [`Client`](super::Client): the methods and errors of
/// [`Agent`](crate::Agent), each one request to the server, plus the errors of a connection
/// (`Error::ConnectionLost`, `Error::FrameTooLarge`, ...).
///
/// It holds a connection and the server's session on it: the open agent, read tracking
/// ([`ClientAgent::track_reads`]) and an open batch. Clones share that session and take turns on
/// the connection; for requests in parallel, open the agent once per thread. Once its
/// connection broke (the server stopped, say), every call fails with `Error::ConnectionLost`:
/// open the agent again. In a process forked from the one that opened it, every call fails with
/// `Error::ForkedProcess` and nothing is sent: the parent's answers never reach the child.
///
/// A server that answers writes only once they are shipped to an object store
/// (`--wait-for-ship`) answers a write it stored but could not ship with
/// `Error::StoredNotShipped`, carrying the id the write was given: it is kept, and must not be
/// made again.
///
/// Deprecated: [`Store::connect`](crate::Store::connect) opens agents as [`Agent`](crate::Agent)s,
/// with the signatures of a local agent (`trust(id)`, `report() -> Report`, `is_encrypted() ->
/// bool`), the same staged batch (`stage`, `commit_staged`, `drop_staged`), and a gate that
/// keeps a write of this process from waiting on the server for a batch of its own thread.
#[deprecated(since = "1.1.0", note = "use the `Agent` of a store made by `Store::connect`")]
#[derive(Clone)]
pub struct ClientAgent {
    connection: Arc<Mutex<Connection>>,
    /// Checked before the connection's lock, which a thread of the parent may have held at a fork.
    process: OpeningProcess,
}

impl std::fmt::Debug for ClientAgent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ClientAgent").finish_non_exhaustive()
    }
}

/// The ids of a list answer.
fn ids_part(response: Response) -> Option<(Vec<u64>, bool)> {
    match response {
        Response::Ids { ids, more } => Some((ids, more)),
        _ => None,
    }
}

/// Ids from their numbers.
fn ids(numbers: Vec<u64>) -> Vec<Id> {
    numbers.into_iter().map(Id::from).collect()
}

/// A limit as the protocol carries it.
fn wide(limit: usize) -> u64 {
    u64::try_from(limit).unwrap_or(u64::MAX)
}

impl ClientAgent {
    pub(crate) fn new(connection: Connection) -> ClientAgent {
        let process = connection.opening_process().clone();
        ClientAgent { connection: Arc::new(Mutex::new(connection)), process }
    }

    /// Fails with `Error::ForkedProcess` when this is not the process that opened the agent,
    /// as every other method does then.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a process other than the one that opened the agent.
    pub fn check_same_process(&self) -> Result<(), Error> {
        self.process.check()
    }

    /// The connection, even after a panic of another thread that held it: a panic in between
    /// requests leaves nothing half-sent, and one within a request broke the connection.
    fn connection(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.process.check()?;
        Ok(self.connection.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Sends `request`; `answer` takes the response apart, `None` for one of the wrong kind.
    pub(crate) fn call<T>(&self, request: &Request, answer: impl FnOnce(Response) -> Option<T>) -> Result<T, Error> {
        let mut connection = self.connection()?;
        let response = connection.call(request)?;
        answer(response).ok_or_else(|| connection.unexpected())
    }

    pub(crate) fn call_done(&self, request: &Request) -> Result<(), Error> {
        self.call(request, |response| matches!(response, Response::Done).then_some(()))
    }

    pub(crate) fn call_id(&self, request: &Request) -> Result<Id, Error> {
        self.call(request, |response| match response {
            Response::Id(id) => Some(Id::from(id)),
            _ => None,
        })
    }

    pub(crate) fn call_ids(&self, request: &Request) -> Result<Vec<Id>, Error> {
        self.connection()?.call_list(request, ids_part).map(ids)
    }

    /// Sends `request` and gathers the parts of its answer; `part` takes one apart.
    pub(crate) fn call_parts<T>(
        &self,
        request: &Request,
        part: impl FnMut(Response) -> Option<(Vec<T>, bool)>,
    ) -> Result<Vec<T>, Error> {
        self.connection()?.call_list(request, part)
    }

    pub(crate) fn call_node(&self, request: &Request) -> Result<Node, Error> {
        self.call(request, |response| match response {
            Response::Node(node) => Some(node.into_node()),
            _ => None,
        })
    }

    pub(crate) fn call_hits(&self, request: &Request) -> Result<Vec<Hit>, Error> {
        let hits = self.connection()?.call_list(request, |response| match response {
            Response::Hits { hits, more } => Some((hits, more)),
            _ => None,
        })?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    pub(crate) fn call_fingerprint(&self, request: &Request) -> Result<Fingerprint, Error> {
        self.call(request, |response| match response {
            Response::Fingerprint { records, chain } => Some(Fingerprint { records, chain }),
            _ => None,
        })
    }

    /// As [`Agent::add_lot`](crate::Agent::add_lot).
    ///
    /// # Errors
    ///
    /// As [`Agent::add_lot`](crate::Agent::add_lot); `Error::ConnectionLost` with
    /// `write_in_flight` when the connection broke before the answer (the lot may be stored).
    pub fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.call_id(&Request::AddLot { label: String::from(label), content: content.to_vec() })
    }

    /// As [`Agent::remember`](crate::Agent::remember). With read tracking on, the ids this
    /// session read since its previous write are added to each leg, and forgotten once the
    /// memory is stored.
    ///
    /// # Errors
    ///
    /// As [`Agent::remember`](crate::Agent::remember); with tracking, `Error::LimitExceeded`
    /// when the reads would pass the limit on parents and `Error::DeadParent` for a read
    /// recalled since; the errors of a connection as for [`ClientAgent::add_lot`].
    pub fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.remember_tracked(content, legs, &ReadSet::new())
    }

    /// As [`Agent::remember_tracked`](crate::Agent::remember_tracked): every id of `reads`
    /// (and of the session's own reads, when it tracks them) is added to each leg.
    ///
    /// # Errors
    ///
    /// As [`Agent::remember_tracked`](crate::Agent::remember_tracked); the errors of a
    /// connection as for [`ClientAgent::add_lot`].
    pub fn remember_tracked(&self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        let reads = reads.ids().iter().map(|id| id.get()).collect();
        self.call_id(&Request::Remember { content: content.to_vec(), legs: legs.iter().map(wire_leg).collect(), reads })
    }

    /// As [`Agent::recall`](crate::Agent::recall).
    ///
    /// # Errors
    ///
    /// As [`Agent::recall`](crate::Agent::recall); the errors of a connection as for
    /// [`ClientAgent::add_lot`].
    pub fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.call_ids(&Request::Recall { id: id.get(), mode: mode.into(), removal: removal.into() })
    }

    /// As [`Agent::preview_recall`](crate::Agent::preview_recall).
    ///
    /// # Errors
    ///
    /// As [`Agent::preview_recall`](crate::Agent::preview_recall), and the errors of a
    /// connection.
    pub fn preview_recall(&self, id: Id, mode: Mode) -> Result<Vec<Id>, Error> {
        self.preview_recall_with(id, mode, Removal::Untrusted)
    }

    /// As [`Agent::preview_recall_with`](crate::Agent::preview_recall_with).
    ///
    /// # Errors
    ///
    /// As [`Agent::preview_recall_with`](crate::Agent::preview_recall_with), and the errors of
    /// a connection.
    pub fn preview_recall_with(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.call_ids(&Request::PreviewRecall { id: id.get(), mode: mode.into(), removal: removal.into() })
    }

    /// As [`Agent::get`](crate::Agent::get); with read tracking on, the id counts as read.
    ///
    /// # Errors
    ///
    /// As [`Agent::get`](crate::Agent::get), and the errors of a connection.
    pub fn get(&self, id: Id) -> Result<Node, Error> {
        self.call_node(&Request::Get { id: id.get() })
    }

    /// As [`Agent::audit`](crate::Agent::audit).
    ///
    /// # Errors
    ///
    /// As [`Agent::audit`](crate::Agent::audit), and the errors of a connection.
    pub fn audit(&self, id: Id) -> Result<Node, Error> {
        self.call_node(&Request::Audit { id: id.get() })
    }

    /// As [`Agent::name`](crate::Agent::name).
    ///
    /// # Errors
    ///
    /// As [`Agent::name`](crate::Agent::name), and the errors of a connection.
    pub fn name(&self) -> Result<String, Error> {
        self.call(&Request::Name, |response| match response {
            Response::Name(name) => Some(name),
            _ => None,
        })
    }

    /// Whether the agent is encrypted; as [`Agent::is_encrypted`](crate::Agent::is_encrypted).
    ///
    /// # Errors
    ///
    /// The errors of a connection (`Error::ConnectionLost`, ...).
    pub fn is_encrypted(&self) -> Result<bool, Error> {
        self.call(&Request::IsEncrypted, |response| match response {
            Response::Flag(flag) => Some(flag),
            _ => None,
        })
    }

    /// As [`Agent::lots`](crate::Agent::lots).
    ///
    /// # Errors
    ///
    /// As [`Agent::lots`](crate::Agent::lots), and the errors of a connection.
    pub fn lots(&self) -> Result<Vec<Id>, Error> {
        self.call_ids(&Request::Lots)
    }

    /// As [`Agent::memories`](crate::Agent::memories).
    ///
    /// # Errors
    ///
    /// As [`Agent::memories`](crate::Agent::memories), and the errors of a connection.
    pub fn memories(&self) -> Result<Vec<Id>, Error> {
        self.call_ids(&Request::Memories)
    }

    /// As [`Agent::verify`](crate::Agent::verify).
    ///
    /// # Errors
    ///
    /// As [`Agent::verify`](crate::Agent::verify), and the errors of a connection.
    pub fn verify(&self) -> Result<Fingerprint, Error> {
        self.call_fingerprint(&Request::Verify)
    }

    /// As [`Agent::verify_extends`](crate::Agent::verify_extends).
    ///
    /// # Errors
    ///
    /// As [`Agent::verify_extends`](crate::Agent::verify_extends), and the errors of a
    /// connection.
    pub fn verify_extends(&self, kept: &Fingerprint) -> Result<Fingerprint, Error> {
        self.call_fingerprint(&Request::VerifyExtends { records: kept.records, chain: kept.chain })
    }

    /// As [`Agent::compact`](crate::Agent::compact).
    ///
    /// # Errors
    ///
    /// As [`Agent::compact`](crate::Agent::compact), and the errors of a connection as for
    /// [`ClientAgent::add_lot`].
    pub fn compact(&self) -> Result<(), Error> {
        self.call_done(&Request::Compact)
    }

    /// As [`Agent::report`](crate::Agent::report): what the server's open of this agent found
    /// and did.
    ///
    /// # Errors
    ///
    /// The errors of a connection (`Error::ConnectionLost`, ...).
    pub fn report(&self) -> Result<Report, Error> {
        self.call(&Request::Report, |response| match response {
            Response::Report(report) => Some(report),
            _ => None,
        })
    }

    /// As [`Agent::batch`](crate::Agent::batch): every write through the batch commits with
    /// one sync, or none does. Each write is checked by the server as it is made (the batch
    /// is staged there, and other writers of the agent wait until it ends), so ids handed out
    /// are final. A batch the server hears nothing of for its client timeout is dropped.
    ///
    /// # Errors
    ///
    /// As [`Agent::batch`](crate::Agent::batch), and the errors of a connection as for
    /// [`ClientAgent::add_lot`].
    pub fn batch<T>(&self, collect: impl FnOnce(&mut ClientBatch<'_>) -> Result<T, Error>) -> Result<T, Error> {
        let mut connection = self.connection()?;
        let mut batch = ClientBatch::new(&mut connection);
        match collect(&mut batch) {
            Ok(value) => batch.commit().map(|()| value),
            Err(error) => {
                batch.drop_staged()?;
                Err(error)
            }
        }
    }

    /// One step of a batch built a call at a time, as [`Agent::stage`](crate::Agent::stage):
    /// the writes `collect` makes join this session's open batch on the server (the first
    /// opens it), each checked and given its final id at once. Nothing is written until
    /// [`ClientAgent::commit_staged`]; [`ClientAgent::drop_staged`] drops it. While it is open,
    /// other writers of the agent wait on the server, and a write of this session outside
    /// the batch is refused; a batch the server hears nothing of for its client timeout is
    /// dropped.
    ///
    /// # Errors
    ///
    /// As [`Batch::add_lot`](crate::Batch::add_lot) and the other writes of a batch, the error
    /// `collect` returns, and the errors of a connection. The batch stays open after an error
    /// of one write: drop it or go on.
    pub fn stage<T>(&self, collect: impl FnOnce(&mut ClientBatch<'_>) -> Result<T, Error>) -> Result<T, Error> {
        let mut connection = self.connection()?;
        let mut batch = ClientBatch::step(&mut connection);
        collect(&mut batch)
    }

    /// Writes this session's open batch with one commit and one sync (an empty or absent
    /// batch writes nothing), as [`Agent::commit_staged`](crate::Agent::commit_staged).
    ///
    /// # Errors
    ///
    /// As [`Agent::commit_staged`](crate::Agent::commit_staged), and the errors of a connection
    /// as for [`ClientAgent::add_lot`].
    pub fn commit_staged(&self) -> Result<(), Error> {
        self.call_done(&Request::BatchCommit)
    }

    /// Drops this session's open batch, if any: nothing of it is written.
    ///
    /// # Errors
    ///
    /// The errors of a connection (`Error::ConnectionLost`, ...).
    pub fn drop_staged(&self) -> Result<(), Error> {
        self.call_done(&Request::BatchDrop)
    }

    /// As [`Agent::search`](crate::Agent::search); with read tracking on, the ids found count
    /// as read.
    ///
    /// # Errors
    ///
    /// As [`Agent::search`](crate::Agent::search), and the errors of a connection.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        self.call_hits(&Request::Search { query: String::from(query), limit: wide(limit) })
    }

    /// As [`Agent::search_vector`](crate::Agent::search_vector); tracked as a search.
    ///
    /// # Errors
    ///
    /// As [`Agent::search_vector`](crate::Agent::search_vector), and the errors of a
    /// connection.
    pub fn search_vector(&self, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.call_hits(&Request::SearchVector { vector: vector.to_vec(), limit: wide(limit) })
    }

    /// As [`Agent::search_hybrid`](crate::Agent::search_hybrid); tracked as a search.
    ///
    /// # Errors
    ///
    /// As [`Agent::search_hybrid`](crate::Agent::search_hybrid), and the errors of a
    /// connection.
    pub fn search_hybrid(&self, query: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.call_hits(&Request::SearchHybrid {
            query: String::from(query),
            vector: vector.to_vec(),
            limit: wide(limit),
        })
    }

    /// As [`Agent::set_vector`](crate::Agent::set_vector).
    ///
    /// # Errors
    ///
    /// As [`Agent::set_vector`](crate::Agent::set_vector), and the errors of a connection as
    /// for [`ClientAgent::add_lot`].
    pub fn set_vector(&self, id: Id, vector: &[f32]) -> Result<(), Error> {
        self.call_done(&Request::SetVector { id: id.get(), vector: vector.to_vec() })
    }

    /// As [`Agent::has_vector`](crate::Agent::has_vector).
    ///
    /// # Errors
    ///
    /// As [`Agent::has_vector`](crate::Agent::has_vector), and the errors of a connection.
    pub fn has_vector(&self, id: Id) -> Result<bool, Error> {
        self.call(&Request::HasVector { id: id.get() }, |response| match response {
            Response::Flag(flag) => Some(flag),
            _ => None,
        })
    }

    /// The trust level of the lot or memory `id` under the server's trust rules (its data
    /// folder's `trust.toml`); as [`Agent::trust`](crate::Agent::trust).
    ///
    /// # Errors
    ///
    /// As [`Agent::trust`](crate::Agent::trust), and the errors of a connection.
    pub fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        self.call(&Request::Trust { id: id.get() }, |response| match response {
            Response::Trust(level) => Some(level.into()),
            _ => None,
        })
    }

    /// As [`Agent::search_page`](crate::Agent::search_page) under the server's trust rules (its
    /// data folder's `trust.toml`), in one request however many hits the page holds or passes
    /// over; with read tracking on, the ids found count as read.
    ///
    /// # Errors
    ///
    /// As [`Agent::search_page`](crate::Agent::search_page), and the errors of a connection
    /// (`Error::FrameTooLarge` for a request whose `among` holds too many ids for a frame).
    pub fn search_page(&self, query: &SearchQuery) -> Result<SearchPage, Error> {
        let request = Request::SearchPage {
            query: query.text.clone(),
            vector: query.vector.clone(),
            limit: wide(query.limit),
            least_trust: query.least_trust.into(),
            among: query.among.as_ref().map(|ids| ids.iter().map(|id| id.get()).collect()),
        };
        let mut ranking = None;
        let found = self.connection()?.call_list(&request, |response| match response {
            Response::SearchPage { ranking: said, found, more } => {
                ranking = Some(said);
                Some((found, more))
            }
            _ => None,
        })?;
        // Every part of a page says how it was ranked, and a page has at least one part.
        let ranking = ranking.ok_or(Error::MalformedMessage { reason: MessageProblem::UnexpectedResponse })?;
        Ok(SearchPage::new(found.into_iter().map(WireFound::into_found).collect(), ranking.into_ranking()))
    }

    /// Turns read tracking on or off for this session (off when opened). While on, every id
    /// that `get` and the searches return becomes a parent of the next memory remembered, in
    /// each of its legs; listing lots or memories does not count as reading them. Turning it
    /// off forgets what was read.
    ///
    /// # Errors
    ///
    /// The errors of a connection (`Error::ConnectionLost`, ...).
    pub fn track_reads(&self, on: bool) -> Result<(), Error> {
        self.call_done(&Request::TrackReads { on })
    }
}
