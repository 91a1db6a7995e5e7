//! The names of a replica's objects. An agent's objects live under a folder named from the
//! SHA-256 of its name, never from the name itself, so no name can reach another key.

use alloc::format;
use alloc::string::String;

use crate::replica::head::Piece;
use sha2::{Digest, Sha256};

/// Where in a bucket a store's replicas live: empty, or a path ending in `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaPrefix(String);

impl ReplicaPrefix {
    /// The prefix `path` (leading and trailing slashes are ignored; empty is the bucket's root).
    #[must_use]
    pub fn new(path: &str) -> ReplicaPrefix {
        let trimmed = path.trim_matches('/');
        if trimmed.is_empty() {
            ReplicaPrefix(String::new())
        } else {
            ReplicaPrefix(format!("{trimmed}/"))
        }
    }

    /// The prefix as keys start with it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The folder of the agent named `name`: every key of its replica starts with it.
#[must_use]
pub fn agent_prefix(prefix: &ReplicaPrefix, name: &str) -> String {
    let digest = Sha256::digest(name.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    format!("{}agents/{hex}/", prefix.as_str())
}

/// The key of the agent's head.
#[must_use]
pub fn head_key(prefix: &ReplicaPrefix, name: &str) -> String {
    format!("{}head", agent_prefix(prefix, name))
}

/// The key of the object holding `piece` of the agent named `name`.
#[must_use]
pub fn piece_key(prefix: &ReplicaPrefix, name: &str, piece: &Piece) -> String {
    format!("{}{}/{:016x}-{:016x}-{:016x}", agent_prefix(prefix, name), piece.file, piece.start, piece.end, piece.run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_normalised_and_names_never_reach_keys() {
        assert_eq!(ReplicaPrefix::new("/fleet/a/").as_str(), "fleet/a/");
        assert_eq!(ReplicaPrefix::new("").as_str(), "");
        let key = head_key(&ReplicaPrefix::new("p"), "../../etc");
        assert!(key.starts_with("p/agents/") && key.ends_with("/head") && !key.contains(".."), "{key}");
        assert_eq!(key.len(), "p/agents/".len() + 64 + "/head".len());
    }
}
