//! One agent as a command sees it: opened in this process, or reached through the memory
//! server that holds the store. Both answer the same methods with the same errors, so a
//! command never asks which it has.

use cheesedb::{
    Agent, ClientAgent, Error, Fingerprint, Id, Leg, Mode, Node, ReadSet, Removal, Report, SearchPage, SearchQuery,
    Store, TrustLevel, TrustRules, VectorProblem,
};

/// An opened agent.
#[derive(Debug)]
pub enum AgentHandle {
    /// The store is open in this process, for as long as the handle lives.
    Local {
        /// The agent.
        agent: Agent,
        /// Held so the folder stays ours until the command is done with the agent.
        _store: Store,
        /// The data folder's `trust.toml`, read when the agent was opened.
        trust_rules: TrustRules,
    },
    /// A memory server holds the store; every call is one request to it.
    Served {
        /// The agent's session on the server.
        agent: ClientAgent,
        /// Whether the command was asked to write nothing (`--read-only`): the server's store
        /// is writable, so the handle refuses writes itself.
        read_only: bool,
    },
}

/// Writes one method per line that both kinds of handle answer alike. A `write` method is
/// refused with `Error::ReadOnly` on a served handle opened read-only, before any request.
macro_rules! answered_alike {
    ($($(#[$doc:meta])* $access:ident fn $name:ident($($argument:ident: $type:ty),*) -> $answer:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&self $(, $argument: $type)*) -> Result<$answer, Error> {
                match self {
                    AgentHandle::Local { agent, .. } => agent.$name($($argument),*),
                    AgentHandle::Served { agent, read_only } => {
                        answered_alike!(@check $access, *read_only);
                        agent.$name($($argument),*)
                    }
                }
            }
        )*
    };
    (@check write, $read_only:expr) => {
        if $read_only {
            return Err(Error::ReadOnly);
        }
    };
    (@check read, $read_only:expr) => {
        let _ = $read_only;
    };
}

impl AgentHandle {
    /// The handle of `agent`, opened from `store` in this process, judged by `trust_rules`.
    pub fn in_process(agent: Agent, store: Store, trust_rules: TrustRules) -> AgentHandle {
        AgentHandle::Local { agent, _store: store, trust_rules }
    }

    answered_alike! {
        /// Adds a lot.
        write fn add_lot(label: &str, content: &[u8]) -> Id;
        /// Adds a memory learned from `legs`.
        write fn remember(content: &[u8], legs: &[Leg]) -> Id;
        /// Adds a memory learned from `legs` and from everything in `reads`.
        write fn remember_tracked(content: &[u8], legs: &[Leg], reads: &ReadSet) -> Id;
        /// One lot or memory; a recalled one without its text.
        read fn get(id: Id) -> Node;
        /// One lot or memory with the text a recall left in the files.
        read fn audit(id: Id) -> Node;
        /// The alive lots, in id order.
        read fn lots() -> Vec<Id>;
        /// The alive memories, in id order.
        read fn memories() -> Vec<Id>;
        /// Gives `id` its vector.
        write fn set_vector(id: Id, vector: &[f32]) -> ();
        /// Whether `id` has a vector.
        read fn has_vector(id: Id) -> bool;
        /// What the recall would remove, writing nothing.
        read fn preview_recall_with(id: Id, mode: Mode, removal: Removal) -> Vec<Id>;
        /// Recalls `id` and what was learned from it.
        write fn recall(id: Id, mode: Mode, removal: Removal) -> Vec<Id>;
        /// Checks the whole history.
        read fn verify() -> Fingerprint;
        /// Checks the whole history and that it passes through `kept`.
        read fn verify_extends(kept: &Fingerprint) -> Fingerprint;
        /// Rewrites the files without the text of recalled nodes.
        write fn compact() -> ();
        /// The agent's name.
        read fn name() -> String;
    }

    /// How far `id` can be trusted, by the rules of the data folder's `trust.toml`.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` for an id of no lot or memory; the server's errors when served.
    pub fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        match self {
            AgentHandle::Local { agent, trust_rules, .. } => agent.trust(id, trust_rules),
            AgentHandle::Served { agent, .. } => agent.trust(id),
        }
    }

    /// One page of hits with their content and trust, by the rules of the data folder's
    /// `trust.toml`, low-trust hits passed over inside the engine: one request when served.
    ///
    /// # Errors
    ///
    /// As `Agent::search_page`; the server's errors when served.
    pub fn search_page(&self, query: &SearchQuery) -> Result<SearchPage, Error> {
        match self {
            AgentHandle::Local { agent, trust_rules, .. } => agent.search_page(query, trust_rules),
            AgentHandle::Served { agent, .. } => agent.search_page(query),
        }
    }

    /// Gives each id its vector, all in one durable write. A vector the engine refuses is
    /// left out and returned with the reason, so the others are still stored.
    ///
    /// # Errors
    ///
    /// The first error that is not about one vector; then nothing is stored.
    pub fn set_vectors(&self, items: &[(Id, &[f32])]) -> Result<Vec<(Id, VectorProblem)>, Error> {
        match self {
            AgentHandle::Local { agent, .. } => {
                agent.batch(|batch| refuse_bad_vectors(items, |id, vector| batch.set_vector(id, vector)))
            }
            AgentHandle::Served { read_only: true, .. } => Err(Error::ReadOnly),
            AgentHandle::Served { agent, .. } => {
                agent.batch(|batch| refuse_bad_vectors(items, |id, vector| batch.set_vector(id, vector)))
            }
        }
    }

    /// What opening the agent found and did (the server's open, when served).
    ///
    /// # Errors
    ///
    /// None in this process; the server's errors when served.
    pub fn report(&self) -> Result<Report, Error> {
        match self {
            AgentHandle::Local { agent, .. } => Ok(agent.report()),
            AgentHandle::Served { agent, .. } => agent.report(),
        }
    }

    /// Whether a memory server holds the store.
    pub fn is_served(&self) -> bool {
        matches!(self, AgentHandle::Served { .. })
    }
}

/// Sets each vector with `set`, keeping the ones the engine refuses (checked before anything of
/// them is in the batch, so the rest can go on) and stopping at any other error.
fn refuse_bad_vectors(
    items: &[(Id, &[f32])],
    mut set: impl FnMut(Id, &[f32]) -> Result<(), Error>,
) -> Result<Vec<(Id, VectorProblem)>, Error> {
    let mut refused = Vec::new();
    for (id, vector) in items {
        match set(*id, vector) {
            Ok(()) => {}
            Err(Error::InvalidVector { problem }) => refused.push((*id, problem)),
            Err(error) => return Err(error),
        }
    }
    Ok(refused)
}
