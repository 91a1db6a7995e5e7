//! One connection's session: the agent it opened and what each request does to it. The
//! session's read tracking and its staged batch are those of its own handle of the agent (the
//! library's `ReadTracking` and batch gate, as for an agent open in a program), so a session
//! only remembers whether it opened a batch.

use std::sync::Arc;

use crate::protocol::{
    engine_legs, engine_limit, BatchWrite, Request, Response, WireFound, WireLeftBehind, WireNode, WireRanking,
    WireSpaceMembers,
};
use crate::{Agent, Error, Fingerprint, Id, InternalRule, MessageProblem, ReadSet, SearchPage, SearchQuery, Token};

use super::access;
use super::answers::{done, fingerprint, found, ids, new_id};
use super::peer::Peer;
use super::reply::Reply;
use super::ServerState;
use crate::access_log::AccessEntry;

/// The agent a session opened: a handle of its own, whose reads and staged batch are the
/// session's.
struct OpenAgent {
    agent: Agent,
    name: String,
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

/// One connection's state on the server.
pub struct Session {
    state: Arc<ServerState>,
    peer: Peer,
    agent: Option<OpenAgent>,
    /// Whether read tracking was asked for, so that an agent opened after the request tracks.
    tracking_asked: bool,
    /// Whether this session is staging a batch; while it is, its agent's other writers wait.
    batch_open: bool,
    /// The access log entry of the request just served, with its agent's name: written once
    /// the answer is on its way ([`Session::log_served`]), so the client does not wait for it.
    served: Option<(String, AccessEntry)>,
}

impl Session {
    /// A session for `peer`, before any agent is opened.
    pub fn new(state: Arc<ServerState>, peer: Peer) -> Session {
        Session { state, peer, agent: None, tracking_asked: false, batch_open: false, served: None }
    }

    /// Whether a batch is being staged (its client must not keep the agent's writers waiting).
    pub fn batch_open(&self) -> bool {
        self.batch_open
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
            | Request::SpaceNames
            | Request::Spaces
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
                self.tracking_asked = on;
                if let Some(open) = &self.agent {
                    open.agent.track_reads(on)?;
                }
                Ok(done())
            }
            Request::SpaceNames => Ok(Reply::Names(self.state.store.space_names()?)),
            Request::Spaces => {
                Ok(Reply::Spaces(self.state.store.spaces()?.into_iter().map(WireSpaceMembers::from).collect()))
            }
            Request::CreateSpace { name } => {
                self.refuse_in_batch()?;
                self.state.store.create_space(&name, &self.open()?.agent).map(|_| done())
            }
            Request::Space { space, call } => {
                if call.is_write() {
                    self.refuse_in_batch()?;
                }
                super::space_calls::serve(&self.open()?.agent, &space, call)
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
            return Err(Error::MalformedMessage { reason: MessageProblem::AgentAlreadyOpen });
        }
        let agent = self.state.store.open_agent(token)?;
        let name = agent.name()?;
        if self.tracking_asked {
            agent.track_reads(true)?;
        }
        let opened = Response::AgentOpened { encrypted: agent.is_encrypted(), report: agent.report() };
        self.agent = Some(OpenAgent { agent, name });
        Ok(Reply::One(opened))
    }

    fn open(&self) -> Result<&OpenAgent, Error> {
        self.agent.as_ref().ok_or(Error::MalformedMessage { reason: MessageProblem::NoAgentOpen })
    }

    /// Refuses a write outside the batch this session is staging, which would wait for it.
    fn refuse_in_batch(&self) -> Result<(), Error> {
        if self.batch_open {
            return Err(Error::MalformedMessage { reason: MessageProblem::BatchOpen });
        }
        Ok(())
    }

    /// A write outside a batch: it waits while another session stages a batch of the agent. A
    /// memory gets the session's tracked reads, which the agent forgets once it is written.
    fn write(&mut self, request: Request) -> Result<Reply, Error> {
        self.refuse_in_batch()?;
        let agent = &self.open()?.agent;
        Ok(match request {
            Request::AddLot { label, content } => new_id(agent.add_lot(&label, &content)?),
            Request::Remember { content, legs: lists, reads: given } => {
                let given: ReadSet = given.into_iter().map(Id::from).collect();
                new_id(agent.remember_tracked(&content, &engine_legs(&lists), &given)?)
            }
            Request::Recall { id, mode, removal } => ids(agent.recall(Id::from(id), mode.into(), removal.into())?),
            Request::Compact => agent.compact().map(|()| done())?,
            Request::SetVector { id, vector } => agent.set_vector(Id::from(id), &vector).map(|()| done())?,
            _ => return Err(Error::Internal { what: InternalRule::RequestSortedAsWriteIsOne }),
        })
    }

    /// A request that writes nothing.
    fn read(&mut self, request: Request) -> Result<Reply, Error> {
        let agent = &self.open()?.agent;
        Ok(match request {
            Request::PreviewRecall { id, mode, removal } => {
                ids(agent.preview_recall_with(Id::from(id), mode.into(), removal.into())?)
            }
            Request::Get { id } => Reply::One(Response::Node(WireNode::from(&agent.get(Id::from(id))?))),
            Request::Audit { id } => Reply::One(Response::Node(WireNode::from(&agent.audit(Id::from(id))?))),
            Request::Name => Reply::One(Response::Name(agent.name()?)),
            Request::Lots => ids(agent.lots()?),
            Request::Memories => ids(agent.memories()?),
            Request::Verify => fingerprint(agent.verify()?),
            Request::VerifyExtends { records, chain } => {
                fingerprint(agent.verify_extends(&Fingerprint { records, chain })?)
            }
            Request::Report => Reply::One(Response::Report(agent.report())),
            Request::Search { query, limit: most } => found(&agent.search(&query, engine_limit(most))?),
            Request::SearchVector { vector, limit: most } => found(&agent.search_vector(&vector, engine_limit(most))?),
            Request::SearchHybrid { query, vector, limit: most } => {
                found(&agent.search_hybrid(&query, &vector, engine_limit(most))?)
            }
            Request::HasVector { id } => Reply::One(Response::Flag(agent.has_vector(Id::from(id))?)),
            Request::SpaceName { number } => Reply::One(Response::Name(agent.space_name(number)?)),
            Request::IsEncrypted => Reply::One(Response::Flag(agent.is_encrypted())),
            Request::Trust { id } => Reply::One(Response::Trust(agent.trust(Id::from(id))?.into())),
            Request::SearchPage { query, vector, limit: most, least_trust, among } => {
                let mut asked = SearchQuery::new(&query, engine_limit(most)).least_trust(least_trust.into());
                asked.vector = vector;
                asked.among = among.map(|ids| ids.into_iter().map(Id::from).collect());
                page(&agent.search_page(&asked)?)
            }
            _ => return Err(Error::Internal { what: InternalRule::RequestSortedAsReadIsOne }),
        })
    }

    /// One write of the session's batch; the first opens it, and the agent's other writers
    /// wait until it ends.
    fn stage(&mut self, write: BatchWrite) -> Result<Reply, Error> {
        let agent = &self.agent.as_ref().ok_or(Error::MalformedMessage { reason: MessageProblem::NoAgentOpen })?.agent;
        if !self.batch_open {
            agent.begin_staged()?;
            self.batch_open = true;
        }
        agent.stage(|batch| match write {
            BatchWrite::AddLot { label, content } => batch.add_lot(&label, &content).map(new_id),
            BatchWrite::Remember { content, legs: lists } => batch.remember(&content, &engine_legs(&lists)).map(new_id),
            BatchWrite::SetVector { id, vector } => batch.set_vector(Id::from(id), &vector).map(|()| done()),
        })
    }

    /// Writes the session's batch (nothing if none was staged) and lets the other writers go on.
    fn commit(&mut self) -> Result<Reply, Error> {
        let agent = &self.agent.as_ref().ok_or(Error::MalformedMessage { reason: MessageProblem::NoAgentOpen })?.agent;
        self.batch_open = false;
        agent.commit_staged().map(|()| done())
    }

    /// Drops the session's batch, if any, and lets the other writers go on.
    fn drop_batch(&mut self) {
        if std::mem::take(&mut self.batch_open) {
            if let Some(open) = &self.agent {
                let _ = open.agent.drop_staged();
            }
        }
    }
}

/// A page of hits (noted as read by the agent, as a search's).
fn page(page: &SearchPage) -> Reply {
    Reply::Page { ranking: WireRanking::from(&page.ranking), found: page.found.iter().map(WireFound::from).collect() }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.log_served();
        self.drop_batch();
    }
}
