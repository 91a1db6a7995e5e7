//! Replication of agents' files to an object store, checked by the hash chain.
//!
//! A replica of one agent is a set of **pieces**, objects each holding a stretch of one file of
//! the agent's folder (a segment, the key table, the epoch file), written once and never
//! replaced, and one **head** object listing them with the fingerprint they reach. Only the
//! head is ever replaced, and only by a conditional write that names the version it replaces,
//! so two stores shipping to one place cannot interleave: the second finds the head moved and
//! stops ([`crate::Error::ReplicaFenced`]).
//!
//! A segment's stretch ends at a commit marker: the bucket holds whole durable writes, never a
//! torn one. An Erase rewrites stretches already shipped (redaction in place, or a destroyed
//! key): the files it touched are shipped again whole, the head moves to them, and only then are
//! the old pieces deleted, so that once a ship reports no deletions pending, no object holds the
//! erased text.
//!
//! The core performs no network I/O: the object store is the [`Bucket`] trait, implemented over
//! HTTP by the `cheesedb` crate and in memory, with faults, by the simulator.

mod bucket;
mod commit_point;
mod follow;
mod grants;
pub mod head;
mod keys;
mod listing;
mod local_files;
mod owner;
mod patched_storage;
mod pieces;
mod restore;
mod ship;

pub use bucket::{Bucket, BucketError, ObjectTag};
pub use commit_point::{find_commit_point, CommitPoint};
pub use follow::{apply_head, Follower};
pub use grants::{check_head_grants, AgentEntry};
pub use head::{Piece, ReplicaHead};
pub use keys::{agent_prefix, classify_key, head_key, is_piece_key_of, piece_key, Owner, ReplicaKey, ReplicaPrefix};
pub use listing::{list_replica, ReplicaListing};
pub use restore::{fetch_head, parse_head, restore_agent_files};
pub use ship::{AgentShipper, ShipOutcome, ShipPlan};
