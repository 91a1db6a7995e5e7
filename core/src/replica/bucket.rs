//! The object store as replication needs it: five calls, two of them conditional.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Error;

/// The version tag (an S3 `ETag`) of an object as last written or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectTag(pub String);

/// Why a call to the object store failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BucketError {
    /// A conditional write found the object not as it required: already there for a create,
    /// replaced meanwhile (or gone) for a replacement.
    PreconditionFailed,
    /// The store could not be reached or refused the call; the words are its own.
    Unavailable(String),
}

impl BucketError {
    /// The engine's error for a failure that is not a lost race.
    #[must_use]
    pub fn into_error(self) -> Error {
        match self {
            BucketError::PreconditionFailed => {
                Error::ObjectStore { detail: String::from("a conditional write found the object changed") }
            }
            BucketError::Unavailable(detail) => Error::ObjectStore { detail },
        }
    }
}

/// An S3-compatible bucket. Every call either happened whole or not at all, as S3 promises;
/// a call that returns an error may still have happened (a lost reply), and callers allow for
/// that: a piece written twice holds the same bytes, a head replaced is checked by its tag.
pub trait Bucket {
    /// Writes `bytes` to `key` only if no object has that key (`If-None-Match: *`).
    ///
    /// # Errors
    ///
    /// `PreconditionFailed` when the key exists; `Unavailable` otherwise.
    fn put_new(&mut self, key: &str, bytes: &[u8]) -> Result<ObjectTag, BucketError>;

    /// Replaces the object at `key` only if its tag is still `expected` (`If-Match`).
    ///
    /// # Errors
    ///
    /// `PreconditionFailed` when the object changed or is gone; `Unavailable` otherwise.
    fn put_replacing(&mut self, key: &str, bytes: &[u8], expected: &ObjectTag) -> Result<ObjectTag, BucketError>;

    /// The object at `key` and its tag, or `None` when there is none.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the store fails.
    fn get(&mut self, key: &str) -> Result<Option<(Vec<u8>, ObjectTag)>, BucketError>;

    /// Deletes the object at `key`; deleting a missing key succeeds.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the store fails.
    fn delete(&mut self, key: &str) -> Result<(), BucketError>;

    /// The keys that start with `prefix`, in any order.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the store fails.
    fn list(&mut self, prefix: &str) -> Result<Vec<String>, BucketError>;
}
