//! What kind of failure a storage backend met, in terms a caller can act on.
//!
//! Every backend error names its kind, so that the engine can pass on "the disk is full" or
//! "permission denied" as a fact rather than as text, and the command line can choose its
//! advice without reading messages.

use core::fmt;

/// The kind of a storage failure. New kinds may be added; match with a wildcard arm.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum StorageErrorKind {
    /// No file or folder has that name.
    NotFound,
    /// The device or the user's quota has no room left for the write.
    NoSpace,
    /// The operating system refused the operation to this user.
    PermissionDenied,
    /// The file system is mounted read-only.
    ReadOnly,
    /// The backend or the file system cannot do this operation at all.
    Unsupported,
    /// The operation was interrupted before it finished; it may succeed if tried again.
    Interrupted,
    /// Any other failure (a device error, a read past the end, a lost handle).
    Other,
}

impl StorageErrorKind {
    /// A few words naming the kind, for messages.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            StorageErrorKind::NotFound => "not found",
            StorageErrorKind::NoSpace => "no space left",
            StorageErrorKind::PermissionDenied => "permission denied",
            StorageErrorKind::ReadOnly => "read-only file system",
            StorageErrorKind::Unsupported => "not supported",
            StorageErrorKind::Interrupted => "interrupted",
            StorageErrorKind::Other => "storage failure",
        }
    }
}

impl fmt::Display for StorageErrorKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}

/// The error of a [`Storage`](crate::Storage) backend: a real error that can be kept as the
/// source of the engine's [`Error`](crate::Error), and that says what kind of failure it was.
pub trait StorageError: core::error::Error + Send + Sync + 'static {
    /// The kind of this failure.
    fn kind(&self) -> StorageErrorKind;
}

#[cfg(feature = "std")]
mod from_std {
    use super::{StorageError, StorageErrorKind};
    use std::io::{Error, ErrorKind};

    // Raw errno values, shared by Linux, macOS and the BSDs, for an error whose kind std left
    // unnamed (one built from a number by hand); the kind is tried first, the number only then.
    const NO_SPACE_ERRNO: i32 = 28;
    #[cfg(target_os = "linux")]
    const QUOTA_EXCEEDED_ERRNO: i32 = 122;
    #[cfg(target_os = "macos")]
    const QUOTA_EXCEEDED_ERRNO: i32 = 69;
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    const QUOTA_EXCEEDED_ERRNO: i32 = NO_SPACE_ERRNO;
    const READ_ONLY_ERRNO: i32 = 30;
    const PERMISSION_ERRNO: i32 = 1;
    const ACCESS_ERRNO: i32 = 13;

    impl StorageError for Error {
        fn kind(&self) -> StorageErrorKind {
            match Error::kind(self) {
                ErrorKind::NotFound => StorageErrorKind::NotFound,
                ErrorKind::StorageFull | ErrorKind::QuotaExceeded => StorageErrorKind::NoSpace,
                ErrorKind::PermissionDenied => StorageErrorKind::PermissionDenied,
                ErrorKind::ReadOnlyFilesystem => StorageErrorKind::ReadOnly,
                ErrorKind::Unsupported => StorageErrorKind::Unsupported,
                ErrorKind::Interrupted => StorageErrorKind::Interrupted,
                _ => match self.raw_os_error() {
                    Some(NO_SPACE_ERRNO | QUOTA_EXCEEDED_ERRNO) => StorageErrorKind::NoSpace,
                    Some(READ_ONLY_ERRNO) => StorageErrorKind::ReadOnly,
                    Some(PERMISSION_ERRNO | ACCESS_ERRNO) => StorageErrorKind::PermissionDenied,
                    _ => StorageErrorKind::Other,
                },
            }
        }
    }

    impl StorageErrorKind {
        /// The kind in std's terms: no space is `StorageFull`, a read-only file system is
        /// `ReadOnlyFilesystem`.
        #[must_use]
        pub fn to_io_kind(self) -> ErrorKind {
            match self {
                StorageErrorKind::NotFound => ErrorKind::NotFound,
                StorageErrorKind::NoSpace => ErrorKind::StorageFull,
                StorageErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
                StorageErrorKind::ReadOnly => ErrorKind::ReadOnlyFilesystem,
                StorageErrorKind::Unsupported => ErrorKind::Unsupported,
                StorageErrorKind::Interrupted => ErrorKind::Interrupted,
                StorageErrorKind::Other => ErrorKind::Other,
            }
        }
    }
}
