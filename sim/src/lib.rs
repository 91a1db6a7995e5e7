//! Deterministic simulation of cheesedb.
//!
//! - [`storage::SimStorage`]: the engine's storage trait on a simulated disk that models the
//!   page cache (a durable and a volatile image of every file and name), crashes that keep, drop,
//!   tear or garble each unsynced change, and faults drawn per seed.
//! - [`model`]: an independent, obviously correct model of what the engine promises.
//! - [`harness`]: random workloads driven through the real engine on the simulated disk, checked
//!   against the model after every step and every crash.
//! - [`explore`]: every crash state of the small write protocols, and every single-byte
//!   corruption of a sealed segment.
//! - [`bucket`]: an object store in memory with a network's faults, which the replication
//!   part of a run ships agents to.
//! - [`key_oracle`]: the keys an encrypted agent's token and files yield, tried on its sealed
//!   records, current or copied before an Erase.
//! - [`space_model`]: the model of spaces shared by agents (members, roles, authors, and recall
//!   across every member's memory), ahead of the engine's spaces, which it is to check.
//!
//! Same seed, same run: every choice comes from [`random::Random`].
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]

pub mod bucket;
pub mod campaign;
pub mod canary;
pub mod compare;
pub mod explore;
pub mod group_commit;
pub mod harness;
pub mod key_oracle;
pub mod model;
pub mod paths;
pub mod random;
pub mod space_model;
pub mod storage;
pub mod trace;
