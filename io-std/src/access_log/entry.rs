//! [`AccessEntry`]: one request the memory server served, as the access log keeps it.

use serde::{Deserialize, Serialize};

use super::{IDS_PER_ENTRY_MAX, NAME_MAX_BYTES};

/// Who did what: one request served for an agent. It never holds content or labels, so an
/// erasure has nothing to remove from the access log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessEntry {
    /// When the request was served, in milliseconds since the Unix epoch.
    pub time_unix_ms: u64,
    /// The client's process id, from the socket's peer credentials.
    pub pid: u32,
    /// The client's user id, from the socket's peer credentials.
    pub uid: u32,
    /// The operation's name, e.g. `remember` (cut to [`NAME_MAX_BYTES`]).
    pub operation: String,
    /// The ids the request named or touched; past [`IDS_PER_ENTRY_MAX`] only their count is kept.
    pub ids: Vec<u64>,
    /// `ok`, or the kind of error the request ended with (cut to [`NAME_MAX_BYTES`]).
    pub outcome: String,
}

impl AccessEntry {
    /// The ids kept in the log, and how many more were left out.
    pub fn bounded_ids(&self) -> (&[u64], u64) {
        let kept = self.ids.get(..IDS_PER_ENTRY_MAX).unwrap_or(&self.ids);
        let left_out = u64::try_from(self.ids.len() - kept.len()).unwrap_or(u64::MAX);
        (kept, left_out)
    }

    /// The operation's name as the log keeps it.
    pub fn bounded_operation(&self) -> &str {
        cut(&self.operation)
    }

    /// The outcome as the log keeps it.
    pub fn bounded_outcome(&self) -> &str {
        cut(&self.outcome)
    }
}

/// `text` cut to at most [`NAME_MAX_BYTES`], at a character boundary: a name is never that long,
/// and an entry's size must stay bounded whatever a caller passes.
fn cut(text: &str) -> &str {
    let mut end = text.len().min(NAME_MAX_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(operation: &str, ids: Vec<u64>) -> AccessEntry {
        AccessEntry { time_unix_ms: 1, pid: 2, uid: 3, operation: operation.to_owned(), ids, outcome: "ok".into() }
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let long = "é".repeat(NAME_MAX_BYTES);
        let kept = entry(&long, vec![]).bounded_operation().len();
        assert!((NAME_MAX_BYTES - 1..=NAME_MAX_BYTES).contains(&kept));
        assert_eq!(entry("get", vec![]).bounded_operation(), "get");
    }

    #[test]
    fn ids_past_the_limit_are_only_counted() {
        let many: Vec<u64> = (0..u64::try_from(IDS_PER_ENTRY_MAX).unwrap() + 5).collect();
        let entry = entry("recall", many);
        let (kept, left_out) = entry.bounded_ids();
        assert_eq!((kept.len(), left_out), (IDS_PER_ENTRY_MAX, 5));
    }
}
