//! SHA-256 with a separate domain for each use, so a digest made for one purpose can never be
//! presented as another.

use sha2::{Digest, Sha256};

/// A SHA-256 output.
pub type Hash = [u8; 32];

const CONTENT_DOMAIN: &[u8] = b"cheesedb/content/v1\0";
const CHAIN_DOMAIN: &[u8] = b"cheesedb/chain/v1\0";
const GENESIS_DOMAIN: &[u8] = b"cheesedb/genesis/v1\0";
const TOKEN_DOMAIN: &[u8] = b"cheesedb/token/v1\0";
const REPLICA_PIECE_DOMAIN: &[u8] = b"cheesedb/replica-piece/v1\0";

/// The digest of a record's content under its salt. The chain commits to this, never to the
/// content itself, so erasing content and salt leaves the chain checkable while the digest of a
/// short text cannot be confirmed by guessing it.
#[must_use]
pub fn content_digest(salt: &[u8], content: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(CONTENT_DOMAIN);
    hasher.update((salt.len() as u64).to_le_bytes());
    hasher.update(salt);
    hasher.update(content);
    hasher.finalize().into()
}

/// The chain hash after a record whose chained fields are `fields`.
#[must_use]
pub fn chain_next(previous: &Hash, fields: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(CHAIN_DOMAIN);
    hasher.update(previous);
    hasher.update(fields);
    hasher.finalize().into()
}

/// The chain hash before an agent's first record; tied to the agent so that one agent's log
/// cannot pass as another's.
#[must_use]
pub fn chain_genesis(agent_number: u64) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(GENESIS_DOMAIN);
    hasher.update(agent_number.to_le_bytes());
    hasher.finalize().into()
}

/// What the store keeps of a token.
#[must_use]
pub fn token_hash(token: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(TOKEN_DOMAIN);
    hasher.update(token);
    hasher.finalize().into()
}

/// The digest a replica's head keeps of one piece (a stretch of one file) it lists, so that a
/// piece rewritten in the object store is told apart from the one shipped.
#[must_use]
pub fn replica_piece_digest(bytes: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(REPLICA_PIECE_DOMAIN);
    hasher.update(bytes);
    hasher.finalize().into()
}

/// Compares two hashes in time that does not depend on where they differ.
#[must_use]
pub fn equal_in_constant_time(left: &Hash, right: &Hash) -> bool {
    let mut difference = 0u8;
    for (a, b) in left.iter().zip(right.iter()) {
        difference |= a ^ b;
    }
    core::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_keep_uses_apart() {
        assert_ne!(content_digest(b"", b"x"), token_hash(b"x"));
        assert_ne!(chain_genesis(1), chain_genesis(2));
    }

    #[test]
    fn the_salt_changes_the_digest() {
        assert_ne!(content_digest(b"salt-one", b"rain"), content_digest(b"salt-two", b"rain"));
    }

    #[test]
    fn constant_time_equality_is_equality() {
        let a = token_hash(b"a");
        let b = token_hash(b"b");
        assert!(equal_in_constant_time(&a, &a));
        assert!(!equal_in_constant_time(&a, &b));
    }

    #[test]
    fn hashes_differing_in_one_bit_anywhere_are_unequal() {
        let reference = token_hash(b"reference");
        assert!(equal_in_constant_time(&reference, &reference.clone()));
        for position in 0..reference.len() {
            for bit in 0..8 {
                let mut changed = reference;
                if let Some(byte) = changed.get_mut(position) {
                    *byte ^= 1 << bit;
                }
                assert!(!equal_in_constant_time(&reference, &changed), "byte {position}, bit {bit}");
                assert!(!equal_in_constant_time(&changed, &reference), "byte {position}, bit {bit}, swapped");
            }
            // A whole byte replaced, every other value: only its own value is equal.
            for value in 0..=u8::MAX {
                let mut changed = reference;
                if let Some(byte) = changed.get_mut(position) {
                    *byte = value;
                }
                let same = reference.get(position) == Some(&value);
                assert_eq!(equal_in_constant_time(&reference, &changed), same, "byte {position} = {value}");
            }
        }
    }
}
