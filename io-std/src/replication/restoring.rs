//! Bringing agents and spaces back from a bucket: [`restore_from`] once, or [`Follow`] to keep
//! a copy current.

use std::path::Path;

use cheesedb_core::replica::ReplicaHead;
use cheesedb_core::replica::{
    check_head_grants, fetch_head, head_key, list_replica, parse_head, restore_agent_files, Bucket, BucketError,
    Follower, Owner, ReplicaPrefix,
};
use cheesedb_core::{Error, Fingerprint, LocalOperation, NameProblem};

use crate::store::Store;

/// What a restore brought back, and what it found in the replica but could not bring back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreReport {
    /// Each agent restored, with the fingerprint its files verify to.
    pub restored: Vec<(String, Fingerprint)>,
    /// Each space restored (a whole restore brings every space back), with its fingerprint.
    pub spaces_restored: Vec<(String, Fingerprint)>,
    /// The keys of heads missing from folders that hold pieces: an agent shipped (or whose
    /// first ship was cut short before its head) whose head is gone. Nothing of it was
    /// restored; a caller should say so loudly.
    pub heads_missing: Vec<String>,
}

/// The heads of every agent replicated under `prefix` (or of the one named `agent`, with the
/// others that can be read, to compare their grants), and the heads missing from folders that
/// hold pieces.
fn heads<B: Bucket>(
    bucket: &mut B,
    prefix: &ReplicaPrefix,
    agent: Option<&str>,
) -> Result<(Vec<ReplicaHead>, Vec<String>), Error> {
    let listing = list_replica(bucket, prefix)?;
    let mut heads = Vec::new();
    if let Some(name) = agent {
        match fetch_head(bucket, prefix, Owner::agent(name))? {
            Some((head, _)) => heads.push(head),
            None => return Err(Error::UnknownAgent { name: name.to_owned() }),
        }
    }
    let own_key = agent.map(|name| head_key(prefix, Owner::agent(name)));
    for key in &listing.heads {
        if own_key.as_ref() == Some(key) {
            continue;
        }
        let Some((bytes, _)) = bucket.get(key).map_err(BucketError::into_error)? else { continue };
        match parse_head(prefix, key, &bytes) {
            Ok(head) => heads.push(head),
            Err(error) if agent.is_none() => return Err(error),
            // Restoring one agent: another's damaged head grants nothing, so it does not stop it.
            Err(_) => {}
        }
    }
    heads.sort_by_key(|head| head.agent);
    let heads_missing = match agent {
        Some(_) => Vec::new(),
        None => listing.headless.iter().map(|folder| format!("{folder}head")).collect(),
    };
    Ok((heads, heads_missing))
}

/// Restores the agents and spaces replicated under `prefix` of `bucket` (or only `agent`, with
/// every space of the replica the store lacks, since its memories may build on their nodes) into
/// the store at `folder` (made if missing; it must not hold agents of those names or numbers),
/// to the latest head, or the agent to `point` (a fingerprint kept earlier; needs `agent`).
/// Every head's access facts are checked first against the replica's other heads and the
/// store's agents (no two share a token hash or a number), then each one's files against every
/// digest, verified to the head's fingerprint (or `point`) before the catalog names it.
///
/// # Errors
///
/// - `Error::ReplicaNotFound` when the prefix holds no head and no piece (nothing restored).
/// - `Error::Corrupt` naming the object at fault (a head granting another agent's token among
///   them, checked before anything is restored); `Error::HistoryMismatch` when `point` is not
///   in the replica's history; `Error::UnknownAgent` when `agent` has no replica.
/// - `Error::AgentExists` when the store already holds such an agent; `Error::SpaceExists`
///   when a whole restore finds a space it holds.
/// - `Error::ObjectStore` when the bucket fails; `Error::Io` and the like when the store does.
pub fn restore_from<B: Bucket>(
    bucket: &mut B,
    prefix: &str,
    folder: &Path,
    agent: Option<&str>,
    point: Option<Fingerprint>,
) -> Result<RestoreReport, Error> {
    if point.is_some() && agent.is_none() {
        return Err(Error::InvalidName { reason: NameProblem::FingerprintWithoutAgent });
    }
    let prefix = ReplicaPrefix::new(prefix);
    let (heads, heads_missing) = heads(bucket, &prefix, agent)?;
    if heads.is_empty() && heads_missing.is_empty() {
        // An empty or mistyped prefix: restoring nothing is never what was asked.
        return Err(Error::ReplicaNotFound { prefix: prefix.as_str().to_owned() });
    }
    let store = Store::open(folder)?;
    let mut catalog = store.local(LocalOperation::Replication)?.catalog()?;
    check_head_grants(&prefix, &heads, &catalog.replicated_entries())?;
    let (mut restored, mut spaces_restored) = (Vec::new(), Vec::new());
    let held = catalog.replicated_entries();
    // One agent comes back with the spaces the store lacks: its memories may name their nodes.
    let wanted = |head: &&ReplicaHead| match agent {
        None => true,
        Some(_) if head.space => held.iter().all(|entry| entry.owner() != head.owner()),
        Some(name) => head.owner() == Owner::agent(name),
    };
    for head in heads.iter().filter(wanted) {
        let point = if head.space { None } else { point };
        let fingerprint = catalog.adopt(head, |storage| restore_agent_files(storage, bucket, &prefix, head, point))?;
        let list = if head.space { &mut spaces_restored } else { &mut restored };
        list.push((head.name.clone(), fingerprint));
    }
    Ok(RestoreReport { restored, spaces_restored, heads_missing })
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
    /// Follows the agents and spaces replicated under `prefix` (or only `agent`, with every
    /// space) into `folder`.
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

    /// Brings the copy up to the bucket: agents and spaces new to it are restored, the others
    /// extended. Returns the agents that changed, with their new fingerprints (spaces are kept
    /// current as well, and not listed).
    ///
    /// # Errors
    ///
    /// `Error::Corrupt` naming the object when a head or piece does not extend what the copy
    /// holds (the copy is left as it was); `Error::Locked` while a reader or writer has the
    /// folder open; `Error::ObjectStore` when the bucket fails.
    pub fn step(&mut self) -> Result<Vec<(String, Fingerprint)>, Error> {
        let store = Store::open(&self.folder)?;
        let mut catalog = store.local(LocalOperation::Replication)?.catalog()?;
        let mut changed = Vec::new();
        let (heads, _) = heads(&mut self.bucket, &self.prefix, self.agent.as_deref())?;
        check_head_grants(&self.prefix, &heads, &catalog.replicated_entries())?;
        for head in heads {
            let followed = self.followers.iter().any(|follower| follower.owner() == head.owner());
            // One agent is followed with every space: its memories may build on their nodes.
            let other = |name: &String| !head.space && head.name != *name;
            if followed || self.agent.as_ref().is_some_and(other) {
                continue;
            }
            let held = catalog.replicated_entries().iter().any(|entry| entry.owner() == head.owner());
            if !held {
                let bucket = &mut self.bucket;
                let fingerprint =
                    catalog.adopt(&head, |storage| restore_agent_files(storage, bucket, &self.prefix, &head, None))?;
                if !head.space {
                    changed.push((head.name.clone(), fingerprint));
                }
            }
            self.followers.push(Follower::start(catalog.storage(), self.prefix.clone(), &head)?);
        }
        for follower in &mut self.followers {
            let stepped = follower.step(catalog.storage(), &mut self.bucket)?;
            if let Some(fingerprint) = stepped.filter(|_| !follower.owner().space) {
                changed.push((follower.name().to_owned(), fingerprint));
            }
        }
        Ok(changed)
    }
}
