//! The lines of a log file: a header, then one entry per line, each one JSON object.
//!
//! JSON keeps the files readable with ordinary tools and lets a reader name the field that is
//! wrong; the hashes cover the fields themselves (see [`super::chain`]), not the text.

use serde::{Deserialize, Serialize};

use super::chain::{entry_hash, header_hash, BreakFields, ChainHash, EntryFields, HeaderFields};
use super::entry::AccessEntry;

/// What the first line of every file says it is.
pub const FORMAT_NAME: &str = "cheesedb access log";
/// The version of the file format.
pub const FORMAT_VERSION: u32 = 1;
/// The version of a file whose header records a break ([`HeaderRecord::after_damage`]): a
/// reader of version 1 alone would take the field for damage.
pub const BREAK_FORMAT_VERSION: u32 = 2;

/// The damage a file starts after: the writer found the file before it damaged, and started
/// this one rather than stop logging.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DamageNote {
    /// The damaged file's number.
    pub file_number: u64,
    /// The first line of it that did not verify, when one did not (a file whose size changed
    /// under the writer may verify and still have lost entries).
    pub line: Option<u64>,
    /// The kind of damage, as [`super::DamageKind::as_str`] says it.
    pub kind: String,
}

impl DamageNote {
    fn fields(&self) -> BreakFields<'_> {
        BreakFields { file_number: self.file_number, line: self.line, kind: &self.kind }
    }
}

/// The first line of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderRecord {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// [`FORMAT_VERSION`], or [`BREAK_FORMAT_VERSION`] for a header with `after_damage`.
    pub version: u32,
    /// The agent whose log this is, in full.
    pub agent: String,
    /// The file's number, as in its name.
    pub file_number: u64,
    /// The number of the file's first entry: one more than the last entry before it.
    pub first_number: u64,
    /// The hash the file's chain starts after: the last one of the file before it (after a
    /// break, the last one that verified there).
    pub starts_after: String,
    /// The damage the file before it holds, when the writer started this file because of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_damage: Option<DamageNote>,
    /// This header's own hash, which the first entry names as its previous one.
    pub hash: String,
}

impl HeaderRecord {
    /// The header of file `file_number` of `agent`'s log, whose first entry will be number
    /// `first_number`, starting after `starts_after`; `after_damage` when the writer started the
    /// file because the one before it does not verify.
    pub fn after(
        agent: &str,
        file_number: u64,
        first_number: u64,
        starts_after: ChainHash,
        after_damage: Option<DamageNote>,
    ) -> HeaderRecord {
        let hash = header_hash(&HeaderFields {
            agent,
            file_number,
            first_number,
            starts_after,
            after_damage: after_damage.as_ref().map(DamageNote::fields),
        });
        HeaderRecord {
            format: FORMAT_NAME.to_owned(),
            version: if after_damage.is_some() { BREAK_FORMAT_VERSION } else { FORMAT_VERSION },
            agent: agent.to_owned(),
            file_number,
            first_number,
            starts_after: starts_after.to_hex(),
            after_damage,
            hash: hash.to_hex(),
        }
    }

    /// The hash the fields call for, or `None` when `starts_after` is not a hash.
    pub fn computed_hash(&self) -> Option<ChainHash> {
        let starts_after = ChainHash::from_hex(&self.starts_after)?;
        Some(header_hash(&HeaderFields {
            agent: &self.agent,
            file_number: self.file_number,
            first_number: self.first_number,
            starts_after,
            after_damage: self.after_damage.as_ref().map(DamageNote::fields),
        }))
    }
}

/// One entry line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryRecord {
    /// The entry's number in the agent's whole log, from 1, across files.
    pub number: u64,
    /// When the request was served, in milliseconds since the Unix epoch.
    pub time_unix_ms: u64,
    /// The client's process id.
    pub pid: u32,
    /// The client's user id.
    pub uid: u32,
    /// The operation's name.
    pub operation: String,
    /// The ids involved (the first [`super::IDS_PER_ENTRY_MAX`]).
    pub ids: Vec<u64>,
    /// How many more ids were involved than `ids` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ids_left_out: u64,
    /// `ok`, or the kind of error the request ended with.
    pub outcome: String,
    /// The hash of the header or entry before it.
    pub previous: String,
    /// This entry's hash.
    pub hash: String,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl EntryRecord {
    /// The record of `entry` as entry `number`, after `previous`.
    pub fn new(entry: &AccessEntry, number: u64, previous: ChainHash) -> EntryRecord {
        let (ids, ids_left_out) = entry.bounded_ids();
        let mut record = EntryRecord {
            number,
            time_unix_ms: entry.time_unix_ms,
            pid: entry.pid,
            uid: entry.uid,
            operation: entry.bounded_operation().to_owned(),
            ids: ids.to_vec(),
            ids_left_out,
            outcome: entry.bounded_outcome().to_owned(),
            previous: previous.to_hex(),
            hash: String::new(),
        };
        record.hash = record.computed_hash(previous).to_hex();
        record
    }

    /// The hash the fields call for, after `previous`.
    pub fn computed_hash(&self, previous: ChainHash) -> ChainHash {
        entry_hash(&EntryFields {
            number: self.number,
            previous,
            time_unix_ms: self.time_unix_ms,
            pid: self.pid,
            uid: self.uid,
            operation: &self.operation,
            ids: &self.ids,
            ids_left_out: self.ids_left_out,
            outcome: &self.outcome,
        })
    }

    /// The entry as the server gave it (less any ids left out).
    pub fn entry(&self) -> AccessEntry {
        AccessEntry {
            time_unix_ms: self.time_unix_ms,
            pid: self.pid,
            uid: self.uid,
            operation: self.operation.clone(),
            ids: self.ids.clone(),
            outcome: self.outcome.clone(),
        }
    }
}

/// `record` as one line of JSON, ending with a line feed.
pub fn to_line<T: Serialize>(record: &T) -> String {
    // Serializing plain fields to a String cannot fail; an empty object would fail to verify.
    let mut line = serde_json::to_string(record).unwrap_or_else(|_| String::from("{}"));
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_log::{ENTRY_MAX_BYTES, HEADER_MAX_BYTES, IDS_PER_ENTRY_MAX, NAME_MAX_BYTES};

    #[test]
    fn the_largest_entry_and_header_stay_within_their_bounds() {
        // Control characters take six bytes each once escaped in JSON.
        let worst_text = "\u{1}".repeat(NAME_MAX_BYTES * 2);
        let entry = AccessEntry {
            time_unix_ms: u64::MAX,
            pid: u32::MAX,
            uid: u32::MAX,
            operation: worst_text.clone(),
            ids: vec![u64::MAX; IDS_PER_ENTRY_MAX * 2],
            outcome: worst_text,
        };
        let line = to_line(&EntryRecord::new(&entry, u64::MAX, ChainHash::START));
        assert!(u64::try_from(line.len()).unwrap() <= ENTRY_MAX_BYTES, "{} bytes", line.len());
        let name = "\u{1}".repeat(crate::limits::AGENT_NAME_MAX_BYTES);
        let header = to_line(&HeaderRecord::after(
            &name,
            u64::MAX,
            u64::MAX,
            ChainHash::START,
            Some(DamageNote { file_number: u64::MAX, line: Some(u64::MAX), kind: "\u{1}".repeat(NAME_MAX_BYTES) }),
        ));
        assert!(u64::try_from(header.len()).unwrap() <= HEADER_MAX_BYTES, "{} bytes", header.len());
    }

    #[test]
    fn a_record_verifies_against_its_own_previous_hash_only() {
        let entry = AccessEntry {
            time_unix_ms: 1,
            pid: 2,
            uid: 3,
            operation: "get".into(),
            ids: vec![4],
            outcome: "ok".into(),
        };
        let record = EntryRecord::new(&entry, 1, ChainHash::START);
        assert_eq!(record.computed_hash(ChainHash::START).to_hex(), record.hash);
        let other = record.computed_hash(ChainHash::from_hex(&record.hash).unwrap());
        assert_ne!(other.to_hex(), record.hash);
        assert_eq!(record.entry(), entry);
    }
}
