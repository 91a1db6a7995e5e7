//! The hash chain: what a header and an entry hash over, and how a hash is written.
//!
//! Each hash covers a fixed binary encoding of the fields (never the JSON text, whose spacing
//! and key order may vary) together with the hash before it, so changing, removing or moving any
//! entry or header breaks the link to the one after it.

use std::fmt;

use sha2::{Digest, Sha256};

/// Bytes in a hash of the chain.
pub const HASH_BYTES: usize = 32;

/// Tells a header's hash from an entry's, so one can never pass for the other.
const HEADER_DOMAIN: &[u8] = b"cheesedb access log header v1\0";
const ENTRY_DOMAIN: &[u8] = b"cheesedb access log entry v1\0";
/// Marks the part of a header that records a break, so a header with one never hashes like a
/// header without.
const BREAK_DOMAIN: &[u8] = b"after damage\0";

/// One link of the chain: a SHA-256 hash, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChainHash([u8; HASH_BYTES]);

impl ChainHash {
    /// The hash the very first file of an agent's chain starts after: all zeros.
    pub const START: ChainHash = ChainHash([0; HASH_BYTES]);

    /// The hash as 64 lowercase hex digits.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// Reads 64 lowercase hex digits; anything else is `None`.
    pub fn from_hex(text: &str) -> Option<ChainHash> {
        if text.len() != HASH_BYTES * 2 || !text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        let mut bytes = [0; HASH_BYTES];
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok()?;
        }
        Some(ChainHash(bytes))
    }
}

impl fmt::Debug for ChainHash {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.to_hex())
    }
}

/// What a file header says, as hashed.
pub struct HeaderFields<'fields> {
    /// The agent whose log the file is part of.
    pub agent: &'fields str,
    /// The file's number, as in its name.
    pub file_number: u64,
    /// The number its first entry has (or will have), one more than the last entry before it.
    pub first_number: u64,
    /// The last hash of the file before it (or [`ChainHash::START`]).
    pub starts_after: ChainHash,
    /// The damage the writer found in the file before it, when it started this one because
    /// of it.
    pub after_damage: Option<BreakFields<'fields>>,
}

/// Where the damage a file starts after was found, as hashed.
#[derive(Clone, Copy)]
pub struct BreakFields<'fields> {
    /// The damaged file's number.
    pub file_number: u64,
    /// The first line that did not verify, when one did not.
    pub line: Option<u64>,
    /// The kind of damage, in a few words.
    pub kind: &'fields str,
}

/// What an entry says, as hashed.
pub struct EntryFields<'fields> {
    /// The entry's number in the agent's whole log, from 1.
    pub number: u64,
    /// The hash of the header or entry before it.
    pub previous: ChainHash,
    /// When the request was served, in milliseconds since the Unix epoch.
    pub time_unix_ms: u64,
    /// The client's process id.
    pub pid: u32,
    /// The client's user id.
    pub uid: u32,
    /// The operation's name.
    pub operation: &'fields str,
    /// The ids the request named or touched (at most [`super::IDS_PER_ENTRY_MAX`]).
    pub ids: &'fields [u64],
    /// How many more ids the request touched than the entry lists.
    pub ids_left_out: u64,
    /// `ok`, or the kind of error the request ended with.
    pub outcome: &'fields str,
}

/// The hash of a file header.
pub fn header_hash(header: &HeaderFields<'_>) -> ChainHash {
    let mut hasher = Sha256::new();
    hasher.update(HEADER_DOMAIN);
    hash_text(&mut hasher, header.agent);
    hasher.update(header.file_number.to_le_bytes());
    hasher.update(header.first_number.to_le_bytes());
    hasher.update(header.starts_after.0);
    // Absent, nothing is added: the headers written before breaks existed keep their hashes.
    if let Some(damage) = header.after_damage {
        hasher.update(BREAK_DOMAIN);
        hasher.update(damage.file_number.to_le_bytes());
        hasher.update([u8::from(damage.line.is_some())]);
        hasher.update(damage.line.unwrap_or(0).to_le_bytes());
        hash_text(&mut hasher, damage.kind);
    }
    ChainHash(hasher.finalize().into())
}

/// The hash of an entry.
pub fn entry_hash(entry: &EntryFields<'_>) -> ChainHash {
    let mut hasher = Sha256::new();
    hasher.update(ENTRY_DOMAIN);
    hasher.update(entry.previous.0);
    hasher.update(entry.number.to_le_bytes());
    hasher.update(entry.time_unix_ms.to_le_bytes());
    hasher.update(entry.pid.to_le_bytes());
    hasher.update(entry.uid.to_le_bytes());
    hash_text(&mut hasher, entry.operation);
    hasher.update(u64::try_from(entry.ids.len()).unwrap_or(u64::MAX).to_le_bytes());
    for id in entry.ids {
        hasher.update(id.to_le_bytes());
    }
    hasher.update(entry.ids_left_out.to_le_bytes());
    hash_text(&mut hasher, entry.outcome);
    ChainHash(hasher.finalize().into())
}

/// A text with its length in front, so two fields can never run into each other.
fn hash_text(hasher: &mut Sha256, text: &str) {
    hasher.update(u64::try_from(text.len()).unwrap_or(u64::MAX).to_le_bytes());
    hasher.update(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(operation: &str) -> EntryFields<'_> {
        EntryFields {
            number: 1,
            previous: ChainHash::START,
            time_unix_ms: 5,
            pid: 6,
            uid: 7,
            operation,
            ids: &[1, 2],
            ids_left_out: 0,
            outcome: "ok",
        }
    }

    #[test]
    fn hex_round_trips_and_refuses_anything_else() {
        let hash = entry_hash(&entry("get"));
        assert_eq!(ChainHash::from_hex(&hash.to_hex()), Some(hash));
        assert_eq!(ChainHash::from_hex(&hash.to_hex().to_uppercase()), None);
        assert_eq!(ChainHash::from_hex("00"), None);
        assert_eq!(ChainHash::from_hex(&"g".repeat(64)), None);
        assert_eq!(ChainHash::from_hex(&"é".repeat(32)), None);
    }

    #[test]
    fn every_field_changes_the_hash() {
        let base = entry_hash(&entry("get"));
        assert_ne!(base, entry_hash(&entry("gets")));
        assert_ne!(base, entry_hash(&EntryFields { ids: &[1], ..entry("get") }));
        assert_ne!(base, entry_hash(&EntryFields { ids_left_out: 1, ..entry("get") }));
        assert_ne!(base, entry_hash(&EntryFields { outcome: "not_found", ..entry("get") }));
        assert_ne!(base, entry_hash(&EntryFields { number: 2, ..entry("get") }));
        assert_ne!(base, entry_hash(&EntryFields { previous: base, ..entry("get") }));
    }

    #[test]
    fn a_header_never_hashes_like_another_header() {
        let header = HeaderFields {
            agent: "a",
            file_number: 1,
            first_number: 1,
            starts_after: ChainHash::START,
            after_damage: None,
        };
        let other = HeaderFields { agent: "b", ..header };
        assert_ne!(header_hash(&header), header_hash(&other));
        let damage = BreakFields { file_number: 1, line: Some(2), kind: "unreadable" };
        let broken = HeaderFields { after_damage: Some(damage), ..header };
        assert_ne!(header_hash(&header), header_hash(&broken));
        let elsewhere = HeaderFields { after_damage: Some(BreakFields { line: None, ..damage }), ..header };
        assert_ne!(header_hash(&broken), header_hash(&elsewhere));
    }
}
