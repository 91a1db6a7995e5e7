//! Bringing agents back from a bucket: [`restore_from`] once, or [`Follow`] to keep a copy
//! current.

use std::path::Path;

use cheesedb_core::replica::ReplicaHead;
use cheesedb_core::replica::{
    fetch_head, parse_head, restore_agent_files, Bucket, BucketError, Follower, ReplicaPrefix,
};
use cheesedb_core::{Error, Fingerprint};

use crate::store::Store;

/// The heads of every agent replicated under `prefix`, or of the one named `agent`.
fn heads<B: Bucket>(bucket: &mut B, prefix: &ReplicaPrefix, agent: Option<&str>) -> Result<Vec<ReplicaHead>, Error> {
    if let Some(name) = agent {
        return match fetch_head(bucket, prefix, name)? {
            Some((head, _)) => Ok(vec![head]),
            None => Err(Error::UnknownAgent { name: name.to_owned() }),
        };
    }
    let folder = format!("{}agents/", prefix.as_str());
    let mut heads = Vec::new();
    for key in bucket.list(&folder).map_err(BucketError::into_error)? {
        if !key.ends_with("/head") {
            continue;
        }
        if let Some((bytes, _)) = bucket.get(&key).map_err(BucketError::into_error)? {
            heads.push(parse_head(prefix, &key, &bytes)?);
        }
    }
    heads.sort_by_key(|head| head.agent);
    Ok(heads)
}

/// Restores the agents replicated under `prefix` of `bucket` (or only `agent`) into the store
/// at `folder` (made if missing; it must not hold agents of those names or numbers), to the
/// latest head, or to `point` (a fingerprint kept earlier; needs `agent`). Each agent's files
/// are checked against every digest and verified to the head's fingerprint (or `point`) before
/// the catalog names it. Returns each agent's name and fingerprint.
///
/// # Errors
///
/// - `Error::Corrupt` naming the object at fault; `Error::HistoryMismatch` when `point` is not
///   in the replica's history; `Error::UnknownAgent` when `agent` has no replica.
/// - `Error::AgentExists` when the store already holds such an agent.
/// - `Error::ObjectStore` when the bucket fails; `Error::Io` and the like when the store does.
pub fn restore_from<B: Bucket>(
    bucket: &mut B,
    prefix: &str,
    folder: &Path,
    agent: Option<&str>,
    point: Option<Fingerprint>,
) -> Result<Vec<(String, Fingerprint)>, Error> {
    if point.is_some() && agent.is_none() {
        return Err(Error::InvalidName { reason: "a fingerprint belongs to one agent: name it too" });
    }
    let prefix = ReplicaPrefix::new(prefix);
    let heads = heads(bucket, &prefix, agent)?;
    let store = Store::open(folder)?;
    let mut catalog = store.shared.catalog()?;
    let mut restored = Vec::new();
    for head in heads {
        let fingerprint =
            catalog.adopt_agent(&head, |storage| restore_agent_files(storage, bucket, &prefix, &head, point))?;
        restored.push((head.name.clone(), fingerprint));
    }
    Ok(restored)
}

/// A copy of a store's replicas kept current in a folder: each [`Follow::step`] opens the store
/// there, applies what the bucket's heads added (checked as `Follower` says), and closes it, so
/// that readers can open it read-only between steps.
pub struct Follow<B: Bucket> {
    bucket: B,
    prefix: ReplicaPrefix,
    folder: std::path::PathBuf,
    agent: Option<String>,
    followers: Vec<Follower>,
}

impl<B: Bucket> std::fmt::Debug for Follow<B> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Follow").field("folder", &self.folder).finish_non_exhaustive()
    }
}

impl<B: Bucket> Follow<B> {
    /// Follows the agents replicated under `prefix` (or only `agent`) into `folder`.
    #[must_use]
    pub fn new(bucket: B, prefix: &str, folder: &Path, agent: Option<&str>) -> Follow<B> {
        Follow {
            bucket,
            prefix: ReplicaPrefix::new(prefix),
            folder: folder.to_path_buf(),
            agent: agent.map(str::to_owned),
            followers: Vec::new(),
        }
    }

    /// Brings the copy up to the bucket: agents new to it are restored, the others extended.
    /// Returns the agents that changed, with their new fingerprints.
    ///
    /// # Errors
    ///
    /// `Error::Corrupt` naming the object when a head or piece does not extend what the copy
    /// holds (the copy is left as it was); `Error::Locked` while a reader or writer has the
    /// folder open; `Error::ObjectStore` when the bucket fails.
    pub fn step(&mut self) -> Result<Vec<(String, Fingerprint)>, Error> {
        let store = Store::open(&self.folder)?;
        let mut catalog = store.shared.catalog()?;
        let mut changed = Vec::new();
        for head in heads(&mut self.bucket, &self.prefix, self.agent.as_deref())? {
            if self.followers.iter().any(|follower| follower.name() == head.name) {
                continue;
            }
            let held = catalog.agent_entries().into_iter().any(|entry| entry.name == head.name);
            if !held {
                let bucket = &mut self.bucket;
                let fingerprint = catalog
                    .adopt_agent(&head, |storage| restore_agent_files(storage, bucket, &self.prefix, &head, None))?;
                changed.push((head.name.clone(), fingerprint));
            }
            self.followers.push(Follower::start(catalog.storage(), self.prefix.clone(), &head)?);
        }
        for follower in &mut self.followers {
            if let Some(fingerprint) = follower.step(catalog.storage(), &mut self.bucket)? {
                changed.push((follower.name().to_owned(), fingerprint));
            }
        }
        Ok(changed)
    }
}
