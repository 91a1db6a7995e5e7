//! [`Space`]: one member's handle to a space its store shares between agents.
//!
//! A space is reached only through a member's own [`Agent`](crate::Agent) ([`crate::Agent::space`]),
//! and every call is bounded by that member's role now. One type whether the store is open in
//! this process or held by a memory server: there each call is one request of the member's own
//! session, and the server bounds it by the member's role as a local store does.

mod local;
mod served;

use cheesedb_core::{Error, Fingerprint, Hit, Id, Leg, Mode, Node, Removal, Role, TrustLevel};

pub(crate) use local::{apply_space_recalls, LocalSpace, Member};
pub(crate) use served::{ServedMember, ServedSpace};

use crate::files::FileStorage;
use crate::protocol::WireSpaceMembers;
use crate::read_tracking::ReadTracking;
use crate::shared::SharedStorage;

/// What a recall in a space removed: in the space, and in each member's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceRecall {
    /// The space's memories that died with the recalled id, ascending.
    pub in_space: Vec<Id>,
    /// Each member (by name) whose memories died with it, and those memories, ascending.
    pub in_members: Vec<(String, Vec<Id>)>,
}

/// A space and the agents holding a role in it now, as [`crate::Store::spaces`] lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceMembers {
    /// The space's name.
    pub name: String,
    /// Each agent holding a role, by name, with it, in the order first granted one.
    pub members: Vec<(String, Role)>,
}

impl From<SpaceMembers> for WireSpaceMembers {
    fn from(space: SpaceMembers) -> WireSpaceMembers {
        WireSpaceMembers { name: space.name, members: space.members }
    }
}

impl From<WireSpaceMembers> for SpaceMembers {
    fn from(space: WireSpaceMembers) -> SpaceMembers {
        SpaceMembers { name: space.name, members: space.members }
    }
}

/// Counts the nodes `shown` of a space as read in `tracking`, when it tracks reads: each is
/// shared (`share_all` writes the member's stand-in the first time) and the stand-ins noted, so
/// the member's next tracked memory rests on them and a recall of them in the space reaches it.
/// A read-only store writes nothing (nothing can be remembered there either), and a node
/// recalled since it was shown is not counted.
pub(crate) fn count_as_read(
    shown: &[Id],
    tracking: &ReadTracking,
    share_all: impl FnOnce(&[Id]) -> Result<Vec<Id>, Error>,
) -> Result<(), Error> {
    if shown.is_empty() || !tracking.is_on() {
        return Ok(());
    }
    match share_all(shown) {
        Ok(stand_ins) => tracking.note(stand_ins),
        Err(Error::ReadOnly | Error::DeadParent { .. }) => {}
        Err(error) => return Err(error),
    }
    Ok(())
}

/// One member's handle to a space. Cheap to clone; clones share the space's engine (in this
/// process) or the member's session (through a server).
pub struct Space<S: SharedStorage = FileStorage> {
    reach: Reach<S>,
}

/// Where the space is.
enum Reach<S: SharedStorage> {
    /// Its store is open in this process.
    Local(LocalSpace<S>),
    /// A memory server holds its store.
    Served(ServedSpace),
}

impl<S: SharedStorage> Clone for Space<S> {
    fn clone(&self) -> Space<S> {
        let reach = match &self.reach {
            Reach::Local(space) => Reach::Local(space.clone()),
            Reach::Served(space) => Reach::Served(space.clone()),
        };
        Space { reach }
    }
}

impl<S: SharedStorage> std::fmt::Debug for Space<S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Space").field("name", &self.name()).finish_non_exhaustive()
    }
}

/// Calls the method of the same name on either kind of space.
macro_rules! either {
    ($space:expr, $method:ident($($argument:expr),*)) => {
        match &$space.reach {
            Reach::Local(space) => space.$method($($argument),*),
            Reach::Served(space) => space.$method($($argument),*),
        }
    };
}

impl<S: SharedStorage> Space<S> {
    pub(crate) fn local(space: LocalSpace<S>) -> Space<S> {
        Space { reach: Reach::Local(space) }
    }

    pub(crate) fn served(space: ServedSpace) -> Space<S> {
        Space { reach: Reach::Served(space) }
    }

    /// The space's name.
    #[must_use]
    pub fn name(&self) -> &str {
        either!(self, name())
    }

    /// Adds a source to the space, written by this member. Needs write.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` once the member holds no role, `Error::RoleTooLow`, and those of
    /// [`crate::Agent::add_lot`].
    pub fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        either!(self, add_lot(label, content))
    }

    /// Adds a memory of the space learned through `legs` (ids of the space). Needs write.
    ///
    /// # Errors
    ///
    /// As [`Space::add_lot`], and those of [`crate::Agent::remember`].
    pub fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        either!(self, remember(content, legs))
    }

    /// The id, in this member's own memory, that stands for node `id` of the space: give it in
    /// the legs of the member's memories to build on the space's node. A recall of the node in
    /// the space then removes what the member built on it. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::UnknownId` when the space has no such node,
    /// `Error::DeadParent` when it was recalled; the errors of the member's write.
    pub fn share(&self, id: Id) -> Result<Id, Error> {
        either!(self, share(id))
    }

    /// [`Space::share`] of every id of `ids` at once, in one durable write; the member's ids,
    /// in the order of `ids`. Nothing is written unless every id is an alive node of the space.
    ///
    /// # Errors
    ///
    /// As [`Space::share`].
    pub fn share_all(&self, ids: &[Id]) -> Result<Vec<Id>, Error> {
        either!(self, share_all(ids))
    }

    /// Recalls `id` in the space, with what depends on it there and in every member's memory
    /// (revoked members too). Needs admin. Durable in the space before it returns, and applied
    /// to every member open in the store's process (this one, or the memory server's) and every
    /// closed plaintext one; a closed encrypted member applies it at its next open, before its
    /// first answer. With `Removal::Erase`, the
    /// text of every dependent, in the space and in those members, is off the disk when this
    /// returns.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, `Error::RoleTooLow`, and those of [`crate::Agent::recall`]. When
    /// the space's recall is stored but a member's part fails, the first such error; the others
    /// were still reached, and that member applies it at its next open.
    pub fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<SpaceRecall, Error> {
        either!(self, recall(id, mode, removal))
    }

    /// What [`Space::recall`] of `id` with `mode` would remove, in the space and in each member
    /// (its Untrusted answer), without removing anything. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::preview_recall`].
    pub fn preview_recall(&self, id: Id, mode: Mode) -> Result<SpaceRecall, Error> {
        either!(self, preview_recall(id, mode))
    }

    /// A lot or memory of the space. Needs read. When the member's session tracks reads
    /// ([`crate::Agent::track_reads`]), an alive node shown counts as read: the member's own id
    /// standing for it (as [`Space::share`] gives it) is written the first time, and its next
    /// memory rests on it.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::get`]; when reads are tracked, those
    /// of the write of a new stand-in ([`Space::share`]).
    pub fn get(&self, id: Id) -> Result<Node, Error> {
        either!(self, get(id))
    }

    /// A lot or memory of the space with the text a recall without Erase left in the files, as
    /// [`crate::Agent::audit`] gives it. Needs read.
    ///
    /// # Errors
    ///
    /// As [`Space::get`].
    pub fn audit(&self, id: Id) -> Result<Node, Error> {
        either!(self, audit(id))
    }

    /// The trust level of lot or memory `id` of the space, under the store's trust rules.
    /// Needs read.
    ///
    /// # Errors
    ///
    /// As [`crate::Agent::trust`].
    pub fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        either!(self, trust(id))
    }

    /// Counts the nodes `shown` (ids of this space) as read in `tracking`, a read tracking the
    /// caller keeps across opens of the agent (as an MCP server does): through the agent's own
    /// stand-ins for them, written the first time, which the next
    /// [`crate::Agent::remember_tracked`] given `tracking`'s reads then rests on. A handle's own
    /// session tracking ([`crate::Agent::track_reads`]) counts what `get` and `search` show
    /// without this. Nothing is counted while `tracking` is off, on a read-only store, or for a
    /// node recalled since it was shown.
    ///
    /// # Errors
    ///
    /// Those of [`Space::share_all`], but `Error::ReadOnly` and `Error::DeadParent`.
    pub fn count_as_read(&self, shown: &[Id], tracking: &ReadTracking) -> Result<(), Error> {
        count_as_read(shown, tracking, |ids| self.share_all(ids))
    }

    /// The name of the member that wrote lot or memory `id` (a deleted agent's number, as
    /// text, once the store no longer names it). Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::UnknownId` when the space has no such node.
    pub fn author_of(&self, id: Id) -> Result<String, Error> {
        either!(self, author_of(id))
    }

    /// Every lot and memory the member named `author` wrote, alive or recalled, ascending.
    /// Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::UnknownAgent` when no agent has that name.
    pub fn written_by(&self, author: &str) -> Result<Vec<Id>, Error> {
        either!(self, written_by(author))
    }

    /// The alive lots and memories of the space, ascending. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`.
    pub fn alive(&self) -> Result<(Vec<Id>, Vec<Id>), Error> {
        either!(self, alive())
    }

    /// The best `limit` alive nodes of the space for `query`. Needs read. The hits count as read
    /// when the member's session tracks reads, as for [`Space::get`].
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::search`]; when reads are tracked,
    /// as [`Space::get`].
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        either!(self, search(query, limit))
    }

    /// The members holding a role now, by name, with it. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`.
    pub fn members(&self) -> Result<Vec<(String, Role)>, Error> {
        either!(self, members())
    }

    /// Gives the agent named `agent` the role `role` in the space, or changes it. Needs admin.
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name; those of the core's grant
    /// (`Error::UnknownSpace`, `Error::RoleTooLow`, `Error::LastAdmin`, a limit, the write's).
    pub fn grant(&self, agent: &str, role: Role) -> Result<(), Error> {
        either!(self, grant(agent, role))
    }

    /// Takes every role from the agent named `agent`. What it wrote stays and names it, and
    /// what it built on the space is still reached by later recalls. Needs admin.
    ///
    /// # Errors
    ///
    /// As [`Space::grant`].
    pub fn revoke(&self, agent: &str) -> Result<(), Error> {
        either!(self, revoke(agent))
    }

    /// Checks the whole log of the space, its roles included. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::verify`].
    pub fn verify(&self) -> Result<Fingerprint, Error> {
        either!(self, verify())
    }
}
