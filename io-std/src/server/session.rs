//! One connection's session: the agent it opened, its read tracking and its open batch, and
//! what each request does to them.

use std::sync::Arc;

use crate::protocol::{
    engine_leg, BatchWrite, Request, Response, WireFound, WireHit, WireLeftBehind, WireNode, WireRanking, WireReport,
};
use crate::{Agent, Error, Fingerprint, Hit, Id, Leg, SearchPage, SearchQuery, StagedBatch, Token};

use super::access;
use super::gate::Gate;
use super::peer::Peer;
use super::reply::Reply;
use super::tracking::Tracking;
use super::ServerState;
use crate::access_log::AccessEntry;

/// The agent a session opened.
struct OpenAgent {
    agent: Agent,
    name: String,
    gate: Arc<Gate>,
}

/// Which agent's access log a request goes to.
enum Logged {
    /// This agent's, whatever the outcome.
    Always(String),
    /// This agent's, once the request did what it asked (it changed the store).
    IfDone(String),
    /// The agent the session has open once the request is served, if any.
    SessionAgent,
    /// None.
    Not,
}

/// A batch being staged.
struct OpenBatch {
    staged: StagedBatch,
    /// Whether a memory was staged: its commit used the reads, which are then forgotten.
    remembered: bool,
}

/// One connection's state on the server.
pub struct Session {
    state: Arc<ServerState>,
    /// Tells this session's batch apart at its agent's gate.
    id: u64,
    peer: Peer,
    agent: Option<OpenAgent>,
    tracking: Tracking,
    /// The batch being staged; while it is, this session holds its agent's gate.
    batch: Option<OpenBatch>,
    /// The access log entry of the request just served, with its agent's name: written once
    /// the answer is on its way ([`Session::log_served`]), so the client does not wait for it.
    served: Option<(String, AccessEntry)>,
}

/// Legs from their lists of parent ids.
fn legs(lists: &[Vec<u64>]) -> Vec<Leg> {
    lists.iter().map(|parents| engine_leg(parents)).collect()
}

/// A limit from the wire.
fn limit(limit: u64) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

fn ids(ids: Vec<Id>) -> Reply {
    Reply::Ids(ids.into_iter().map(Id::get).collect())
}

fn hits(hits: &[Hit]) -> Vec<WireHit> {
    hits.iter().map(WireHit::from).collect()
}

fn fingerprint(fingerprint: Fingerprint) -> Reply {
    Reply::One(Response::Fingerprint { records: fingerprint.records, chain: fingerprint.chain })
}

fn done() -> Reply {
    Reply::One(Response::Done)
}

fn new_id(id: Id) -> Reply {
    Reply::One(Response::Id(id.get()))
}

impl Session {
    /// A session for `peer`, before any agent is opened.
    pub fn new(state: Arc<ServerState>, id: u64, peer: Peer) -> Session {
        Session { state, id, peer, agent: None, tracking: Tracking::default(), batch: None, served: None }
    }

    /// Whether a batch is being staged (its client must not keep the agent's writers waiting).
    pub fn batch_open(&self) -> bool {
        self.batch.is_some()
    }

    /// Serves `request`, and keeps its access log entry for [`Session::log_served`].
    ///
    /// Only what an agent was asked by whoever holds its token is logged (its session's
    /// requests, an encryption by its token), and what changed the store without one: an agent
    /// created or deleted, one entry each. A peer without a token can neither fill an agent's
    /// log with requests naming it nor make a log for a name no agent has.
    pub fn handle(&mut self, request: Request) -> Reply {
        let operation = request.operation();
        let asked = request.ids();
        let logged = match &request {
            Request::CreateAgent { name, .. } | Request::DeleteAgent { name } => Logged::IfDone(name.clone()),
            // Logged under the agent's name, which the token gives without opening it.
            Request::EncryptAgent { token } => {
                self.state.store.agent_name_of(&Token::from_bytes(*token)).map_or(Logged::Not, Logged::Always)
            }
            Request::AgentIsEncrypted { .. }
            | Request::AgentNames
            | Request::LeftBehind
            | Request::Hello { .. }
            | Request::AgentNameOf { .. } => Logged::Not,
            // The session's agent, or the one this request opens.
            _ => Logged::SessionAgent,
        };
        let writes = request.is_write();
        let served = self.serve(request);
        let done = served.is_ok();
        // A write the client waits to see in the object store: ship it before answering.
        let served = match (served, &self.state.wait_for_ship) {
            (Ok(reply), Some(replicator)) if writes => {
                let id = match &reply {
                    Reply::One(Response::Id(id)) => Some(Id::from(*id)),
                    _ => None,
                };
                super::shipping::ship_for_write(replicator, id).map(|()| reply)
            }
            (served, _) => served,
        };
        let reply = served.unwrap_or_else(|error| Reply::One(Response::failed(&error)));
        let logged_agent = match logged {
            Logged::Always(name) => Some(name),
            Logged::IfDone(name) => done.then_some(name),
            Logged::SessionAgent => self.agent.as_ref().map(|open| open.name.clone()),
            Logged::Not => None,
        };
        self.log_served();
        self.served = logged_agent.map(|name| (name, access::entry(self.peer, operation, asked, &reply)));
        reply
    }

    /// Writes the access log entry of the request served last, if not written yet. The
    /// connection calls it once the answer is sent (or could not be), before it reads on.
    pub fn log_served(&mut self) {
        if let Some((name, entry)) = self.served.take() {
            self.state.access.append(name, entry);
        }
    }

    fn serve(&mut self, request: Request) -> Result<Reply, Error> {
        match request {
            Request::Hello { .. } => Ok(Reply::One(super::reply::hello())),
            Request::OpenAgent { token } => self.open_agent(&Token::from_bytes(token)),
            Request::CreateAgent { name, encrypted } => {
                let store = &self.state.store;
                let token = if encrypted { store.create_encrypted_agent(&name)? } else { store.create_agent(&name)? };
                Ok(Reply::One(Response::Token(*token.as_bytes())))
            }
            Request::EncryptAgent { token } => {
                // An agent this session has open is in use like any other: the store refuses.
                Ok(fingerprint(self.state.store.encrypt_agent(&Token::from_bytes(token))?))
            }
            Request::AgentIsEncrypted { name } => Ok(Reply::One(Response::Flag(self.state.store.is_encrypted(&name)?))),
            Request::AgentNameOf { token } => {
                Ok(Reply::One(Response::Name(self.state.store.agent_name_of(&Token::from_bytes(token))?)))
            }
            Request::AgentNames => Ok(Reply::Names(self.state.store.agent_names()?)),
            Request::DeleteAgent { name } => self.state.store.delete_agent(&name).map(|()| done()),
            Request::LeftBehind => {
                Ok(Reply::LeftBehind(self.state.store.left_behind()?.iter().map(WireLeftBehind::from).collect()))
            }
            Request::TrackReads { on } => {
                self.tracking.set(on);
                Ok(done())
            }
            Request::BatchStage(write) => self.stage(write),
            Request::BatchCommit => self.commit(),
            Request::BatchDrop => {
                self.drop_batch();
                Ok(done())
            }
            request if request.is_write() => self.write(request),
            request => self.read(request),
        }
    }

    fn open_agent(&mut self, token: &Token) -> Result<Reply, Error> {
        if self.agent.is_some() {
            return Err(Error::MalformedMessage { reason: "an agent is open on this connection already" });
        }
        let agent = self.state.store.open_agent(token)?;
        let name = agent.name()?;
        let gate = self.state.gates.of(&name);
        self.agent = Some(OpenAgent { agent, name, gate });
        Ok(done())
    }

    fn open(&self) -> Result<&OpenAgent, Error> {
        self.agent.as_ref().ok_or(Error::MalformedMessage { reason: "a request before an agent was opened" })
    }

    /// A write outside a batch: it passes the agent's gate beside other such writes.
    fn write(&mut self, request: Request) -> Result<Reply, Error> {
        if self.batch.is_some() {
            return Err(Error::MalformedMessage { reason: "a batch is open: write through the batch" });
        }
        let open = self.open()?;
        let (agent, gate) = (&open.agent, open.gate.clone());
        let reads = self.tracking.reads();
        let reply = gate.write(|| -> Result<Reply, Error> {
            Ok(match request {
                Request::AddLot { label, content } => new_id(agent.add_lot(&label, &content)?),
                Request::Remember { content, legs: lists, reads: given } => {
                    let mut all_reads = reads.cloned().unwrap_or_default();
                    given.into_iter().for_each(|id| all_reads.note(Id::from(id)));
                    new_id(agent.remember_tracked(&content, &legs(&lists), &all_reads)?)
                }
                Request::Recall { id, mode, removal } => {
                    ids(agent.recall(Id::from(id), mode.into(), removal.into())?)
                }
                Request::Compact => agent.compact().map(|()| done())?,
                Request::SetVector { id, vector } => agent.set_vector(Id::from(id), &vector).map(|()| done())?,
                _ => return Err(Error::Internal { what: "a request the server sorts as a write is one" }),
            })
        })?;
        if let Reply::One(Response::Id(_)) = reply {
            self.tracking.clear();
        }
        Ok(reply)
    }

    /// A request that writes nothing.
    fn read(&mut self, request: Request) -> Result<Reply, Error> {
        let agent = &self.open()?.agent;
        Ok(match request {
            Request::PreviewRecall { id, mode, removal } => {
                ids(agent.preview_recall_with(Id::from(id), mode.into(), removal.into())?)
            }
            Request::Get { id } => {
                let node = agent.get(Id::from(id))?;
                self.tracking.note_node(&node);
                Reply::One(Response::Node(WireNode::from(&node)))
            }
            Request::Audit { id } => Reply::One(Response::Node(WireNode::from(&agent.audit(Id::from(id))?))),
            Request::Name => Reply::One(Response::Name(agent.name()?)),
            Request::Lots => ids(agent.lots()?),
            Request::Memories => ids(agent.memories()?),
            Request::Verify => fingerprint(agent.verify()?),
            Request::VerifyExtends { records, chain } => {
                fingerprint(agent.verify_extends(&Fingerprint { records, chain })?)
            }
            Request::Report => Reply::One(Response::Report(WireReport::from(&agent.report()))),
            Request::Search { query, limit: most } => self.found(&agent.search(&query, limit(most))?),
            Request::SearchVector { vector, limit: most } => self.found(&agent.search_vector(&vector, limit(most))?),
            Request::SearchHybrid { query, vector, limit: most } => {
                self.found(&agent.search_hybrid(&query, &vector, limit(most))?)
            }
            Request::HasVector { id } => Reply::One(Response::Flag(agent.has_vector(Id::from(id))?)),
            Request::IsEncrypted => Reply::One(Response::Flag(agent.is_encrypted())),
            Request::Trust { id } => {
                Reply::One(Response::Trust(agent.trust(Id::from(id), &self.state.trust_rules)?.into()))
            }
            Request::SearchPage { query, vector, limit: most, least_trust, among } => {
                let mut asked = SearchQuery::new(&query, limit(most)).least_trust(least_trust.into());
                asked.vector = vector;
                asked.among = among.map(|ids| ids.into_iter().map(Id::from).collect());
                self.page(&agent.search_page(&asked, &self.state.trust_rules)?)
            }
            _ => return Err(Error::Internal { what: "a request the server sorts as a read is one" }),
        })
    }

    /// The hits of a search, noted as read.
    fn found(&mut self, found: &[Hit]) -> Reply {
        let hits = hits(found);
        self.tracking.note_hits(&hits);
        Reply::Hits(hits)
    }

    /// A page of hits, noted as read.
    fn page(&mut self, page: &SearchPage) -> Reply {
        self.tracking.note_ids(page.found.iter().map(|found| found.id));
        Reply::Page {
            ranking: WireRanking::from(&page.ranking),
            found: page.found.iter().map(WireFound::from).collect(),
        }
    }

    /// One write of the session's batch; the first opens it, holding the agent's gate.
    fn stage(&mut self, write: BatchWrite) -> Result<Reply, Error> {
        let open =
            self.agent.as_ref().ok_or(Error::MalformedMessage { reason: "a request before an agent was opened" })?;
        let batch = match &mut self.batch {
            Some(batch) => batch,
            None => {
                open.gate.hold(self.id);
                self.batch.insert(OpenBatch { staged: StagedBatch::default(), remembered: false })
            }
        };
        let reads = self.tracking.reads();
        batch.remembered |= matches!(write, BatchWrite::Remember { .. });
        open.agent.stage(&mut batch.staged, |batch| match write {
            BatchWrite::AddLot { label, content } => batch.add_lot(&label, &content).map(new_id),
            BatchWrite::Remember { content, legs: lists } => match reads {
                Some(reads) => batch.remember_tracked(&content, &legs(&lists), reads).map(new_id),
                None => batch.remember(&content, &legs(&lists)).map(new_id),
            },
            BatchWrite::SetVector { id, vector } => batch.set_vector(Id::from(id), &vector).map(|()| done()),
        })
    }

    /// Writes the session's batch (an empty one if none was staged) and lets go of the gate.
    fn commit(&mut self) -> Result<Reply, Error> {
        let open =
            self.agent.as_ref().ok_or(Error::MalformedMessage { reason: "a request before an agent was opened" })?;
        let batch = self.batch.take();
        let remembered = batch.as_ref().is_some_and(|batch| batch.remembered);
        let outcome = open.agent.commit_staged(batch.map(|batch| batch.staged).unwrap_or_default());
        open.gate.release(self.id);
        outcome?;
        if remembered {
            self.tracking.clear();
        }
        Ok(done())
    }

    /// Drops the session's batch, if any, and lets go of the gate.
    fn drop_batch(&mut self) {
        if self.batch.take().is_some() {
            if let Some(open) = &self.agent {
                open.gate.release(self.id);
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.log_served();
        self.drop_batch();
    }
}
