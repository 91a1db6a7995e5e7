//! One agent as a command sees it: opened in this process, or reached through the memory
//! server that holds the store. Both answer the same methods with the same errors, so a
//! command never asks which it has.

use cheesedb::{
    Agent, Error, Fingerprint, Hit, Id, Leg, Mode, Node, ReadSet, Removal, Report, Store, TrustLevel, TrustRules,
    VectorProblem,
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
    },
}

/// Writes one method per line that both kinds of handle answer alike.
macro_rules! answered_alike {
    ($($(#[$doc:meta])* fn $name:ident($($argument:ident: $type:ty),*) -> $answer:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&self $(, $argument: $type)*) -> Result<$answer, Error> {
                match self {
                    AgentHandle::Local { agent, .. } => agent.$name($($argument),*),
                }
            }
        )*
    };
}

impl AgentHandle {
    /// The handle of `agent`, opened from `store` in this process.
    pub fn in_process(agent: Agent, store: Store) -> AgentHandle {
        AgentHandle::Local { agent, _store: store }
    }

    answered_alike! {
        /// Adds a lot.
        fn add_lot(label: &str, content: &[u8]) -> Id;
        /// Adds a memory learned from `legs`.
        fn remember(content: &[u8], legs: &[Leg]) -> Id;
        /// Adds a memory learned from `legs` and from everything in `reads`.
        fn remember_tracked(content: &[u8], legs: &[Leg], reads: &ReadSet) -> Id;
        /// How far `id` is to be believed under `rules`.
        fn trust(id: Id, rules: &TrustRules) -> TrustLevel;
        /// One lot or memory; a recalled one without its text.
        fn get(id: Id) -> Node;
        /// One lot or memory with the text a recall left in the files.
        fn audit(id: Id) -> Node;
        /// The alive lots, in id order.
        fn lots() -> Vec<Id>;
        /// The alive memories, in id order.
        fn memories() -> Vec<Id>;
        /// The best matches of `query` by words.
        fn search(query: &str, limit: usize) -> Vec<Hit>;
        /// The best matches of `query` by words and of `vector` by meaning.
        fn search_hybrid(query: &str, vector: &[f32], limit: usize) -> Vec<Hit>;
        /// Gives `id` its vector.
        fn set_vector(id: Id, vector: &[f32]) -> ();
        /// Whether `id` has a vector.
        fn has_vector(id: Id) -> bool;
        /// What the recall would remove, writing nothing.
        fn preview_recall_with(id: Id, mode: Mode, removal: Removal) -> Vec<Id>;
        /// Recalls `id` and what was learned from it.
        fn recall(id: Id, mode: Mode, removal: Removal) -> Vec<Id>;
        /// Checks the whole history.
        fn verify() -> Fingerprint;
        /// Checks the whole history and that it passes through `kept`.
        fn verify_extends(kept: &Fingerprint) -> Fingerprint;
        /// Rewrites the files without the text of recalled nodes.
        fn compact() -> ();
    }

    /// Gives each id its vector, all in one durable write. A vector the engine refuses is
    /// left out and returned with the reason, so the others are still stored.
    ///
    /// # Errors
    ///
    /// The first error that is not about one vector; then nothing is stored.
    pub fn set_vectors(&self, items: &[(Id, &[f32])]) -> Result<Vec<(Id, VectorProblem)>, Error> {
        match self {
            AgentHandle::Local { agent, .. } => agent.batch(|batch| {
                let mut refused = Vec::new();
                for (id, vector) in items {
                    match batch.set_vector(*id, vector) {
                        Ok(()) => {}
                        // Checked before anything of it is in the batch, so the rest can go on.
                        Err(Error::InvalidVector { problem }) => refused.push((*id, problem)),
                        Err(error) => return Err(error),
                    }
                }
                Ok(refused)
            }),
        }
    }

    /// What opening the agent found and did.
    ///
    /// # Errors
    ///
    /// None in this process; the server's errors when it is reached through one.
    pub fn report(&self) -> Result<Report, Error> {
        match self {
            AgentHandle::Local { agent, .. } => Ok(agent.report()),
        }
    }
}
