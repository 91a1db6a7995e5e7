//! `Failure`: why a command stopped, as one line for the user and an exit status for scripts.

use std::fmt;

/// Exit status of a command that did its work.
pub const EXIT_SUCCESS: u8 = 0;
/// Exit status of `find` when nothing matched (as grep does).
pub const EXIT_NOT_FOUND: u8 = 1;
/// Exit status of any error: bad arguments, unknown agents or ids, refused writes, I/O.
pub const EXIT_ERROR: u8 = 2;
/// Exit status when stored data failed a check (damaged or rewritten files).
pub const EXIT_DAMAGED: u8 = 3;
/// Exit status when a write failed after its bytes may have reached the disk: it may have been
/// stored, and a retry could store it twice.
pub const EXIT_OUTCOME_UNKNOWN: u8 = 4;

/// A command that could not finish: a one-line message and the exit status to leave with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    message: String,
    exit_status: u8,
}

impl Failure {
    /// An error with `message`, leaving with [`EXIT_ERROR`].
    pub fn new(message: impl Into<String>) -> Failure {
        Failure { message: one_line(&message.into()), exit_status: EXIT_ERROR }
    }

    /// A failure that prints nothing, e.g. when standard output was closed by the reader.
    pub fn silent(exit_status: u8) -> Failure {
        Failure { message: String::new(), exit_status }
    }

    /// Adds what the command was doing in front of the message.
    pub fn context(self, doing: &str) -> Failure {
        Failure { message: format!("{doing}: {}", self.message), ..self }
    }

    /// The message, one line, possibly empty for a silent failure.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The exit status to leave with.
    pub fn exit_status(&self) -> u8 {
        self.exit_status
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl From<cheesedb::Error> for Failure {
    fn from(error: cheesedb::Error) -> Failure {
        if let cheesedb::Error::OutcomeUnknown { operation, path, message } = &error {
            let message = format!(
                "storage error while {operation} {path}: {message}; the write may have been stored: check with get before retrying (a recall with --erase that was stored finishes its erasure at the next open)"
            );
            return Failure { message: one_line(&message), exit_status: EXIT_OUTCOME_UNKNOWN };
        }
        let exit_status = if error.is_corruption() { EXIT_DAMAGED } else { EXIT_ERROR };
        Failure { message: one_line(&error.to_string()), exit_status }
    }
}

/// Joins the lines of `text` so an error never spans several lines of a terminal or a log.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r']).map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_folded_onto_one_line() {
        assert_eq!(Failure::new("first\n  second\r\n").message(), "first second");
    }

    #[test]
    fn damaged_data_has_its_own_exit_status() {
        let damaged = cheesedb::Error::Corrupt { file: "catalog".into(), offset: 0, reason: "bad" };
        assert_eq!(Failure::from(damaged).exit_status(), EXIT_DAMAGED);
        assert_eq!(Failure::from(cheesedb::Error::NoLegs).exit_status(), EXIT_ERROR);
    }

    #[test]
    fn an_unknown_outcome_says_the_write_may_be_stored() {
        let error =
            cheesedb::Error::OutcomeUnknown { operation: "syncing", path: "segment".into(), message: "EIO".into() };
        let failure = Failure::from(error);
        assert_eq!(failure.exit_status(), EXIT_OUTCOME_UNKNOWN);
        assert!(failure.message().contains("may have been stored: check with get before retrying"), "{failure}");
    }
}
