//! What a LIST of the object store says a replica holds, read as a hint and never as a fact: a
//! key is taken only when its shape is that of a head or a piece under the prefix (see
//! [`classify_key`]), and every head so found is then read and checked whole. A LIST answer
//! that names foreign keys, or ignores the prefix, adds nothing here.

use alloc::string::String;
use alloc::vec::Vec;

use super::bucket::{Bucket, BucketError};
use super::keys::{classify_key, ReplicaKey, ReplicaPrefix};
use crate::error::Error;

/// The agents a replica holds, by their folders' keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaListing {
    /// The key of every head, sorted.
    pub heads: Vec<String>,
    /// The folders (as [`super::agent_prefix`] makes them) that hold pieces but no head: a first
    /// ship cut short before its head, or a head deleted. Sorted.
    pub headless: Vec<String>,
}

impl ReplicaListing {
    /// Whether the prefix holds nothing of any replica.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty() && self.headless.is_empty()
    }
}

/// The heads and headless folders under `prefix`, from one LIST.
///
/// # Errors
///
/// `Error::ObjectStore` when the bucket fails.
pub fn list_replica<B: Bucket>(bucket: &mut B, prefix: &ReplicaPrefix) -> Result<ReplicaListing, Error> {
    let folder = alloc::format!("{}agents/", prefix.as_str());
    let keys = bucket.list(&folder).map_err(BucketError::into_error)?;
    let mut heads = Vec::new();
    let mut with_pieces = Vec::new();
    for key in &keys {
        match classify_key(prefix, key) {
            Some(ReplicaKey::Head { .. }) => heads.push(key.clone()),
            Some(ReplicaKey::Piece { folder }) => with_pieces.push(String::from(folder)),
            None => {}
        }
    }
    heads.sort();
    heads.dedup();
    with_pieces.sort();
    with_pieces.dedup();
    let headless =
        with_pieces.into_iter().filter(|folder| !heads.iter().any(|head| head.starts_with(folder))).collect();
    Ok(ReplicaListing { heads, headless })
}
