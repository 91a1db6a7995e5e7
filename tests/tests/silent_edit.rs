//! Edits made by someone who knows the format: a record's content changed and every checksum
//! recomputed, so only the salted digest, the chain or a kept fingerprint can tell; and a record
//! put back as it was before an Erase beside its rewritten commit marker, so every record checks
//! and only the marker's batch checksum can tell.

use cheesedb::{Agent, CorruptReason, Error, Fingerprint, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_core::codec::record::{self, commit_marker, Body, ContentBlock, Record};
use cheesedb_core::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use cheesedb_core::digest::{chain_genesis, chain_next, content_digest};
use cheesedb_tests::backend::Backend;
use cheesedb_tests::conformance;

/// Small segments and no snapshots: a forger who rewrites the chain would also have to rewrite
/// a snapshot's point, which is beside the point here.
fn options() -> Options {
    Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(u64::MAX)
}

/// The number the store gives its first agent.
const FIRST_AGENT: u64 = 1;

/// How far a forger goes after replacing a content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forgery {
    /// The record's checksum and its commit marker's batch checksum are recomputed.
    Checksums,
    /// Also the salted digest (with the salt in the record), and the chain after it: every
    /// commit marker's chain hash and every later segment header.
    DigestAndChain,
}

/// A store with one agent holding a lot, `source`, then memories until it has three segments.
/// An agent as the tests below build it, with the head fingerprint before its last write.
type Built<S> = (Store<S>, Agent<S>, Token, Fingerprint);

fn agent_with_three_segments<B: Backend>(place: &B, source: &[u8]) -> Built<B::Storage> {
    let store = place.open(options()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", source).unwrap();
    let mut index = 0;
    let mut before_last = alice.verify().unwrap();
    while alice.report().segments < 3 {
        before_last = alice.verify().unwrap();
        alice.remember(format!("memory {index:04}").as_bytes(), &[Leg::from([lot])]).unwrap();
        index += 1;
    }
    (store, alice, token, before_last)
}

/// Replaces the content of `id` (with one of the same length) in the agent's files, and goes as
/// far as `forgery` says to make the result look genuine.
fn forge<B: Backend>(place: &B, id: u64, content: &[u8], forgery: Forgery) {
    let mut chain = chain_genesis(FIRST_AGENT);
    let mut found = false;
    for path in place.segment_files() {
        let mut bytes = place.read_file(&path);
        let mut header = SegmentHeader::decode(&bytes).unwrap();
        if forgery == Forgery::DigestAndChain {
            header.chain_before = chain;
            bytes[..SEGMENT_HEADER_BYTES].copy_from_slice(&header.encode());
        }
        chain = header.chain_before;
        let mut position = SEGMENT_HEADER_BYTES;
        let mut batch_start = position;
        let mut batch_records = 0;
        while let Ok((found_record, length)) = record::decode(&bytes[position..]) {
            let mut replacement = Vec::new();
            match found_record.body {
                Body::Lot { id: found_id, label, content: block } if found_id == id => {
                    let content = forged_block(block, content, forgery);
                    Record { body: Body::Lot { id, label, content }, ..found_record }.encode(&mut replacement);
                    found = true;
                }
                Body::Memory { id: found_id, legs, tracked, content: block } if found_id == id => {
                    let content = forged_block(block, content, forgery);
                    Record { body: Body::Memory { id, legs, tracked, content }, ..found_record }
                        .encode(&mut replacement);
                    found = true;
                }
                Body::Commit { record_count, chain: committed, .. } => {
                    let chain = if forgery == Forgery::DigestAndChain { chain } else { committed };
                    let batch = &bytes[batch_start..position];
                    commit_marker(found_record.identity, batch_start as u64, batch, record_count, chain)
                        .encode(&mut replacement);
                }
                _ => {}
            }
            if !replacement.is_empty() {
                assert_eq!(replacement.len(), length, "a forgery keeps every offset");
                bytes[position..position + length].copy_from_slice(&replacement);
            }
            let (now, _) = record::decode(&bytes[position..]).unwrap();
            if now.is_chained() {
                let mut fields = Vec::new();
                now.encode_chained_fields(&mut fields);
                chain = chain_next(&chain, &fields);
                batch_records += 1;
            }
            position += length;
            if matches!(now.body, Body::Commit { .. }) {
                batch_start = position;
                batch_records = 0;
            }
        }
        assert_eq!(batch_records, 0, "{path} ends inside a batch");
        place.replace_file(&path, &bytes);
    }
    assert!(found, "no record of id {id}");
}

fn forged_block<'a>(block: ContentBlock<'a>, content: &'a [u8], forgery: Forgery) -> ContentBlock<'a> {
    let (salt, old) = block.present.unwrap();
    assert_eq!(old.len(), content.len());
    let digest = if forgery == Forgery::DigestAndChain { content_digest(salt, content) } else { block.digest };
    ContentBlock { digest, present: Some((salt, content)), ..block }
}

fn assert_corrupt<T: std::fmt::Debug>(found: Result<T, Error>, reason: CorruptReason, what: &str) {
    match found {
        Err(Error::Corrupt { reason: found, .. }) => assert_eq!(found, reason, "{what}"),
        other => panic!("{what}: expected Corrupt ({reason}), got {other:?}"),
    }
}

/// Which record a test edits: the lot at the start of the first, sealed segment, or the last
/// memory, in the active segment.
fn edited_id<B: Backend>(alice: &Agent<B::Storage>, in_sealed: bool) -> u64 {
    if in_sealed {
        1
    } else {
        alice.memories().unwrap().last().unwrap().get()
    }
}

/// A reopened store, and what opening the agent gave.
type Reopened<S> = (Store<S>, Result<Agent<S>, Error>);

/// Opens the store in `place` again and the agent of `token`.
fn reopen<B: Backend>(place: &B, token: &Token) -> Reopened<B::Storage> {
    let store = place.open(options()).unwrap();
    let agent = store.open_agent(token);
    (store, agent)
}

fn a_content_edit_with_checksums_recomputed_is_corrupt<B: Backend>(in_sealed: bool) {
    let place = B::new();
    let (store, alice, token, _) = agent_with_three_segments(&place, b"the source");
    let id = edited_id::<B>(&alice, in_sealed);
    let original = alice.get(id.into()).unwrap().content().unwrap().to_vec();
    let edited: Vec<u8> = original.iter().map(|byte| byte ^ 0x01).collect();
    forge(&place, id, &edited, Forgery::Checksums);
    let digest = CorruptReason::ContentDoesNotMatchDigest;
    assert_corrupt(alice.verify(), digest, "verify of the open agent");
    assert_corrupt(alice.get(id.into()), digest, "get of the open agent");
    drop((alice, store));
    // Open replays the graph without hashing contents (verify and get do that), so it opens;
    // what it serves is never the edited text.
    let (_store, alice) = reopen(&place, &token);
    let alice = alice.unwrap();
    assert_corrupt(alice.verify(), digest, "verify after reopening");
    assert_corrupt(alice.get(id.into()), digest, "get after reopening");
}

fn a_content_edit_in_a_sealed_segment_with_checksums_recomputed_is_corrupt<B: Backend>() {
    a_content_edit_with_checksums_recomputed_is_corrupt::<B>(true);
}

fn a_content_edit_in_the_active_segment_with_checksums_recomputed_is_corrupt<B: Backend>() {
    a_content_edit_with_checksums_recomputed_is_corrupt::<B>(false);
}

fn a_rechained_edit_is_caught_by_a_kept_fingerprint<B: Backend>(in_sealed: bool) {
    let place = B::new();
    let (store, alice, token, before_last) = agent_with_three_segments(&place, b"the source");
    let id = edited_id::<B>(&alice, in_sealed);
    // A fingerprint kept before the edited record, and one kept at the head, after it.
    let before = if in_sealed { Fingerprint { records: 0, chain: chain_genesis(FIRST_AGENT) } } else { before_last };
    let kept = alice.verify().unwrap();
    let original = alice.get(id.into()).unwrap().content().unwrap().to_vec();
    let edited: Vec<u8> = original.iter().map(|byte| byte ^ 0x01).collect();
    forge(&place, id, &edited, Forgery::DigestAndChain);
    // The open agent knows the head it wrote: the rewritten log does not end there.
    assert_corrupt(alice.verify(), CorruptReason::LogDiffersFromOpenedState, "verify of the open agent");
    drop((alice, store));
    // Reopened, the forged log is consistent in itself: only the kept fingerprint tells.
    let (_store, alice) = reopen(&place, &token);
    let alice = alice.unwrap();
    let forged_head = alice.verify().unwrap();
    assert_eq!(forged_head.records, kept.records);
    assert_ne!(forged_head, kept);
    assert_eq!(alice.verify_extends(&kept), Err(Error::HistoryMismatch { records: kept.records }));
    assert_eq!(alice.get(id.into()).unwrap().content(), Some(&edited[..]), "the forgery itself reads back");
    // The history before the edited record is untouched: a fingerprint kept there still holds.
    assert_eq!(alice.verify_extends(&before), Ok(forged_head));
}

fn a_rechained_edit_in_a_sealed_segment_is_caught_by_a_kept_fingerprint<B: Backend>() {
    a_rechained_edit_is_caught_by_a_kept_fingerprint::<B>(true);
}

fn a_rechained_edit_in_the_active_segment_is_caught_by_a_kept_fingerprint<B: Backend>() {
    a_rechained_edit_is_caught_by_a_kept_fingerprint::<B>(false);
}

/// The record of `id` as it lies in the agent's files: its segment, offset and bytes.
fn record_of<B: Backend>(place: &B, id: u64) -> (String, usize, Vec<u8>) {
    for path in place.segment_files() {
        let bytes = place.read_file(&path);
        let mut position = SEGMENT_HEADER_BYTES;
        while let Ok((found, length)) = record::decode(&bytes[position..]) {
            if let Body::Lot { id: found_id, .. } | Body::Memory { id: found_id, .. } = found.body {
                if found_id == id {
                    return (path, position, bytes[position..position + length].to_vec());
                }
            }
            position += length;
        }
    }
    panic!("no record of id {id}");
}

/// An erased record put back as it was before the Erase (a write the disk acknowledged and then
/// lost, or a stale copy restored), beside its rewritten commit marker: the record's checksum,
/// its digest and the chain all check; only the marker's batch checksum does not.
fn an_erased_record_put_back_beside_its_rewritten_marker_is_corrupt<B: Backend>(in_sealed: bool) {
    let place = B::new();
    let secret = b"<the erased secret>";
    let (store, alice, token) = if in_sealed {
        let (store, alice, token, _) = agent_with_three_segments(&place, secret);
        (store, alice, token)
    } else {
        let store = place.open(options()).unwrap();
        let token = store.create_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        let other = alice.add_lot("other", b"kept").unwrap();
        alice.add_lot("source", secret).unwrap();
        alice.remember(b"still here", &[Leg::from([other])]).unwrap();
        (store, alice, token)
    };
    let id = if in_sealed { 1 } else { 2 };
    let (path, offset, before_erase) = record_of(&place, id);
    alice.recall(id.into(), Mode::Fair, Removal::Erase).unwrap();
    assert!(place.files_containing(secret).is_empty());
    let mut bytes = place.read_file(&path);
    bytes[offset..offset + before_erase.len()].copy_from_slice(&before_erase);
    place.replace_file(&path, &bytes);
    let batch = CorruptReason::CommitMarkerDoesNotMatchBatch;
    assert_corrupt(alice.verify(), batch, "verify of the open agent");
    drop((alice, store));
    let (_store, alice) = reopen(&place, &token);
    assert_corrupt(alice, batch, "open");
}

fn an_erased_record_put_back_in_a_sealed_segment_is_corrupt<B: Backend>() {
    an_erased_record_put_back_beside_its_rewritten_marker_is_corrupt::<B>(true);
}

fn an_erased_record_put_back_in_the_active_segment_is_corrupt<B: Backend>() {
    an_erased_record_put_back_beside_its_rewritten_marker_is_corrupt::<B>(false);
}

conformance!(
    a_content_edit_in_a_sealed_segment_with_checksums_recomputed_is_corrupt,
    a_content_edit_in_the_active_segment_with_checksums_recomputed_is_corrupt,
    a_rechained_edit_in_a_sealed_segment_is_caught_by_a_kept_fingerprint,
    a_rechained_edit_in_the_active_segment_is_caught_by_a_kept_fingerprint,
    an_erased_record_put_back_in_a_sealed_segment_is_corrupt,
    an_erased_record_put_back_in_the_active_segment_is_corrupt,
);
