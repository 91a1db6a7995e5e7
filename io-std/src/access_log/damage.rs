//! [`LogDamage`]: why an access log does not verify, naming the file and the entry.

use std::fmt;

/// What is wrong with an access log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DamageKind {
    /// An entry or header was changed after it was written.
    Edited,
    /// Entries or whole files are missing from the middle of the chain.
    Removed,
    /// An entry stands where another one should.
    Reordered,
    /// A line is not an entry or a header at all.
    Unreadable,
    /// A file holds another agent's log, or claims another place in the chain.
    Misplaced,
    /// An entry was cut short in a file that later files continue from.
    Cut,
    /// A file is larger than the writer ever makes one.
    Oversized,
}

impl DamageKind {
    /// The kind in a few words.
    pub fn as_str(self) -> &'static str {
        match self {
            DamageKind::Edited => "edited",
            DamageKind::Removed => "removed",
            DamageKind::Reordered => "reordered",
            DamageKind::Unreadable => "unreadable",
            DamageKind::Misplaced => "misplaced",
            DamageKind::Cut => "cut short",
            DamageKind::Oversized => "too large",
        }
    }
}

/// Where an access log stops verifying, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDamage {
    /// The file, relative to the data folder (e.g. `access/alice.3.log`).
    pub file: String,
    /// The line in that file (1 is the header), when one line is at fault.
    pub line: Option<usize>,
    /// The number the entry there claims, when it could be read.
    pub number: Option<u64>,
    /// What is wrong.
    pub kind: DamageKind,
    /// What was found, in words.
    pub detail: String,
}

impl LogDamage {
    /// Damage to the whole file `file`.
    pub fn file(file: &str, kind: DamageKind, detail: impl Into<String>) -> LogDamage {
        LogDamage { file: file.to_owned(), line: None, number: None, kind, detail: detail.into() }
    }

    /// Damage at line `line` of `file`.
    pub fn line(
        file: &str,
        line: usize,
        number: Option<u64>,
        kind: DamageKind,
        detail: impl Into<String>,
    ) -> LogDamage {
        LogDamage { file: file.to_owned(), line: Some(line), number, kind, detail: detail.into() }
    }
}

impl fmt::Display for LogDamage {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.file)?;
        match (self.line, self.number) {
            (Some(1), _) => write!(formatter, " header")?,
            (Some(line), Some(number)) => write!(formatter, " line {line} (entry {number})")?,
            (Some(line), None) => write!(formatter, " line {line}")?,
            (None, _) => {}
        }
        write!(formatter, ": {}: {}", self.kind.as_str(), self.detail)
    }
}
