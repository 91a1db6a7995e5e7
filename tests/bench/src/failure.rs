//! `Failure`: why the benchmark stopped, as one line and an exit status.

use std::fmt;

/// Exit status of a benchmark that ran to the end.
pub const EXIT_SUCCESS: u8 = 0;
/// Exit status of any error: bad arguments, a missing program, refused writes, I/O.
pub const EXIT_ERROR: u8 = 2;
/// Exit status when stored data failed a check: a benchmark that damages its store is a bug.
pub const EXIT_DAMAGED: u8 = 3;

/// A benchmark that could not finish: a one-line message and the exit status to leave with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// One line, empty for a quiet end.
    pub message: String,
    /// The exit status to leave with.
    pub exit_status: u8,
}

impl Failure {
    /// An error with `message`, leaving with [`EXIT_ERROR`].
    pub fn new(message: impl Into<String>) -> Failure {
        let message: String = message.into();
        // An error never spans several lines of a terminal or a log.
        let lines: Vec<&str> = message.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
        Failure { message: lines.join(" "), exit_status: EXIT_ERROR }
    }

    /// A failure that prints nothing, when standard output was closed by its reader.
    pub fn quiet_end() -> Failure {
        Failure { message: String::new(), exit_status: EXIT_SUCCESS }
    }

    /// Adds what the benchmark was doing in front of the message.
    pub fn context(self, doing: &str) -> Failure {
        Failure { message: format!("{doing}: {}", self.message), ..self }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl From<cheesedb::Error> for Failure {
    fn from(error: cheesedb::Error) -> Failure {
        let failure = Failure::new(error.to_string());
        if error.is_corruption() {
            return Failure { exit_status: EXIT_DAMAGED, ..failure };
        }
        failure
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_one_line_with_its_context_and_damage_has_its_own_status() {
        let folded = Failure::new("refused\n  twice\r\n").context("a timed write");
        assert_eq!((folded.message.as_str(), folded.exit_status), ("a timed write: refused twice", EXIT_ERROR));
        let reason = cheesedb::CorruptReason::CatalogChecksumMismatch;
        let damaged = Failure::from(cheesedb::Error::Corrupt { file: "catalog".into(), offset: 0, reason });
        assert_eq!(damaged.exit_status, EXIT_DAMAGED);
        assert_eq!(Failure::quiet_end().exit_status, EXIT_SUCCESS);
    }
}
