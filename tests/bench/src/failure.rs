//! `Failure`: why the benchmark stopped, as one line and an exit status, with the statuses the
//! `cheesedb` command gives the same engine errors, so a script treats both alike.

use std::fmt;

use cheesedb::StorageErrorKind;

/// Exit status of a benchmark that ran to the end.
pub const EXIT_SUCCESS: u8 = 0;
/// Exit status of any error: bad arguments, a missing program, refused writes, I/O.
pub const EXIT_ERROR: u8 = 2;
/// Exit status when stored data failed a check.
pub const EXIT_DAMAGED: u8 = 3;
/// Exit status when a write failed after its bytes may have reached the disk.
pub const EXIT_OUTCOME_UNKNOWN: u8 = 4;
/// Exit status when the disk (or the user's quota) holding the benchmark's folder is full.
pub const EXIT_NO_SPACE: u8 = 5;
/// Exit status when the system refused access to the benchmark's folder.
pub const EXIT_ACCESS_DENIED: u8 = 6;

/// A benchmark that could not finish: a one-line message and the exit status to leave with.
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

    /// Adds what the benchmark was doing in front of the message.
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
        let exit_status = match error.storage_kind() {
            _ if error.is_corruption() => EXIT_DAMAGED,
            _ if error.is_outcome_unknown() => EXIT_OUTCOME_UNKNOWN,
            Some(StorageErrorKind::NoSpace) => EXIT_NO_SPACE,
            Some(StorageErrorKind::PermissionDenied | StorageErrorKind::ReadOnly) => EXIT_ACCESS_DENIED,
            _ => EXIT_ERROR,
        };
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
    fn engine_errors_leave_with_the_command_s_exit_statuses() {
        let damaged = cheesedb::Error::Corrupt {
            file: "catalog".into(),
            offset: 0,
            reason: cheesedb::CorruptReason::CatalogChecksumMismatch,
        };
        assert_eq!(Failure::from(damaged).exit_status(), EXIT_DAMAGED);
        assert_eq!(Failure::from(cheesedb::Error::NoLegs).exit_status(), EXIT_ERROR);
        let full = cheesedb::Error::from_storage(
            cheesedb::StorageOperation::Growing,
            "segment",
            std::io::Error::from_raw_os_error(28),
        );
        assert_eq!(Failure::from(full).exit_status(), EXIT_NO_SPACE);
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(
            Failure::from(cheesedb::Error::from_storage(cheesedb::StorageOperation::Opening, "catalog", denied))
                .exit_status(),
            EXIT_ACCESS_DENIED
        );
    }

    #[test]
    fn context_goes_in_front() {
        assert_eq!(Failure::new("refused").context("a timed write").message(), "a timed write: refused");
    }
}
