//! The proof that an agent's token was checked, which every call on the agent and its spaces
//! takes.

/// Proof that a token was checked: the agent it opens, made only by
/// [`StoreEngine::authenticate`](crate::StoreEngine::authenticate) and taken by [`StoreEngine::open_agent`](crate::StoreEngine::open_agent). A bare agent number
/// opens nothing:
///
/// ```compile_fail
/// # use cheesedb_core::{ram_storage::RamStorage, Options, StoreEngine};
/// let store = StoreEngine::open(RamStorage::default(), Options::default()).unwrap();
/// let _ = store.open_agent(1);
/// ```
///
/// and no key can be made by hand:
///
/// ```compile_fail
/// let _ = cheesedb_core::AgentKey { number: 1 };
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentKey {
    number: u64,
    /// The token it was made from: an encrypted agent's keys are derived from it.
    token: [u8; 32],
}

impl core::fmt::Debug for AgentKey {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.debug_struct("AgentKey").field("number", &self.number).finish_non_exhaustive()
    }
}

impl AgentKey {
    /// The key of agent `number`, whose token is `token`: made only once the token was checked.
    pub(crate) fn new(number: u64, token: [u8; 32]) -> AgentKey {
        AgentKey { number, token }
    }

    /// The token the key was made from.
    pub(crate) fn token(&self) -> &[u8; 32] {
        &self.token
    }

    /// The number of the agent, as its folder and the catalog name it.
    #[must_use]
    pub fn number(self) -> u64 {
        self.number
    }
}
