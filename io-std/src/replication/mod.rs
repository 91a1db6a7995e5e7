//! Replication of a store's agents to S3-compatible object storage (feature `replication`):
//! ship them ([`Replicator`]), bring them back ([`restore_from`]) and keep a copy current
//! ([`Follow`]). The format and the checks are the core's (`cheesedb_core::replica`); this is
//! the object store over HTTP and the store's locks.

mod replicator;
mod restoring;
mod s3_bucket;

pub use cheesedb_core::replica::{Bucket, BucketError, ObjectTag};
// The objects of a replica, for tools that inspect or check one.
pub use cheesedb_core::replica::{head_key, piece_key, Owner, Piece, ReplicaHead, ReplicaPrefix};
pub use replicator::{ReplicaStatus, Replicator, ShipReport};
pub use restoring::{restore_from, Follow, RestoreReport};
pub use s3_bucket::{ObjectStoreConfig, ReplicaLocation, S3Bucket};
