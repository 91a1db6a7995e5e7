//! The protocol of the memory server (`cheesedb serve`): how a [`Client`](crate::Client) and the
//! server talk over a Unix socket.
//!
//! Every message is a frame: its body's length as a `u32` little-endian, then the body, a
//! [`Request`] or a [`Response`] encoded with postcard. A frame larger than
//! [`FRAME_MAX_BYTES`] is refused from its length alone, before anything is allocated for it.
//!
//! A connection starts with [`Request::Hello`], answered by [`Response::Hello`] with the
//! server's [`PROTOCOL_VERSION`]; a server of another version answers the same way and then
//! closes the connection (the client reports [`Error::VersionMismatch`](crate::Error)). Both
//! hellos are the first variant of their enum and start with the version, in every version of
//! the protocol, so two versions always understand each other's hello. Then the client opens
//! one agent by its token ([`Request::OpenAgent`]; a wrong token and an unknown one get the same
//! answer) and works on it, one request at a time, each answered by one response (a long list
//! comes in several responses, each but the last marked `more`). Store-level requests
//! (create, list, encrypt and delete agents; list spaces) need no open agent; the calls of a
//! space ([`Request::Space`]) are the open agent's, bounded by its role there.
//!
//! Every failure is a [`Response::Failed`] carrying the [`Error`](crate::Error) itself: its
//! variant and its facts (enums and numbers, names and paths) encode as they are, and the
//! backend's error behind `Io` and `OutcomeUnknown` travels as its words. The client gets the
//! same error back, with no table of texts between: a new variant of `Error`, or of a fact it
//! carries, changes the encoding, so it comes with a new [`PROTOCOL_VERSION`].

mod bytes;
#[cfg(test)]
mod error_round_trip;
mod frame;
mod request;
mod response;
mod space_call;
mod wire;
mod wire_page;

pub use frame::{read_frame_body, read_frame_length, write_frame, FrameError, FRAME_LENGTH_BYTES, FRAME_MAX_BYTES};
pub use request::{BatchWrite, Request};
pub use response::Response;
pub use space_call::{SpaceCall, SpaceRemoved, WireSpaceMembers};
pub(crate) use wire::wire_leg;
pub use wire::{engine_leg, WireHit, WireLeftBehind, WireMode, WireNode, WireNodeKind, WireRemoval, WireTrust};
#[cfg(feature = "server")]
pub(crate) use wire::{engine_legs, engine_limit};
pub use wire_page::{WireFound, WireFoundKind, WireRanking};

/// The version of the protocol this crate speaks; a client and a server of different versions
/// refuse each other at the hello. Version 2 added encrypted agents: `CreateAgent` carries an
/// `encrypted` flag, which a version 1 peer would not decode. Version 3 carries the errors of
/// replication and of the socket (a write stored but not shipped among them), which a version 2
/// client would take for bytes that are not a message, though the write was stored. Version 4
/// sends an error as itself (`Response::Failed` holds the engine's `Error`, its facts typed
/// enums rather than texts), which a version 3 client would not decode. Version 5 answers
/// `OpenAgent` with `Response::AgentOpened` (encryption and report at once) where a
/// version 4 client waits for `Done`. Version 6 carries the errors of spaces (an unknown
/// space, a role too low, the last admin) and their new limits, names and damages. Version 7
/// carries shared nodes (a node of an agent standing for a space's node) and their damages.
/// Version 8 adds the requests of spaces, which a version 7 server would not decode, and the
/// internal rule of a space's grouped writes. Version 9 carries the damages of a malformed
/// recall of several ids and of a snapshot's shared nodes (`RecalledIdsMalformed`,
/// `SnapshotSharedNodesDoNotMatchGraph`). Version 10 carries more of an agent's report (the
/// key slots open cut past an encrypted agent's last node, the dead text left for compaction
/// and the segments compacted).
pub const PROTOCOL_VERSION: u32 = 10;

/// The name of the server's socket inside the data folder.
pub const SOCKET_FILE: &str = "cheesedb.sock";
