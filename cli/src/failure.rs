//! `Failure`: why a command stopped, as one line for the user and an exit status for scripts.

use std::fmt;
use std::path::Path;

use cheesedb::StorageErrorKind;

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
/// Exit status when the disk (or the user's quota) holding the data folder is full: nothing was
/// written, and the same command can succeed once space is freed.
pub const EXIT_NO_SPACE: u8 = 5;
/// Exit status when the system refused access to the data folder: permission denied, or a
/// file system mounted read-only.
pub const EXIT_ACCESS_DENIED: u8 = 6;
/// Exit status when a memory server that waits for shipping (`--wait-for-ship`) stored the write
/// but could not ship it to the object store: the write is kept, and must not be made again.
pub const EXIT_NOT_SHIPPED: u8 = 7;

/// A command that could not finish: a one-line message and the exit status to leave with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    message: String,
    exit_status: u8,
    /// The kind of storage failure behind it, so the message can name the data folder.
    storage_kind: Option<StorageErrorKind>,
}

impl Failure {
    /// An error with `message`, leaving with [`EXIT_ERROR`].
    pub fn new(message: impl Into<String>) -> Failure {
        Failure { message: one_line(&message.into()), exit_status: EXIT_ERROR, storage_kind: None }
    }

    /// Stored data that failed a check, with `message`, leaving with [`EXIT_DAMAGED`].
    pub fn damaged(message: impl Into<String>) -> Failure {
        Failure { message: one_line(&message.into()), exit_status: EXIT_DAMAGED, storage_kind: None }
    }

    /// A failure that prints nothing, e.g. when standard output was closed by the reader.
    pub fn silent(exit_status: u8) -> Failure {
        Failure { message: String::new(), exit_status, storage_kind: None }
    }

    /// Adds what the command was doing in front of the message.
    pub fn context(self, doing: &str) -> Failure {
        Failure { message: format!("{doing}: {}", self.message), ..self }
    }

    /// Says in plain words what a storage failure means for the data folder `folder` and what
    /// to do, keeping the engine's own line after it; any other failure is left as it is.
    pub fn about_folder(self, folder: &Path) -> Failure {
        let shown = folder.display();
        let advice = match self.storage_kind {
            Some(StorageErrorKind::NoSpace) if self.exit_status == EXIT_NO_SPACE => format!(
                "the disk holding {shown} is full: free some space, then run the command again; nothing acknowledged was lost"
            ),
            Some(StorageErrorKind::NoSpace) => format!("the disk holding {shown} is full: free some space"),
            Some(StorageErrorKind::PermissionDenied) => {
                format!("permission denied in {shown}: run as the user that owns it, or give this user access")
            }
            Some(StorageErrorKind::ReadOnly) => format!(
                "the file system holding {shown} is mounted read-only: remount it read-write, or use --read-only to read"
            ),
            _ => return self,
        };
        Failure { message: one_line(&format!("{advice} ({})", self.message)), ..self }
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
        let storage_kind = error.storage_kind();
        if let cheesedb::Error::OutcomeUnknown { operation, path, kind, source } = &error {
            let note = kind_note(*kind);
            let message = format!(
                "storage error{note} while {operation} {path}: {source}; the write may have been stored: check with get before retrying (a recall with --erase that was stored finishes its erasure at the next open)"
            );
            return Failure { message: one_line(&message), exit_status: EXIT_OUTCOME_UNKNOWN, storage_kind };
        }
        // Whatever else leaves a write's outcome unknown (a connection to the server lost after
        // the write was sent) is the same for a script: it may be stored.
        if let cheesedb::Error::ConnectionLost { reason, write_in_flight: true } = &error {
            let message = format!(
                "the connection to the memory server broke during the write ({reason}); the write may have been stored: check with get before retrying"
            );
            return Failure { message: one_line(&message), exit_status: EXIT_OUTCOME_UNKNOWN, storage_kind };
        }
        if error.is_outcome_unknown() {
            return Failure { message: one_line(&error.to_string()), exit_status: EXIT_OUTCOME_UNKNOWN, storage_kind };
        }
        if let cheesedb::Error::StoredNotShipped { .. } = &error {
            return Failure { message: one_line(&error.to_string()), exit_status: EXIT_NOT_SHIPPED, storage_kind };
        }
        if let cheesedb::Error::BackendUnavailable { .. } = &error {
            let message = format!("{error}; run with --io std (or CHEESEDB_IO=std) instead");
            return Failure { message: one_line(&message), exit_status: EXIT_ERROR, storage_kind };
        }
        let exit_status = match storage_kind {
            _ if error.is_corruption() => EXIT_DAMAGED,
            Some(StorageErrorKind::NoSpace) => EXIT_NO_SPACE,
            Some(StorageErrorKind::PermissionDenied | StorageErrorKind::ReadOnly) => EXIT_ACCESS_DENIED,
            _ => EXIT_ERROR,
        };
        Failure { message: one_line(&error.to_string()), exit_status, storage_kind }
    }
}

/// The kind of a storage failure in brackets, or nothing for a kind that says no more than
/// "storage error" does.
pub fn kind_note(kind: StorageErrorKind) -> String {
    match kind {
        StorageErrorKind::Other => String::new(),
        kind => format!(" ({kind})"),
    }
}

/// Joins the lines of `text` so an error never spans several lines of a terminal or a log.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r']).map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use cheesedb::{StorageBackend, StorageOperation};

    use super::*;

    #[test]
    fn messages_are_folded_onto_one_line() {
        assert_eq!(Failure::new("first\n  second\r\n").message(), "first second");
    }

    #[test]
    fn damaged_data_has_its_own_exit_status() {
        let damaged = cheesedb::Error::Corrupt {
            file: "catalog".into(),
            offset: 0,
            reason: cheesedb::CorruptReason::CatalogChecksumMismatch,
        };
        assert_eq!(Failure::from(damaged).exit_status(), EXIT_DAMAGED);
        assert_eq!(Failure::from(cheesedb::Error::NoLegs).exit_status(), EXIT_ERROR);
    }

    #[test]
    fn an_unknown_outcome_says_the_write_may_be_stored() {
        let error = cheesedb::Error::OutcomeUnknown {
            operation: StorageOperation::Syncing,
            path: "segment".into(),
            kind: StorageErrorKind::Other,
            source: cheesedb::ErrorSource::new(std::io::Error::other("EIO")),
        };
        let failure = Failure::from(error);
        assert_eq!(failure.exit_status(), EXIT_OUTCOME_UNKNOWN);
        assert!(failure.message().contains("may have been stored: check with get before retrying"), "{failure}");
    }

    #[test]
    fn a_connection_lost_during_a_write_is_an_unknown_outcome_and_before_one_a_refusal() {
        let lost = |write_in_flight| cheesedb::Error::ConnectionLost {
            reason: String::from("the server closed the connection"),
            write_in_flight,
        };
        let during = Failure::from(lost(true));
        assert_eq!(during.exit_status(), EXIT_OUTCOME_UNKNOWN);
        assert!(during.message().contains("may have been stored: check with get before retrying"), "{during}");
        assert_eq!(Failure::from(lost(false)).exit_status(), EXIT_ERROR);
    }

    #[test]
    fn a_write_stored_but_not_shipped_has_its_own_exit_status() {
        let error = cheesedb::Error::StoredNotShipped {
            id: Some(cheesedb::Id::from(3)),
            reason: String::from("the object store failed: connection refused"),
        };
        let failure = Failure::from(error);
        assert_eq!(failure.exit_status(), EXIT_NOT_SHIPPED);
        assert!(failure.message().contains("stored here as id 3 but not yet in the object store"), "{failure}");
    }

    fn refused(kind: std::io::ErrorKind) -> cheesedb::Error {
        cheesedb::Error::from_storage(StorageOperation::Growing, "agent-1/segment-1.log", std::io::Error::from(kind))
    }

    #[test]
    fn a_full_disk_has_its_own_exit_status_and_plain_words() {
        let failure = Failure::from(refused(std::io::ErrorKind::StorageFull)).about_folder(Path::new("/data"));
        assert_eq!(failure.exit_status(), EXIT_NO_SPACE);
        assert!(
            failure.message().starts_with(
                "the disk holding /data is full: free some space, then run the command again; nothing acknowledged was lost"
            ),
            "{failure}"
        );
    }

    #[test]
    fn a_full_quota_is_a_full_disk_too() {
        let quota =
            cheesedb::Error::from_storage(StorageOperation::Growing, "segment", std::io::Error::from_raw_os_error(122));
        assert_eq!(Failure::from(quota).exit_status(), EXIT_NO_SPACE);
    }

    #[test]
    fn refused_access_has_its_own_exit_status() {
        let denied = Failure::from(refused(std::io::ErrorKind::PermissionDenied)).about_folder(Path::new("/data"));
        assert_eq!(denied.exit_status(), EXIT_ACCESS_DENIED);
        assert!(denied.message().starts_with("permission denied in /data"), "{denied}");
        let read_only = Failure::from(refused(std::io::ErrorKind::ReadOnlyFilesystem));
        assert_eq!(read_only.exit_status(), EXIT_ACCESS_DENIED);
    }

    #[test]
    fn other_failures_keep_their_message_about_a_folder() {
        let failure = Failure::from(cheesedb::Error::NoLegs);
        assert_eq!(failure.clone().about_folder(Path::new("/data")), failure);
    }

    #[test]
    fn an_unusable_backend_suggests_the_std_one() {
        let error =
            cheesedb::Error::BackendUnavailable { backend: StorageBackend::Uring, reason: "switched off".into() };
        let failure = Failure::from(error);
        assert_eq!(failure.exit_status(), EXIT_ERROR);
        assert!(failure.message().ends_with("run with --io std (or CHEESEDB_IO=std) instead"), "{failure}");
    }
}
