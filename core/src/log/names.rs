//! File and folder names. They come from numbers only, never from an agent's name, so no name
//! can reach outside the store folder.

use alloc::format;
use alloc::string::String;

/// The store's list of agents.
pub const CATALOG_FILE: &str = "catalog";
/// The catalog while it is being rewritten.
pub const CATALOG_TEMPORARY_FILE: &str = "catalog.tmp";
/// Names ending in this are rewrites in progress, removed at open.
pub const TEMPORARY_SUFFIX: &str = ".tmp";
const AGENT_PREFIX: &str = "agent-";
const SEGMENT_PREFIX: &str = "segment-";
const SEGMENT_SUFFIX: &str = ".log";
const SNAPSHOT_NAME: &str = "snapshot";
const ERASE_JOURNAL_NAME: &str = "erase-journal";
/// An encrypted agent's key table.
pub const KEY_TABLE_NAME: &str = "keys";
/// An encrypted agent's epoch keys.
pub const EPOCHS_NAME: &str = "epochs";

/// The folder of agent `number`.
#[must_use]
pub fn agent_folder(number: u64) -> String {
    format!("{AGENT_PREFIX}{number:016x}")
}

/// The agent number of a folder name, if it is one.
#[must_use]
pub fn parse_agent_folder(name: &str) -> Option<u64> {
    parse_hex_16(name.strip_prefix(AGENT_PREFIX)?)
}

/// The path of the snapshot of the agent whose folder is `folder`.
#[must_use]
pub fn snapshot_path(folder: &str) -> String {
    format!("{folder}/{SNAPSHOT_NAME}")
}

/// The path of the erase journal of the agent whose folder is `folder`: present only while an
/// erasure in place is overwriting segments (see `codec::erase_journal`).
#[must_use]
pub fn erase_journal_path(folder: &str) -> String {
    format!("{folder}/{ERASE_JOURNAL_NAME}")
}

/// The path of the key table of the encrypted agent in `folder`.
#[must_use]
pub fn key_table_path(folder: &str) -> String {
    format!("{folder}/{KEY_TABLE_NAME}")
}

/// The path of the epoch file of the agent in `folder`.
#[must_use]
pub fn epochs_path(folder: &str) -> String {
    format!("{folder}/{EPOCHS_NAME}")
}

/// The path of segment `segment` of the agent whose folder is `folder`.
#[must_use]
pub fn segment_path(folder: &str, segment: u64) -> String {
    format!("{folder}/{SEGMENT_PREFIX}{segment:016x}{SEGMENT_SUFFIX}")
}

/// Whether `name` (inside an agent folder) is one the engine makes there: a segment, the
/// snapshot, the erase journal, an encrypted agent's key table and epoch file, or a rewrite of
/// one of them in progress. Deleting an agent removes only these.
#[must_use]
pub fn is_agent_file_name(name: &str) -> bool {
    let base = name.strip_suffix(TEMPORARY_SUFFIX).unwrap_or(name);
    parse_segment_name(base).is_some()
        || [SNAPSHOT_NAME, ERASE_JOURNAL_NAME, KEY_TABLE_NAME, EPOCHS_NAME].contains(&base)
}

/// The segment number of a file name, if it is one.
#[must_use]
pub fn parse_segment_name(name: &str) -> Option<u64> {
    parse_hex_16(name.strip_prefix(SEGMENT_PREFIX)?.strip_suffix(SEGMENT_SUFFIX)?)
}

fn parse_hex_16(digits: &str) -> Option<u64> {
    let canonical = digits.len() == 16 && digits.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
    canonical.then(|| u64::from_str_radix(digits, 16).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(agent_folder(10), "agent-000000000000000a");
        assert_eq!(parse_agent_folder(&agent_folder(10)), Some(10));
        let path = segment_path("agent-000000000000000a", 2);
        assert_eq!(path, "agent-000000000000000a/segment-0000000000000002.log");
        assert_eq!(parse_segment_name("segment-0000000000000002.log"), Some(2));
    }

    #[test]
    fn agent_file_names_are_only_the_engine_s() {
        for name in ["segment-0000000000000002.log", "segment-0000000000000002.log.tmp", "snapshot", "snapshot.tmp"] {
            assert!(is_agent_file_name(name), "{name}");
        }
        for name in ["erase-journal.bak", "notes.tmp", "lock", "stray", "segment-2.log", ".tmp"] {
            assert!(!is_agent_file_name(name), "{name}");
        }
    }

    #[test]
    fn other_names_are_not_ours() {
        for name in ["agent-1", "agent-000000000000000A", "segment-0000000000000002.log.tmp", "lock", "../x"] {
            assert_eq!(parse_agent_folder(name).or(parse_segment_name(name)), None, "{name}");
        }
    }
}
