//! [`StoreBuilder`]: every way of opening a store folder, or of reaching the memory server that
//! holds it, with its settings in one place.
#![allow(deprecated)] // `Client` is a served store's connections: deprecated to users only.

use std::path::{Path, PathBuf};

use cheesedb_core::{Error, Options, StorageOperation, TrustRules};

use crate::client::Client;
use crate::files::{create_private_folder, FileStorage};
use crate::io::Io;
use crate::lock::FolderLock;
use crate::permissions::check_private;
use crate::served_store::ServedStore;
use crate::store::Store;

/// Settings for opening a store folder; made by [`Store::builder`], used by
/// [`StoreBuilder::open`] (the store in this process) or [`StoreBuilder::connect`] (the memory
/// server that holds it).
///
/// ```
/// use cheesedb::{Io, Options, Store};
///
/// # fn main() -> Result<(), cheesedb::Error> {
/// # let folder = tempfile::tempdir().map_err(|_| cheesedb::Error::Locked)?;
/// let store = Store::builder(folder.path()).options(Options::default()).io(Io::Std).open()?;
/// store.create_agent("alice")?;
/// drop(store);
/// let reader = Store::builder(folder.path()).read_only(true).open()?;
/// assert_eq!(reader.create_agent("bob"), Err(cheesedb::Error::ReadOnly));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct StoreBuilder {
    path: PathBuf,
    options: Options,
    io: Io,
    read_only: bool,
    allow_loose_permissions: bool,
    trust_rules: TrustRules,
}

impl StoreBuilder {
    pub(crate) fn new(path: PathBuf) -> StoreBuilder {
        StoreBuilder {
            path,
            options: Options::default(),
            io: Io::default(),
            read_only: false,
            allow_loose_permissions: false,
            trust_rules: TrustRules::new(),
        }
    }

    /// The settings every agent is opened with (default: `Options::default()`).
    #[must_use]
    pub fn options(mut self, options: Options) -> StoreBuilder {
        self.options = options;
        self
    }

    /// How the files are reached (default: [`Io::Std`]). With [`Io::Uring`] the kernel is
    /// probed first: where io_uring cannot be used the open fails with
    /// `Error::BackendUnavailable` saying why, and nothing is created.
    ///
    /// ```
    /// use cheesedb::{Io, Options, Store};
    ///
    /// # fn main() -> Result<(), cheesedb::Error> {
    /// # let folder = tempfile::tempdir().map_err(|_| cheesedb::Error::Locked)?;
    /// let io: Io = std::env::var("CHEESEDB_IO").ok().and_then(|name| name.parse().ok()).unwrap_or_default();
    /// let options = Options::default().segment_size_max_bytes(4096);
    /// let store = Store::builder(folder.path()).options(options).io(io).open()?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn io(mut self, io: Io) -> StoreBuilder {
        self.io = io;
        self
    }

    /// Opens the store for reading only (default: false). Nothing is created or written, not
    /// even a lock file, so it works on read-only media; every write method fails with
    /// `Error::ReadOnly`. A store that needs a repair first (a torn end, an interrupted
    /// erasure, leftovers of a rewrite) fails with `Error::RepairNeeded`. Readers share the
    /// folder with each other, never with a writer.
    #[must_use]
    pub fn read_only(mut self, read_only: bool) -> StoreBuilder {
        self.read_only = read_only;
        self
    }

    /// Opens a folder that another user owns or that others may write to (default: false,
    /// such a folder is refused with `Error::FolderNotPrivate`).
    #[must_use]
    pub fn allow_loose_permissions(mut self, allow: bool) -> StoreBuilder {
        self.allow_loose_permissions = allow;
        self
    }

    /// How far the lots of each label are to be believed, for [`crate::Agent::trust`]
    /// (default: no rules, every label `Normal`). A connected store uses the server's rules
    /// instead (its data folder's `trust.toml`).
    #[must_use]
    pub fn trust_rules(mut self, rules: TrustRules) -> StoreBuilder {
        self.trust_rules = rules;
        self
    }

    /// Reaches the memory server (`cheesedb serve`) that holds the store: the path is its
    /// socket, or the data folder holding
    /// [`SOCKET_FILE`](crate::protocol::SOCKET_FILE). One connection is made now, so a
    /// missing server shows at once. With [`StoreBuilder::read_only`] every write is refused
    /// here with `Error::ReadOnly`, before any request; the options, the I/O and the trust
    /// rules are the server's.
    ///
    /// # Errors
    ///
    /// `Error::ServerUnavailable` when no server answers there; `Error::SocketRefused` when a
    /// symbolic link or a socket of another user stands at the socket's name (a client never
    /// follows a link to a server, which could be another folder's); `Error::VersionMismatch`
    /// for a server of another protocol version; `Error::PeerRefused` for a server of another
    /// user (other than root); `Error::ServerBusy` when it serves all the connections it allows.
    pub fn connect(self) -> Result<Store<FileStorage>, Error> {
        Ok(Store::served(ServedStore::new(Client::connect(&self.path)?, self.read_only)))
    }

    /// Opens the store. A read-write open makes the folder (mode 0700) if it does not exist and
    /// takes it for itself: a second open of the same folder, in this process or another, gets
    /// `Error::Locked`.
    ///
    /// # Errors
    ///
    /// - `Error::Locked` when another open store holds the folder; `Error::FolderNotPrivate`
    ///   unless loose permissions are allowed.
    /// - `Error::BackendUnavailable` when [`Io::Uring`] cannot be used here.
    /// - `Error::RepairNeeded` when a read-only open finds a repair to make; `Error::Corrupt`
    ///   when the catalog is damaged.
    /// - `Error::LimitExceeded` for options out of range; `Error::Io` when the folder cannot be
    ///   made, opened or read.
    pub fn open(self) -> Result<Store<FileStorage>, Error> {
        let path = self.path.as_path();
        let shown = || path.display().to_string();
        let storage = FileStorage::open(self.path.clone(), self.io, self.read_only)?;
        if !self.read_only {
            create_private_folder(path)
                .map_err(|error| Error::from_storage(StorageOperation::Creating, &shown(), error))?;
        }
        let root = storage
            .root_descriptor()
            .map_err(|error| Error::from_storage(StorageOperation::Opening, &shown(), error))?;
        if !self.allow_loose_permissions {
            check_private(root, path)?;
        }
        let lock = FolderLock::acquire(root, path, self.read_only)?;
        Ok(Store::open_files(storage, self.options, lock, self.read_only)?.with_trust_rules(self.trust_rules))
    }
}

impl Store<FileStorage> {
    /// Settings for opening the store in `path`: options, I/O, read-only, loose permissions.
    /// Every other way of opening a store folder is a shorthand for one of these.
    #[must_use]
    pub fn builder(path: impl AsRef<Path>) -> StoreBuilder {
        StoreBuilder::new(path.as_ref().to_path_buf())
    }

    /// Opens the store in `path`, creating the folder (mode 0700) if needed, and takes its
    /// lock: a second open of the same folder, in this process or another, gets `Error::Locked`.
    /// A folder that another user owns, or that others may write to, is refused with
    /// `Error::FolderNotPrivate` (see [`StoreBuilder::allow_loose_permissions`]).
    ///
    /// # Errors
    ///
    /// As [`StoreBuilder::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Store<FileStorage>, Error> {
        Store::builder(path).open()
    }

    /// Opens the store in `path` for reading only; see [`StoreBuilder::read_only`].
    ///
    /// # Errors
    ///
    /// As [`StoreBuilder::open`].
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store<FileStorage>, Error> {
        Store::builder(path).read_only(true).open()
    }

    /// Reaches the store that a memory server (`cheesedb serve`) holds, through the server's
    /// socket at `path` (or the data folder holding it); see [`StoreBuilder::connect`]. The
    /// store and the agents it opens have the methods of a store open here.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), cheesedb::Error> {
    /// let store = cheesedb::Store::connect("/home/me/.cheesedb")?;
    /// let token = store.create_agent("alice")?;
    /// let alice = store.open_agent(&token)?;
    /// let lot = alice.add_lot("note", b"rain in Pune")?;
    /// assert_eq!(alice.get(lot)?.content(), Some(&b"rain in Pune"[..]));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`StoreBuilder::connect`].
    pub fn connect(path: impl AsRef<Path>) -> Result<Store<FileStorage>, Error> {
        Store::builder(path).connect()
    }
}
