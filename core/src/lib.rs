//! The engine of cheesedb: agent memory with a recall button.
//!
//! This crate is `#![no_std]` and performs no I/O of its own: it reaches files only through the
//! [`Storage`] trait, and gets randomness from it too. The `cheesedb` crate puts it on std
//! files; the simulator puts it on a fault-injecting disk in RAM. Use this crate directly to
//! run cheesedb on a storage of your own.
//!
//! ```
//! # use cheesedb_core::ram_storage::RamStorage;
//! use cheesedb_core::{Id, Leg, Mode, Options, Removal, StoreEngine};
//!
//! # fn main() -> Result<(), cheesedb_core::Error> {
//! let mut store = StoreEngine::open(RamStorage::default(), Options::default())?;
//! let token = store.create_agent("alice")?;
//! let mut alice = store.open_agent(store.authenticate(&token)?)?;
//!
//! let a = alice.add_lot("user_message", b"I live in Pune")?;
//! let b = alice.add_lot("web_page", b"profile: lives in Pune")?;
//! let c = alice.add_lot("weather_tool", b"Pune: rain")?;
//! let m1 = alice.remember(b"user lives in Pune", &[Leg::from([a]), Leg::from([b])])?;
//! let m2 = alice.remember(b"Pune is rainy", &[Leg::from([c])])?;
//! let m3 = alice.remember(b"carry an umbrella", &[Leg::from([m1, m2])])?;
//!
//! let removed: Vec<Id> = alice.recall(c, Mode::Fair, Removal::Erase)?;
//! assert_eq!(removed, vec![m2, m3]);
//! assert!(alice.get(m1)?.is_alive());
//! assert_eq!(alice.get(m2)?.content(), None);
//! # Ok(())
//! # }
//! ```
#![no_std]
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// Whether the deliberate bug `$name` is switched on: always false unless the crate is built
/// with the `mutants` feature (see `mutants`), so a default build holds no trace of them.
macro_rules! mutant {
    ($name:ident) => {{
        #[cfg(feature = "mutants")]
        let active = crate::mutants::is_active(crate::mutants::Mutant::$name);
        #[cfg(not(feature = "mutants"))]
        let active = false;
        active
    }};
}

// The modules below marked `doc(hidden)` serve the simulator, the tests and the fuzz targets;
// they are not part of the documented API, and a release may change them without notice. New
// code should reach them through `internal`.
#[doc(hidden)]
mod agent_key;
pub mod checksum;
#[doc(hidden)]
pub mod codec;
mod conceal;
mod convert;
mod corrupt_reason;
#[doc(hidden)]
pub mod digest;
mod engine;
mod error;
mod error_facts;
mod fingerprint;
#[doc(hidden)]
pub mod graph;
mod id;
mod left_behind;
pub mod limits;
#[doc(hidden)]
pub mod log;
#[cfg(feature = "mutants")]
#[doc(hidden)]
pub mod mutants;
mod node;
#[doc(hidden)]
pub mod ram_storage;
mod read_set;
pub mod replica;
mod report;
mod role;
#[doc(hidden)]
pub mod seal;
#[doc(hidden)]
pub mod search;
mod search_page;
pub mod space;
mod storage;
mod storage_error;
mod store;
mod token;
mod trust;

pub use corrupt_reason::CorruptReason;

/// The engine's internals, for the simulator, the tests and the fuzz targets: outside the
/// documented API and its compatibility promise.
#[doc(hidden)]
pub mod internal {
    pub use crate::engine::search_build;
    #[cfg(feature = "mutants")]
    pub use crate::mutants;
    pub use crate::{checksum, codec, digest, graph, log, ram_storage, search};
}

pub use engine::{verify, AgentEngine, Batch, StagedBatch, Write};
pub use error::{Error, ErrorSource, LocalOperation, SocketProblem, VectorProblem};
pub use error_facts::{
    FenceReason, InternalRule, Limit, MessageProblem, NameProblem, StorageBackend, StorageOperation,
};
pub use fingerprint::Fingerprint;
pub use id::{Id, Leg, Mode, Removal};
pub use left_behind::LeftBehind;
pub use limits::Options;
pub use node::{Node, NodeKind};
pub use read_set::{ReadSet, READ_SET_MAX_IDS};
pub use report::Report;
pub use role::Role;
pub use search::Hit;
pub use search_page::{Found, FoundKind, Ranking, SearchPage, SearchQuery};
pub use space::{Grantee, SpaceEngine, SpaceRecalls, SpaceWrite};
pub use storage::{NameKind, Storage, StorageFile};
pub use storage_error::{StorageError, StorageErrorKind};
pub use store::{AgentEntry, AgentKey, StoreEngine};
pub use token::{conceal_token_digits, Token};
pub use trust::{TrustLevel, TrustRules, UnknownTrustLevel};
