//! [`Request`]: what a client asks of the server.

use cheesedb_core::{InternalRule, MessageProblem};
use serde::{Deserialize, Serialize};

use super::frame::{decode_whole, hello_version};
use super::space_call::SpaceCall;
use super::wire::{WireMode, WireRemoval, WireTrust};
use super::FRAME_MAX_BYTES;
use crate::Error;

/// One request of a client. The first of a connection is [`Request::Hello`]; agent requests
/// need [`Request::OpenAgent`] first; store requests do not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// The handshake: the client's protocol version and a name for the server's logs. Always
    /// the first variant, with the version first, in every version of the protocol.
    Hello {
        /// The client's [`PROTOCOL_VERSION`](super::PROTOCOL_VERSION).
        version: u32,
        /// What the client is (such as "cheesedb 1.0.0"), for the server's logs.
        client: String,
    },
    /// Opens the agent that the token belongs to for the rest of the connection. A wrong token
    /// and an unknown one get the same answer.
    OpenAgent {
        /// The token's bytes.
        token: [u8; 32],
    },
    /// `Agent::add_lot`.
    AddLot {
        /// Its label.
        label: String,
        /// Its content.
        #[serde(with = "super::bytes")]
        content: Vec<u8>,
    },
    /// `Agent::remember`, or `Agent::remember_tracked` with `reads` and, when the session
    /// tracks reads, the session's reads added to each leg.
    Remember {
        /// Its content.
        #[serde(with = "super::bytes")]
        content: Vec<u8>,
        /// Its legs, each a list of parent ids.
        legs: Vec<Vec<u64>>,
        /// Ids the client itself tracked as read (empty for a plain `remember`).
        reads: Vec<u64>,
    },
    /// `Agent::recall`.
    Recall {
        /// The id to recall.
        id: u64,
        /// Fair or strict.
        mode: WireMode,
        /// Untrusted or erase.
        removal: WireRemoval,
    },
    /// `Agent::preview_recall_with`.
    PreviewRecall {
        /// The id.
        id: u64,
        /// Fair or strict.
        mode: WireMode,
        /// Untrusted or erase.
        removal: WireRemoval,
    },
    /// `Agent::get` (a read the session tracks).
    Get {
        /// The id.
        id: u64,
    },
    /// `Agent::audit`.
    Audit {
        /// The id.
        id: u64,
    },
    /// `Agent::name`.
    Name,
    /// `Agent::lots`.
    Lots,
    /// `Agent::memories`.
    Memories,
    /// `Agent::verify`.
    Verify,
    /// `Agent::verify_extends`.
    VerifyExtends {
        /// The kept fingerprint's record count.
        records: u64,
        /// The kept fingerprint's chain hash.
        chain: [u8; 32],
    },
    /// `Agent::compact`.
    Compact,
    /// `Agent::report`.
    Report,
    /// `Agent::search` (the ids it returns are reads the session tracks).
    Search {
        /// The words.
        query: String,
        /// The most hits wanted.
        limit: u64,
    },
    /// `Agent::search_vector` (tracked like a search).
    SearchVector {
        /// The vector.
        vector: Vec<f32>,
        /// The most hits wanted.
        limit: u64,
    },
    /// `Agent::search_hybrid` (tracked like a search).
    SearchHybrid {
        /// The words.
        query: String,
        /// The vector.
        vector: Vec<f32>,
        /// The most hits wanted.
        limit: u64,
    },
    /// `Agent::set_vector`.
    SetVector {
        /// The lot or memory.
        id: u64,
        /// The vector.
        vector: Vec<f32>,
    },
    /// `Agent::has_vector`.
    HasVector {
        /// The lot or memory.
        id: u64,
    },
    /// One write of the session's open batch (opened by the first): `Agent::stage`. Other
    /// writers of the agent wait until the batch is committed or dropped.
    BatchStage(BatchWrite),
    /// Writes the open batch: `Agent::commit_staged` (an empty batch writes nothing).
    BatchCommit,
    /// Drops the open batch: nothing of it is written.
    BatchDrop,
    /// Turns read tracking on or off for this session; turning it off forgets the reads.
    TrackReads {
        /// On or off.
        on: bool,
    },
    /// The trust level of a lot or memory under the server's trust rules.
    Trust {
        /// The id.
        id: u64,
    },
    /// `Store::create_agent`, or `Store::create_encrypted_agent` with `encrypted`.
    CreateAgent {
        /// The new agent's name.
        name: String,
        /// Whether its contents are sealed under keys its token yields.
        encrypted: bool,
    },
    /// `Store::agent_names`.
    AgentNames,
    /// `Store::delete_agent`.
    DeleteAgent {
        /// The name.
        name: String,
    },
    /// `Store::left_behind`.
    LeftBehind,
    /// `Store::encrypt_agent`: converts the plaintext agent the token opens, which no
    /// connection may have open.
    EncryptAgent {
        /// The token's bytes.
        token: [u8; 32],
    },
    /// `Store::is_encrypted`.
    AgentIsEncrypted {
        /// The agent's name.
        name: String,
    },
    /// `Agent::is_encrypted`, of the agent open on the connection.
    IsEncrypted,
    /// `Store::agent_name_of`: the name of the agent a token opens, without opening it.
    AgentNameOf {
        /// The token's bytes.
        token: [u8; 32],
    },
    /// `Agent::search_page` under the server's trust rules, answered by
    /// [`Response::SearchPage`](super::Response::SearchPage) (the ids it returns are reads the
    /// session tracks). Added after the other variants, so every earlier request keeps its
    /// encoding.
    SearchPage {
        /// The words.
        query: String,
        /// The query's vector, for a hybrid search.
        vector: Option<Vec<f32>>,
        /// The most hits wanted.
        limit: u64,
        /// The least trust level of a hit.
        least_trust: WireTrust,
        /// When set, the only ids that may be found.
        among: Option<Vec<u64>>,
    },
    /// A call of the session's agent on its handle to space `space` (it must hold a role).
    Space {
        /// The space's name.
        space: String,
        /// What is asked of it.
        call: SpaceCall,
    },
    /// `Store::create_space`, with the session's agent as the first admin.
    CreateSpace {
        /// The new space's name.
        name: String,
    },
    /// `Store::space_names`.
    SpaceNames,
    /// `Agent::space_name`.
    SpaceName {
        /// The space's number.
        number: u64,
    },
    /// `Store::spaces`.
    Spaces,
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BatchWrite {
    /// `Batch::add_lot`.
    AddLot {
        /// Its label.
        label: String,
        /// Its content.
        #[serde(with = "super::bytes")]
        content: Vec<u8>,
    },
    /// `Batch::remember`.
    Remember {
        /// Its content.
        #[serde(with = "super::bytes")]
        content: Vec<u8>,
        /// Its legs, each a list of parent ids.
        legs: Vec<Vec<u64>>,
    },
    /// `Batch::set_vector`.
    SetVector {
        /// The lot or memory.
        id: u64,
        /// The vector.
        vector: Vec<f32>,
    },
}

impl Request {
    /// Decodes a request from a frame's body. Never panics, whatever the bytes.
    ///
    /// # Errors
    ///
    /// `Error::FrameTooLarge` for more bytes than a frame may hold; `Error::MalformedMessage`
    /// for bytes that are not one whole request.
    pub fn decode(bytes: &[u8]) -> Result<Request, Error> {
        if bytes.len() > FRAME_MAX_BYTES {
            return Err(Error::FrameTooLarge {
                size_bytes: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
                limit_bytes: u64::try_from(FRAME_MAX_BYTES).unwrap_or(u64::MAX),
            });
        }
        decode_whole(bytes, MessageProblem::RequestUndecodable)
    }

    /// The protocol version a hello announces, read from its first bytes alone, so that a hello
    /// of any version is understood: `None` when `bytes` do not start with a hello.
    #[must_use]
    pub fn hello_version(bytes: &[u8]) -> Option<u32> {
        hello_version(bytes)
    }

    /// Encodes the request as a frame's body.
    ///
    /// # Errors
    ///
    /// `Error::Internal` if the encoder fails (it cannot for these types).
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        postcard::to_allocvec(self).map_err(|_| Error::Internal { what: InternalRule::RequestEncodes })
    }

    /// Whether the request writes to the store: when its connection breaks before the answer,
    /// the write may or may not have been stored.
    #[must_use]
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Request::AddLot { .. }
                | Request::Remember { .. }
                | Request::Recall { .. }
                | Request::Compact
                | Request::SetVector { .. }
                | Request::BatchCommit
                | Request::CreateAgent { .. }
                | Request::DeleteAgent { .. }
                | Request::EncryptAgent { .. }
                | Request::CreateSpace { .. }
        ) || matches!(self, Request::Space { call, .. } if call.is_write())
    }

    /// The operation's name, as logs show it (such as `"remember"`); never any content.
    #[must_use]
    pub fn operation(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::OpenAgent { .. } => "open_agent",
            Request::AddLot { .. } => "add_lot",
            Request::Remember { .. } => "remember",
            Request::Recall { .. } => "recall",
            Request::PreviewRecall { .. } => "preview_recall",
            Request::Get { .. } => "get",
            Request::Audit { .. } => "audit",
            Request::Name => "name",
            Request::Lots => "lots",
            Request::Memories => "memories",
            Request::Verify => "verify",
            Request::VerifyExtends { .. } => "verify_extends",
            Request::Compact => "compact",
            Request::Report => "report",
            Request::Search { .. } => "search",
            Request::SearchVector { .. } => "search_vector",
            Request::SearchHybrid { .. } => "search_hybrid",
            Request::SetVector { .. } => "set_vector",
            Request::HasVector { .. } => "has_vector",
            Request::BatchStage(BatchWrite::AddLot { .. }) => "batch_add_lot",
            Request::BatchStage(BatchWrite::Remember { .. }) => "batch_remember",
            Request::BatchStage(BatchWrite::SetVector { .. }) => "batch_set_vector",
            Request::BatchCommit => "batch_commit",
            Request::BatchDrop => "batch_drop",
            Request::TrackReads { .. } => "track_reads",
            Request::Trust { .. } => "trust",
            Request::CreateAgent { .. } => "create_agent",
            Request::AgentNames => "agent_names",
            Request::DeleteAgent { .. } => "delete_agent",
            Request::LeftBehind => "left_behind",
            Request::EncryptAgent { .. } => "encrypt_agent",
            Request::AgentIsEncrypted { .. } => "agent_is_encrypted",
            Request::IsEncrypted => "is_encrypted",
            Request::AgentNameOf { .. } => "agent_name_of",
            Request::SearchPage { .. } => "search_page",
            Request::Space { call, .. } => call.operation(),
            Request::CreateSpace { .. } => "create_space",
            Request::SpaceNames => "space_names",
            Request::SpaceName { .. } => "space_name",
            Request::Spaces => "spaces",
        }
    }

    /// The ids the request names (for logs).
    #[must_use]
    pub fn ids(&self) -> Vec<u64> {
        match self {
            Request::Remember { legs, reads, .. } => {
                let mut ids: Vec<u64> = legs.iter().flatten().chain(reads).copied().collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            }
            Request::BatchStage(BatchWrite::Remember { legs, .. }) => {
                let mut ids: Vec<u64> = legs.iter().flatten().copied().collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            }
            Request::Recall { id, .. }
            | Request::PreviewRecall { id, .. }
            | Request::Get { id }
            | Request::Audit { id }
            | Request::SetVector { id, .. }
            | Request::HasVector { id }
            | Request::Trust { id }
            | Request::BatchStage(BatchWrite::SetVector { id, .. }) => vec![*id],
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::PROTOCOL_VERSION;
    use super::*;
    use proptest::prelude::*;

    /// One request of every kind.
    pub(crate) fn every_request() -> Vec<Request> {
        let legs = vec![vec![1, 2], vec![3]];
        vec![
            Request::Hello { version: 7, client: String::from("test") },
            Request::OpenAgent { token: [9; 32] },
            Request::AddLot { label: String::from("note"), content: b"hello".to_vec() },
            Request::Remember { content: vec![0, 255, 10], legs: legs.clone(), reads: vec![3, 9] },
            Request::Recall { id: 4, mode: WireMode::Strict, removal: WireRemoval::Erase },
            Request::PreviewRecall { id: 4, mode: WireMode::Fair, removal: WireRemoval::Untrusted },
            Request::Get { id: u64::MAX },
            Request::Audit { id: 1 },
            Request::Name,
            Request::Lots,
            Request::Memories,
            Request::Verify,
            Request::VerifyExtends { records: 3, chain: [7; 32] },
            Request::Compact,
            Request::Report,
            Request::Search { query: String::from("rain in Pune"), limit: 10 },
            Request::SearchVector { vector: vec![0.5, -1.0], limit: 3 },
            Request::SearchHybrid { query: String::from("rain"), vector: vec![1.0], limit: 0 },
            Request::SetVector { id: 2, vector: vec![f32::MIN_POSITIVE, 3.5] },
            Request::HasVector { id: 2 },
            Request::BatchStage(BatchWrite::AddLot { label: String::from("l"), content: Vec::new() }),
            Request::BatchStage(BatchWrite::Remember { content: b"m".to_vec(), legs }),
            Request::BatchStage(BatchWrite::SetVector { id: 1, vector: vec![1.0, 2.0] }),
            Request::BatchCommit,
            Request::BatchDrop,
            Request::TrackReads { on: true },
            Request::Trust { id: 5 },
            Request::CreateAgent { name: String::from("alice"), encrypted: false },
            Request::CreateAgent { name: String::from("carol"), encrypted: true },
            Request::AgentNames,
            Request::DeleteAgent { name: String::from("bob") },
            Request::LeftBehind,
            Request::EncryptAgent { token: [3; 32] },
            Request::AgentIsEncrypted { name: String::from("alice") },
            Request::IsEncrypted,
            Request::AgentNameOf { token: [4; 32] },
            Request::SearchPage {
                query: String::from("rain"),
                vector: Some(vec![0.5, 1.0]),
                limit: 10,
                least_trust: WireTrust::Normal,
                among: Some(vec![3, 9]),
            },
            Request::SearchPage {
                query: String::new(),
                vector: None,
                limit: 0,
                least_trust: WireTrust::Low,
                among: None,
            },
            Request::CreateSpace { name: String::from("team") },
            Request::SpaceNames,
            Request::SpaceName { number: 3 },
            Request::Spaces,
        ]
        .into_iter()
        .chain(every_space_call().into_iter().map(|call| Request::Space { space: String::from("team"), call }))
        .collect()
    }

    /// One space call of every kind.
    fn every_space_call() -> Vec<SpaceCall> {
        vec![
            SpaceCall::Open,
            SpaceCall::AddLot { label: String::from("note"), content: b"shared".to_vec() },
            SpaceCall::Remember { content: b"m".to_vec(), legs: vec![vec![1], vec![2, 3]] },
            SpaceCall::Share { ids: vec![1, 7] },
            SpaceCall::Recall { id: 1, mode: WireMode::Fair, removal: WireRemoval::Erase },
            SpaceCall::PreviewRecall { id: 1, mode: WireMode::Strict },
            SpaceCall::Get { id: 2 },
            SpaceCall::Audit { id: 2 },
            SpaceCall::Trust { id: 2 },
            SpaceCall::AuthorOf { id: 2 },
            SpaceCall::WrittenBy { author: String::from("bob") },
            SpaceCall::Lots,
            SpaceCall::Memories,
            SpaceCall::Search { query: String::from("rain"), limit: 5 },
            SpaceCall::Members,
            SpaceCall::Grant { agent: String::from("bob"), role: cheesedb_core::Role::Write },
            SpaceCall::Revoke { agent: String::from("bob") },
            SpaceCall::Verify,
        ]
    }

    #[test]
    fn every_request_decodes_as_encoded() {
        for request in every_request() {
            let bytes = request.encode().unwrap();
            assert_eq!(Request::decode(&bytes).unwrap(), request);
            assert!(!request.operation().is_empty());
        }
    }

    #[test]
    fn this_version_s_hello_starts_with_version_10() {
        // Version 2 changed `CreateAgent` (its `encrypted` flag), version 3 the errors a server
        // may answer, version 4 their encoding (each error as itself), version 5 the answer to
        // `OpenAgent`, version 6 the errors of spaces, version 7 shared nodes, version 8 the
        // requests of spaces, version 9 the damages of the recall of several and of a
        // snapshot's shared nodes, version 10 more of the report: an older peer is told at the
        // hello, never left to misread a message.
        assert_eq!(PROTOCOL_VERSION, 10);
        let bytes = Request::Hello { version: PROTOCOL_VERSION, client: String::from("x") }.encode().unwrap();
        assert_eq!(bytes.get(..2), Some(&[0u8, 10][..]));
        let first = Request::Hello { version: 1, client: String::from("x") }.encode().unwrap();
        assert_eq!(Request::hello_version(&first), Some(1));
    }

    #[test]
    fn the_page_search_comes_after_every_earlier_request_so_their_encodings_stay() {
        let earlier = Request::AgentNameOf { token: [0; 32] }.encode().unwrap();
        let page = Request::SearchPage {
            query: String::new(),
            vector: None,
            limit: 1,
            least_trust: WireTrust::Low,
            among: None,
        };
        assert_eq!((earlier[0], page.encode().unwrap()[0]), (32, 33));
    }

    #[test]
    fn a_hello_shows_its_version_from_its_first_bytes() {
        let bytes = Request::Hello { version: 42, client: String::from("x") }.encode().unwrap();
        assert_eq!(Request::hello_version(&bytes), Some(42));
        assert_eq!(Request::hello_version(&Request::Name.encode().unwrap()), None);
        assert_eq!(Request::hello_version(&[]), None);
    }

    #[test]
    fn leftover_and_cut_bytes_are_refused() {
        let mut bytes = Request::Get { id: 3 }.encode().unwrap();
        bytes.push(0);
        assert_eq!(Request::decode(&bytes), Err(Error::MalformedMessage { reason: MessageProblem::BytesLeftOver }));
        let bytes = Request::AddLot { label: String::from("label"), content: vec![1; 100] }.encode().unwrap();
        for cut in 0..bytes.len() {
            assert!(matches!(Request::decode(&bytes[..cut]), Err(Error::MalformedMessage { .. })), "cut at {cut}");
        }
    }

    #[test]
    fn a_huge_announced_length_allocates_nothing_and_fails() {
        // AddLot, a label of 2^63 bytes announced: refused from the input's size.
        let bytes = [2u8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert!(Request::decode(&bytes).is_err());
        // Remember, content of 3 bytes then 2^32 legs announced.
        let bytes = [3u8, 3, 1, 2, 3, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(Request::decode(&bytes).is_err());
    }

    #[test]
    fn the_fuzz_corpus_holds_requests() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/request_decoder");
        for entry in std::fs::read_dir(corpus).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            assert!(Request::decode(&bytes).is_ok(), "{} does not decode", path.display());
        }
    }

    proptest! {
        #[test]
        fn any_bytes_decode_or_fail_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = Request::decode(&bytes);
            let _ = Request::hello_version(&bytes);
        }

        #[test]
        fn a_flipped_byte_of_a_request_never_panics(index in 0usize..64, value in any::<u8>()) {
            for request in every_request() {
                let mut bytes = request.encode().unwrap();
                if let Some(byte) = bytes.get_mut(index) {
                    *byte = value;
                }
                let _ = Request::decode(&bytes);
            }
        }
    }
}
