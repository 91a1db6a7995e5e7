//! The keys an agent's token yields. The store never keeps the token, so without it these keys
//! cannot be made from anything in the store folder.

use sha2::{Digest, Sha256};

use super::SecretKey;

const ROOT_DOMAIN: &[u8] = b"cheesedb/agent-key/v1\0";
const SLOT_DOMAIN: &[u8] = b"cheesedb/key-table-key/v1\0";
const EPOCH_DOMAIN: &[u8] = b"cheesedb/epoch-wrapping-key/v1\0";

/// The two wrapping keys of an encrypted agent, derived from its token.
#[derive(Clone)]
pub struct AgentSecrets {
    /// Wraps node secrets in the key table.
    pub slot_key: SecretKey,
    /// Wraps epoch keys in the epoch file.
    pub epoch_wrapping_key: SecretKey,
}

impl AgentSecrets {
    /// The keys of the agent whose token is `token`.
    #[must_use]
    pub fn from_token(token: &[u8; 32]) -> AgentSecrets {
        let root = derive(ROOT_DOMAIN, token);
        AgentSecrets { slot_key: derive(SLOT_DOMAIN, &root), epoch_wrapping_key: derive(EPOCH_DOMAIN, &root) }
    }
}

impl core::fmt::Debug for AgentSecrets {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.write_str("AgentSecrets(..)")
    }
}

fn derive(domain: &[u8], from: &[u8; 32]) -> SecretKey {
    let mut hasher = Sha256::new();
    hasher.update(domain);
    hasher.update(from);
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::token_hash;

    #[test]
    fn the_keys_differ_from_each_other_and_from_what_the_catalog_keeps() {
        let token = [5u8; 32];
        let secrets = AgentSecrets::from_token(&token);
        assert_ne!(secrets.slot_key, secrets.epoch_wrapping_key);
        assert_ne!(secrets.slot_key, token_hash(&token));
        assert_ne!(secrets.epoch_wrapping_key, token_hash(&token));
        assert_ne!(secrets.slot_key, AgentSecrets::from_token(&[6u8; 32]).slot_key);
        assert_eq!(alloc::format!("{secrets:?}"), "AgentSecrets(..)");
    }
}
