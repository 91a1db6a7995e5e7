//! [`SpaceCall`]: what a session's agent asks of one of its spaces, and how the answers that
//! only spaces give travel.

use cheesedb_core::Role;
use serde::{Deserialize, Serialize};

use super::wire::{WireMode, WireRemoval};

/// One call of a member's `Space` handle, made by the agent the session has open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SpaceCall {
    /// `Agent::space`: answered `Done` when the agent holds a role in the space.
    Open,
    /// `Space::add_lot`.
    AddLot {
        /// Its label.
        label: String,
        /// Its content.
        #[serde(with = "super::bytes")]
        content: Vec<u8>,
    },
    /// `Space::remember`.
    Remember {
        /// Its content.
        #[serde(with = "super::bytes")]
        content: Vec<u8>,
        /// Its legs, each a list of the space's ids.
        legs: Vec<Vec<u64>>,
    },
    /// `Space::share_all`, answered by the member's ids in the order asked.
    Share {
        /// The space's ids.
        ids: Vec<u64>,
    },
    /// `Space::recall`, answered by [`SpaceRemoved`] parts.
    Recall {
        /// The id to recall.
        id: u64,
        /// Fair or strict.
        mode: WireMode,
        /// Untrusted or erase.
        removal: WireRemoval,
    },
    /// `Space::preview_recall`, answered as a recall.
    PreviewRecall {
        /// The id.
        id: u64,
        /// Fair or strict.
        mode: WireMode,
    },
    /// `Space::get`.
    Get {
        /// The id.
        id: u64,
    },
    /// `Space::audit`.
    Audit {
        /// The id.
        id: u64,
    },
    /// `Space::trust`.
    Trust {
        /// The id.
        id: u64,
    },
    /// `Space::author_of`, answered by a name.
    AuthorOf {
        /// The id.
        id: u64,
    },
    /// `Space::written_by`.
    WrittenBy {
        /// The member's name.
        author: String,
    },
    /// The alive lots of `Space::alive`.
    Lots,
    /// The alive memories of `Space::alive`.
    Memories,
    /// `Space::search`.
    Search {
        /// The words.
        query: String,
        /// The most hits wanted.
        limit: u64,
    },
    /// `Space::members`.
    Members,
    /// `Space::grant`.
    Grant {
        /// The agent's name.
        agent: String,
        /// The role.
        role: Role,
    },
    /// `Space::revoke`.
    Revoke {
        /// The agent's name.
        agent: String,
    },
    /// `Space::verify`.
    Verify,
}

impl SpaceCall {
    /// Whether the call writes to the store.
    #[must_use]
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            SpaceCall::AddLot { .. }
                | SpaceCall::Remember { .. }
                | SpaceCall::Share { .. }
                | SpaceCall::Recall { .. }
                | SpaceCall::Grant { .. }
                | SpaceCall::Revoke { .. }
        )
    }

    /// The operation's name, as logs show it; never any content.
    #[must_use]
    pub fn operation(&self) -> &'static str {
        match self {
            SpaceCall::Open => "space_open",
            SpaceCall::AddLot { .. } => "space_add_lot",
            SpaceCall::Remember { .. } => "space_remember",
            SpaceCall::Share { .. } => "space_share",
            SpaceCall::Recall { .. } => "space_recall",
            SpaceCall::PreviewRecall { .. } => "space_preview_recall",
            SpaceCall::Get { .. } => "space_get",
            SpaceCall::Audit { .. } => "space_audit",
            SpaceCall::Trust { .. } => "space_trust",
            SpaceCall::AuthorOf { .. } => "space_author_of",
            SpaceCall::WrittenBy { .. } => "space_written_by",
            SpaceCall::Lots => "space_lots",
            SpaceCall::Memories => "space_memories",
            SpaceCall::Search { .. } => "space_search",
            SpaceCall::Members => "space_members",
            SpaceCall::Grant { .. } => "space_grant",
            SpaceCall::Revoke { .. } => "space_revoke",
            SpaceCall::Verify => "space_verify",
        }
    }
}

/// One part of what a space's recall removed, or would remove: ids of the space (`member`
/// `None`) or of one member. The parts of one member follow each other; the space's come first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpaceRemoved {
    /// The member whose memories these are, by name; `None` for the space's own.
    pub member: Option<String>,
    /// The ids, ascending.
    pub ids: Vec<u64>,
}

/// A space and its members, as `Store::spaces` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireSpaceMembers {
    /// The space's name.
    pub name: String,
    /// Each member by name, with its role.
    pub members: Vec<(String, Role)>,
}
