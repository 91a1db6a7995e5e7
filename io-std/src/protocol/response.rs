//! [`Response`]: what the server answers.

use cheesedb_core::{InternalRule, MessageProblem, Report, Role};
use serde::{Deserialize, Serialize};

use super::frame::{decode_whole, hello_version};
use super::space_call::{SpaceRemoved, WireSpaceMembers};
use super::wire::{WireHit, WireLeftBehind, WireNode, WireTrust};
use super::wire_page::{WireFound, WireRanking};
use crate::Error;

/// One answer of the server. A long list comes in several responses, each but the last with
/// `more` set, so that no frame passes its limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// The answer to a hello: the server's protocol version and name. Always the first variant,
    /// with the version first, in every version of the protocol. A server of another version
    /// than the client's closes the connection after it.
    Hello {
        /// The server's [`PROTOCOL_VERSION`](super::PROTOCOL_VERSION).
        version: u32,
        /// What the server is (such as "cheesedb 1.0.0").
        server: String,
    },
    /// The request failed: the error itself, with every fact it carries.
    Failed(Error),
    /// The request succeeded and returns nothing.
    Done,
    /// A new lot's or memory's id.
    Id(u64),
    /// Ids, ascending: a part of the list when `more` is set.
    Ids {
        /// The ids.
        ids: Vec<u64>,
        /// Whether more of the list follows.
        more: bool,
    },
    /// A lot or memory.
    Node(WireNode),
    /// Search hits, best first.
    Hits {
        /// The hits.
        hits: Vec<WireHit>,
        /// Whether more of the list follows.
        more: bool,
    },
    /// A head fingerprint.
    Fingerprint {
        /// Its record count.
        records: u64,
        /// Its chain hash.
        chain: [u8; 32],
    },
    /// What opening the agent found and did.
    Report(Report),
    /// Yes or no.
    Flag(bool),
    /// A name.
    Name(String),
    /// Agent names.
    Names {
        /// The names.
        names: Vec<String>,
        /// Whether more of the list follows.
        more: bool,
    },
    /// A new agent's token.
    Token([u8; 32]),
    /// What deleting agents left behind.
    LeftBehind {
        /// The names left, with their reasons.
        entries: Vec<WireLeftBehind>,
        /// Whether more of the list follows.
        more: bool,
    },
    /// A trust level.
    Trust(WireTrust),
    /// A page of search hits with what is shown of each, best first: a part of the page when
    /// `more` is set (each part says how the page was ranked). Added after the other variants,
    /// so every earlier response keeps its encoding.
    SearchPage {
        /// How the page was ranked.
        ranking: WireRanking,
        /// The hits.
        found: Vec<WireFound>,
        /// Whether more of the page follows.
        more: bool,
    },
    /// The answer to `OpenAgent`: what a handle keeps of the agent from its open, so that
    /// opening costs one request.
    AgentOpened {
        /// Whether the agent is encrypted.
        encrypted: bool,
        /// What the server's open of the agent found and did.
        report: Report,
    },
    /// A part of what a space's recall removed or would remove.
    SpaceRemoved {
        /// The part.
        removed: SpaceRemoved,
        /// Whether more parts follow.
        more: bool,
    },
    /// A space's members by name, with their roles.
    Members(Vec<(String, Role)>),
    /// Spaces with their members: a part of the list when `more` is set.
    Spaces {
        /// The spaces.
        spaces: Vec<WireSpaceMembers>,
        /// Whether more of the list follows.
        more: bool,
    },
}

impl Response {
    /// Decodes a response from a frame's body. Never panics, whatever the bytes.
    ///
    /// # Errors
    ///
    /// `Error::MalformedMessage` for bytes that are not one whole response.
    pub fn decode(bytes: &[u8]) -> Result<Response, Error> {
        decode_whole(bytes, MessageProblem::ResponseUndecodable)
    }

    /// The protocol version a hello answer announces, read from its first bytes alone, so that
    /// the answer of a server of any version is understood: `None` for another response.
    #[must_use]
    pub fn hello_version(bytes: &[u8]) -> Option<u32> {
        hello_version(bytes)
    }

    /// Encodes the response as a frame's body into `body`, replacing what it held.
    ///
    /// # Errors
    ///
    /// `Error::Internal` if the encoder fails (it cannot for these types).
    pub fn encode_into(&self, body: &mut Vec<u8>) -> Result<(), Error> {
        body.clear();
        let taken = std::mem::take(body);
        *body =
            postcard::to_extend(self, taken).map_err(|_| Error::Internal { what: InternalRule::ResponseEncodes })?;
        Ok(())
    }

    /// The failure for `error`.
    #[must_use]
    pub fn failed(error: &Error) -> Response {
        Response::Failed(error.clone())
    }
}
