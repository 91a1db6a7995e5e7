//! The names of a replica's objects. An agent's objects live under a folder named from the
//! SHA-256 of its name, never from the name itself, so no name can reach another key.

use alloc::format;
use alloc::string::String;

use crate::replica::head::{is_shipped_file_name, Piece};
pub use crate::replica::owner::Owner;
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

/// A byte no UTF-8 text holds: after a space's name, it keeps the space's folder apart from that
/// of every agent, whatever their names.
const SPACE_MARK: u8 = 0xff;

/// The folder of `owner`'s replica: every key of it starts with it.
#[must_use]
pub fn agent_prefix(prefix: &ReplicaPrefix, owner: Owner<'_>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(owner.name.as_bytes());
    if owner.space {
        hasher.update([SPACE_MARK]);
    }
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    format!("{}agents/{hex}/", prefix.as_str())
}

/// The key of the head of `owner`'s replica.
#[must_use]
pub fn head_key(prefix: &ReplicaPrefix, owner: Owner<'_>) -> String {
    format!("{}head", agent_prefix(prefix, owner))
}

/// The key of the object holding `piece` of `owner`'s replica.
#[must_use]
pub fn piece_key(prefix: &ReplicaPrefix, owner: Owner<'_>, piece: &Piece) -> String {
    format!("{}{}/{:016x}-{:016x}-{:016x}", agent_prefix(prefix, owner), piece.file, piece.start, piece.end, piece.run)
}

/// What a key is, read from its shape alone: the head or a piece of one agent's replica under
/// `prefix`. A key of any other shape (outside the prefix, in no agent folder, or naming no file
/// the engine ships) is no part of the replica: it is never read as a piece, nor deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaKey<'key> {
    /// The head of the agent whose folder is this (the prefix, `agents/`, 64 hex digits, `/`).
    Head {
        /// The agent's folder, as [`agent_prefix`] makes it.
        folder: &'key str,
    },
    /// A piece of the agent whose folder is this.
    Piece {
        /// The agent's folder, as [`agent_prefix`] makes it.
        folder: &'key str,
    },
}

/// Hex digits in an agent folder's name (a SHA-256).
const FOLDER_HEX_DIGITS: usize = 64;
/// Hex digits of each of a piece key's three numbers.
const PIECE_NUMBER_HEX_DIGITS: usize = 16;

/// What `key` is in the replicas under `prefix`, or `None` when it is none of their keys.
#[must_use]
pub fn classify_key<'key>(prefix: &ReplicaPrefix, key: &'key str) -> Option<ReplicaKey<'key>> {
    let agents = format!("{}agents/", prefix.as_str());
    let rest = key.strip_prefix(agents.as_str())?;
    let (hex, inside) = rest.split_once('/')?;
    let lower_hex = |text: &str| text.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    if hex.len() != FOLDER_HEX_DIGITS || !lower_hex(hex) {
        return None;
    }
    let folder = key.get(..agents.len() + FOLDER_HEX_DIGITS + 1)?;
    if inside == "head" {
        return Some(ReplicaKey::Head { folder });
    }
    let (file, numbers) = inside.split_once('/')?;
    // The start, the end and the run, as `piece_key` writes them.
    let well_formed = numbers.split('-').count() == 3
        && numbers.split('-').all(|number| number.len() == PIECE_NUMBER_HEX_DIGITS && lower_hex(number));
    (well_formed && is_shipped_file_name(file)).then_some(ReplicaKey::Piece { folder })
}

/// Whether `key` is the key of a piece of `owner`'s replica under `prefix`: the only keys a
/// shipper may delete as leftovers of its own.
#[must_use]
pub fn is_piece_key_of(prefix: &ReplicaPrefix, owner: Owner<'_>, key: &str) -> bool {
    matches!(classify_key(prefix, key), Some(ReplicaKey::Piece { folder }) if folder == agent_prefix(prefix, owner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn prefixes_are_normalised_and_names_never_reach_keys() {
        assert_eq!(ReplicaPrefix::new("/fleet/a/").as_str(), "fleet/a/");
        assert_eq!(ReplicaPrefix::new("").as_str(), "");
        let key = head_key(&ReplicaPrefix::new("p"), Owner::agent("../../etc"));
        assert!(key.starts_with("p/agents/") && key.ends_with("/head") && !key.contains(".."), "{key}");
        assert_eq!(key.len(), "p/agents/".len() + 64 + "/head".len());
        let prefix = ReplicaPrefix::new("p");
        assert_ne!(head_key(&prefix, Owner::space("team")), head_key(&prefix, Owner::agent("team")));
        let space_head = head_key(&prefix, Owner::space("team"));
        assert!(matches!(classify_key(&prefix, &space_head), Some(ReplicaKey::Head { .. })));
    }

    #[test]
    fn only_keys_of_the_exact_shape_under_the_prefix_belong_to_a_replica() {
        let prefix = ReplicaPrefix::new("fleet");
        let piece = Piece { file: "keys".to_string(), start: 0, end: 64, run: 7, digest: [0; 32] };
        let own = piece_key(&prefix, Owner::agent("alice"), &piece);
        let folder = agent_prefix(&prefix, Owner::agent("alice"));
        assert_eq!(classify_key(&prefix, &own), Some(ReplicaKey::Piece { folder: &folder }));
        assert!(is_piece_key_of(&prefix, Owner::agent("alice"), &own));
        assert!(!is_piece_key_of(&prefix, Owner::agent("bob"), &own), "another agent's piece");
        let head = head_key(&prefix, Owner::agent("alice"));
        assert_eq!(classify_key(&prefix, &head), Some(ReplicaKey::Head { folder: &folder }));
        assert!(!is_piece_key_of(&prefix, Owner::agent("alice"), &head), "the head is never a leftover");
        let other_prefix = piece_key(&ReplicaPrefix::new("other"), Owner::agent("alice"), &piece);
        let segment = Piece { file: "segment-0000000000000001.log".to_string(), ..piece.clone() };
        assert!(is_piece_key_of(&prefix, Owner::agent("alice"), &piece_key(&prefix, Owner::agent("alice"), &segment)));
        for foreign in [
            "victim/keep-me".to_string(),
            other_prefix,
            format!("{folder}keep-me"),
            format!("{folder}catalog/0000000000000000-0000000000000040-0000000000000007"),
            format!("{folder}keys/0000000000000000-0000000000000040"),
            format!("{folder}keys/0000000000000000-0000000000000040-000000000000000G"),
            format!("{folder}keys/0000000000000000-0000000000000040-0000000000000007/more"),
            format!("{}AGENTS/{}", prefix.as_str(), &own[folder.len()..]),
            own.to_uppercase(),
        ] {
            assert_eq!(classify_key(&prefix, &foreign), None, "{foreign}");
            assert!(!is_piece_key_of(&prefix, Owner::agent("alice"), &foreign), "{foreign}");
        }
    }
}
