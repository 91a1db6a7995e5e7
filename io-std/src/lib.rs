//! cheesedb: agent memory with a recall button.
//!
//! An AI agent learns from sources it cannot fully trust. Each memory stored here names the
//! sources (or other memories) it was learned from. When a source turns out to be wrong,
//! malicious or private, one call removes it and everything learned from it; with
//! [`Removal::Erase`] the text is gone from the files on disk before the call returns.
//!
//! ```
//! use cheesedb::{Id, Leg, Mode, Removal, Store};
//!
//! # fn main() -> Result<(), cheesedb::Error> {
//! # let folder = tempfile::tempdir().map_err(|_| cheesedb::Error::Locked)?;
//! let store = Store::open(folder.path())?;
//! let token = store.create_agent("alice")?;
//! let alice = store.open_agent(&token)?;
//!
//! let a = alice.add_lot("user_message", b"I live in Pune")?;
//! let b = alice.add_lot("web_page", b"profile: lives in Pune")?;
//! let c = alice.add_lot("weather_tool", b"Pune: rain")?;
//! let m1 = alice.remember(b"user lives in Pune", &[Leg::from([a]), Leg::from([b])])?;
//! let m2 = alice.remember(b"Pune is rainy", &[Leg::from([c])])?;
//! let m3 = alice.remember(b"carry an umbrella", &[Leg::from([m1, m2])])?;
//!
//! assert_eq!(alice.preview_recall(c, Mode::Fair)?, vec![m2, m3]);
//! let removed: Vec<Id> = alice.recall(c, Mode::Fair, Removal::Erase)?;
//! assert_eq!(removed, vec![m2, m3]);
//! assert!(alice.get(m1)?.is_alive());
//! assert_eq!(alice.get(m2)?.content(), None);
//! let fingerprint = alice.verify()?; // keep it elsewhere; compare later
//! # let _ = fingerprint;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

#[cfg(feature = "server")]
pub mod access_log;
mod agent;
mod auto_compaction;
mod batch;
mod batch_gate;
mod builder;
mod client;
mod compactor;
mod files;
mod folder;
mod group;
mod grouping;
mod io;
mod lock;
mod mutex;
mod permissions;
mod process;
// The memory server's protocol, shared by this crate's client and server and reached by their
// tests: an implementation detail that may change in any release, hidden from the docs.
// Programs reach a server through `Client`, or run one with the `server` feature.
#[doc(hidden)]
pub mod protocol;
mod read_tracking;
#[cfg(feature = "replication")]
pub mod replication;
mod search;
mod served_store;
#[cfg(feature = "server")]
pub mod server;
mod shared;
mod space;
mod store;
mod uring;
mod user;
mod verify;

pub use agent::Agent;
pub use batch::Batch;
pub use builder::StoreBuilder;
pub use cheesedb_core::{
    conceal_token_digits, limits, CorruptReason, Error, ErrorSource, FenceReason, Fingerprint, Found, FoundKind, Hit,
    Id, InternalRule, LeftBehind, Leg, Limit, LocalOperation, MessageProblem, Mode, NameKind, NameProblem, Node,
    NodeKind, Options, Ranking, ReadSet, Removal, Report, Role, SearchPage, SearchQuery, SocketProblem, StagedBatch,
    Storage, StorageBackend, StorageError, StorageErrorKind, StorageFile, StorageOperation, Token, TrustLevel,
    TrustRules, UnknownTrustLevel, VectorProblem, READ_SET_MAX_IDS,
};
#[allow(deprecated)]
pub use client::{Client, ClientAgent, ClientBatch};
pub use files::{FileHandle, FileStorage};
pub use io::{Io, UnknownIo};
pub use lock::LOCK_FILE;
pub use protocol::SOCKET_FILE;
pub use read_tracking::ReadTracking;
pub use shared::SharedStorage;
pub use space::{Space, SpaceMembers, SpaceRecall};
pub use store::Store;

#[cfg(test)]
mod tests {
    fn assert_send_sync_clone<T: Send + Sync + Clone>() {}

    #[test]
    #[allow(deprecated)]
    fn handles_can_be_shared_between_threads() {
        assert_send_sync_clone::<crate::Store>();
        assert_send_sync_clone::<crate::Agent>();
        assert_send_sync_clone::<crate::Client>();
        assert_send_sync_clone::<crate::ClientAgent>();
    }
}
