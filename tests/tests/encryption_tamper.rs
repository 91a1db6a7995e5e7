//! Tampering with an encrypted agent's files is found, never served: a changed ciphertext byte
//! is `Corrupt` (the digest, or, once the forger rewrote digests and chain too, the sealing
//! itself); a sealed record moved to another agent, node or place in the log fails its
//! associated data; a key slot moved between ids or agents fails; damaged or missing key files
//! give a typed error naming the file, with the files left as they were. On every backend.

use cheesedb::{CorruptReason, Error, Id, Leg, Mode, Options, Removal, Token};
use cheesedb_core::codec::key_file_header::KEY_FILE_HEADER_BYTES;
use cheesedb_core::codec::key_table_file::{decode_key_slot, encode_key_slot, key_slot_offset, KEY_SLOT_BYTES};
use cheesedb_core::codec::record::{self, commit_marker, Body, ContentBlock, Identity, Record};
use cheesedb_core::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use cheesedb_core::digest::{chain_genesis, chain_next, content_digest};
use cheesedb_core::log::names::{agent_folder, epochs_path, key_table_path, snapshot_path};
use cheesedb_core::seal::{open_sealed, secret_in_slot, AgentSecrets};
use cheesedb_tests::backend::Backend;

/// The first agent of the store: alice, encrypted.
const ALICE: u64 = 1;
/// The second: bob, encrypted too.
const BOB: u64 = 2;

/// Two lots of one length, so a sealed content of one fits the record of the other.
const CONTENT_A: &[u8] = b"alpha-5f0e the user's bank is in Pune";
const CONTENT_B: &[u8] = b"bravo-c3d1 the user's bank is in Goa!";
const LATE: &[u8] = b"late-7e22 written after the Erase";
const FIRST_VECTOR: [f32; 3] = [0.25, -1.5, 3.0];
const SECOND_VECTOR: [f32; 3] = [-0.75, 2.0, 0.125];

/// Small segments, no zeros written ahead, snapshots only if asked: a forger who rewrites the
/// chain would also have to rewrite a snapshot's point, which is beside the point here.
fn options(snapshots: bool) -> Options {
    let snapshot_after_bytes = if snapshots { 1 } else { u64::MAX };
    Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(snapshot_after_bytes)
}

/// What the fixture wrote to alice (and bob).
#[derive(Debug)]
struct Fixture {
    alice: Token,
    bob: Token,
    /// Lots written under the first epoch, which the Erase destroyed: only their key table
    /// slots hold their keys now.
    lot_a: Id,
    lot_b: Id,
    /// A memory with two vectors, one after the other.
    memory: Id,
    /// A lot written after the Erase, under the epoch in force.
    late: Id,
    /// Bob's lot, as long as alice's.
    bob_lot: Id,
}

fn fixture<B: Backend>(place: &B, snapshots: bool) -> Fixture {
    let store = place.open(options(snapshots)).unwrap();
    let alice_token = store.create_encrypted_agent("alice").unwrap();
    let bob_token = store.create_encrypted_agent("bob").unwrap();
    let alice = store.open_agent(&alice_token).unwrap();
    let lot_a = alice.add_lot("source", CONTENT_A).unwrap();
    let lot_b = alice.add_lot("source", CONTENT_B).unwrap();
    let memory = alice.remember(b"the user banks in Pune or Goa", &[Leg::from([lot_a, lot_b])]).unwrap();
    alice.set_vector(memory, &FIRST_VECTOR).unwrap();
    alice.set_vector(memory, &SECOND_VECTOR).unwrap();
    let mut index = 0;
    while alice.report().segments < 2 {
        alice.remember(format!("filler {index:03}").as_bytes(), &[Leg::from([lot_b])]).unwrap();
        index += 1;
    }
    let throwaway = alice.add_lot("tool", b"soon erased").unwrap();
    alice.recall(throwaway, Mode::Fair, Removal::Erase).unwrap();
    let late = alice.add_lot("source", LATE).unwrap();
    let bob = store.open_agent(&bob_token).unwrap();
    let bob_lot = bob.add_lot("source", CONTENT_B).unwrap();
    alice.verify().unwrap();
    Fixture { alice: alice_token, bob: bob_token, lot_a, lot_b, memory, late, bob_lot }
}

/// The segment files of agent `agent`, in order.
fn segments_of<B: Backend>(place: &B, agent: u64) -> Vec<String> {
    let folder = format!("{}/", agent_folder(agent));
    place.segment_files().into_iter().filter(|path| path.starts_with(&folder)).collect()
}

/// Which sealed content a test touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The lot or memory of this id.
    Node(u64),
    /// The vector record of this id, counting from 0 in log order.
    Vector(u64, usize),
}

fn is_target(record: &Record<'_>, target: Target, vectors_seen: &mut usize) -> bool {
    match (record.body, target) {
        (Body::Lot { id, .. } | Body::Memory { id, .. }, Target::Node(wanted)) => id == wanted,
        (Body::Vector { id, .. }, Target::Vector(wanted, nth)) if id == wanted => {
            *vectors_seen += 1;
            *vectors_seen == nth + 1
        }
        _ => false,
    }
}

/// Where the sealed bytes of `target` lie in agent `agent`'s files: the segment, the offset of
/// the bytes in it, and the bytes.
fn locate<B: Backend>(place: &B, agent: u64, target: Target) -> (String, usize, Vec<u8>) {
    let mut vectors_seen = 0;
    for path in segments_of(place, agent) {
        let bytes = place.read_file(&path);
        let mut position = SEGMENT_HEADER_BYTES;
        while let Ok((found, length)) = record::decode(&bytes[position..]) {
            if is_target(&found, target, &mut vectors_seen) {
                let (_, sealed) = found.content().unwrap().present.unwrap();
                let offset = sealed.as_ptr() as usize - bytes.as_ptr() as usize;
                return (path, offset, sealed.to_vec());
            }
            position += length;
        }
    }
    panic!("no record for {target:?}");
}

/// How far a forger goes after replacing sealed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forgery {
    /// The bytes only: the record's checksum fails.
    Bytes,
    /// The record's checksum and its commit marker's batch checksum are recomputed.
    Checksums,
    /// Also the salted digest, and the chain after it: every commit marker's chain hash and
    /// every later segment header. Only the sealing can tell.
    DigestAndChain,
}

/// Replaces the sealed bytes of `target` in agent `agent`'s log with `sealed` (as long), going
/// as far as `forgery` says to make the result look genuine.
fn forge<B: Backend>(place: &B, agent: u64, target: Target, sealed: &[u8], forgery: Forgery) {
    if forgery == Forgery::Bytes {
        let (path, offset, old) = locate(place, agent, target);
        assert_eq!(old.len(), sealed.len());
        let mut bytes = place.read_file(&path);
        bytes[offset..offset + sealed.len()].copy_from_slice(sealed);
        place.replace_file(&path, &bytes);
        return;
    }
    let rechain = forgery == Forgery::DigestAndChain;
    let mut chain = chain_genesis(agent);
    let mut vectors_seen = 0;
    let mut found_target = false;
    for path in segments_of(place, agent) {
        let mut bytes = place.read_file(&path);
        let mut header = SegmentHeader::decode(&bytes).unwrap();
        if rechain {
            header.chain_before = chain;
            bytes[..SEGMENT_HEADER_BYTES].copy_from_slice(&header.encode());
        }
        chain = header.chain_before;
        let mut position = SEGMENT_HEADER_BYTES;
        let mut batch_start = position;
        while let Ok((found, length)) = record::decode(&bytes[position..]) {
            let mut replacement = Vec::new();
            if is_target(&found, target, &mut vectors_seen) {
                let block = found.content().unwrap();
                let (salt, old) = block.present.unwrap();
                assert_eq!(old.len(), sealed.len(), "a forgery keeps every offset");
                let digest = if rechain { content_digest(salt, sealed) } else { block.digest };
                let content = ContentBlock { digest, present: Some((salt, sealed)), ..block };
                let body = match found.body {
                    Body::Lot { id, label, .. } => Body::Lot { id, label, content },
                    Body::Memory { id, legs, tracked, .. } => Body::Memory { id, legs, tracked, content },
                    Body::Vector { id, .. } => Body::Vector { id, content },
                    other => other,
                };
                Record { body, ..found }.encode(&mut replacement);
                found_target = true;
            } else if let Body::Commit { record_count, chain: committed, .. } = found.body {
                let chain = if rechain { chain } else { committed };
                let batch = &bytes[batch_start..position];
                commit_marker(found.identity, batch_start as u64, batch, record_count, chain).encode(&mut replacement);
            }
            if !replacement.is_empty() {
                assert_eq!(replacement.len(), length);
                bytes[position..position + length].copy_from_slice(&replacement);
            }
            let (now, _) = record::decode(&bytes[position..]).unwrap();
            if now.is_chained() {
                let mut fields = Vec::new();
                now.encode_chained_fields(&mut fields);
                chain = chain_next(&chain, &fields);
            }
            position += length;
            if matches!(now.body, Body::Commit { .. }) {
                batch_start = position;
            }
        }
        place.replace_file(&path, &bytes);
    }
    assert!(found_target, "no record for {target:?}");
}

/// Where reading `id` of the agent of `token` in `place` stopped: the open, the get or the
/// verify, with the error; or the content it read and verified.
fn read_through<B: Backend>(place: &B, token: &Token, id: Id) -> Result<Option<Vec<u8>>, (&'static str, Error)> {
    let store = place.open(options(false)).map_err(|error| ("open of the store", error))?;
    let agent = store.open_agent(token).map_err(|error| ("open", error))?;
    let content = agent.get(id).map_err(|error| ("get", error))?.content().map(<[u8]>::to_vec);
    agent.verify().map_err(|error| ("verify", error))?;
    Ok(content)
}

fn reason_of(error: &Error) -> CorruptReason {
    match error {
        Error::Corrupt { reason, .. } => *reason,
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

fn assert_corrupt<T: std::fmt::Debug>(found: Result<T, Error>, reason: CorruptReason, what: &str) {
    match found {
        Err(Error::Corrupt { reason: found, .. }) => assert_eq!(found, reason, "{what}"),
        other => panic!("{what}: expected Corrupt ({reason}), got {other:?}"),
    }
}

/// One byte of the ciphertext of a lot changed (past the epoch, nonce and secret under the
/// epoch key), with the forger going as far as `forgery`; for a lot of a destroyed epoch in the
/// sealed segment and for the lot of the epoch in force, the last write of the active segment.
/// The agent open at the time reports it on get and verify; reopened, the same, except that a
/// last write whose bytes fail their checksums cannot be told from one a crash tore, and is cut
/// as such (as for a plaintext agent; a kept fingerprint sees it).
fn a_flipped_ciphertext_byte_is_corrupt<B: Backend>(forgery: Forgery) {
    let place = B::new();
    let fixture = fixture(&place, false);
    let expected = match forgery {
        Forgery::Bytes => None,
        Forgery::Checksums => Some(CorruptReason::ContentDoesNotMatchDigest),
        Forgery::DigestAndChain => Some(CorruptReason::SealedContentDoesNotOpen),
    };
    for id in [fixture.lot_a, fixture.late] {
        let copy = place.duplicate();
        let store = copy.open(options(false)).unwrap();
        let alice = store.open_agent(&fixture.alice).unwrap();
        let (_, _, mut sealed) = locate(&copy, ALICE, Target::Node(id.get()));
        sealed[4 + 24 + 48 + 5] ^= 0x20;
        forge(&copy, ALICE, Target::Node(id.get()), &sealed, forgery);
        let got = alice.get(id);
        assert!(matches!(got, Err(Error::Corrupt { .. })), "{forgery:?}, get of the open agent: {got:?}");
        assert!(alice.verify().is_err_and(|error| error.is_corruption()), "{forgery:?}, verify of the open agent");
        if let Some(expected) = expected {
            assert_corrupt(got, expected, "get of the open agent");
        }
        drop((alice, store));

        let cut_as_torn = forgery == Forgery::Bytes && id == fixture.late;
        match read_through(&copy, &fixture.alice, id) {
            Err(("get", Error::UnknownId { .. })) if cut_as_torn => {}
            Err((stage, error)) => {
                let reason = reason_of(&error);
                if let Some(expected) = expected {
                    assert_eq!((stage, reason), ("get", expected), "{forgery:?}, reopened");
                }
            }
            Ok(read) => panic!("{forgery:?}: a changed ciphertext was read after a reopen: {read:?}"),
        }
        // The untouched lot next to it still reads.
        if forgery != Forgery::Bytes || id == fixture.late {
            let store = copy.open(options(false)).unwrap();
            let alice = store.open_agent(&fixture.alice).unwrap();
            assert_eq!(alice.get(fixture.lot_b).unwrap().content(), Some(CONTENT_B));
            if let Some(expected) = expected {
                assert_corrupt(alice.verify(), expected, "verify after a reopen");
            }
        }
    }
}

fn a_flipped_ciphertext_byte_is_corrupt_to_get_and_verify<B: Backend>() {
    a_flipped_ciphertext_byte_is_corrupt::<B>(Forgery::Bytes);
}

fn a_flipped_ciphertext_byte_with_checksums_recomputed_fails_its_digest<B: Backend>() {
    a_flipped_ciphertext_byte_is_corrupt::<B>(Forgery::Checksums);
}

fn a_flipped_ciphertext_byte_with_digest_and_chain_forged_fails_to_open<B: Backend>() {
    a_flipped_ciphertext_byte_is_corrupt::<B>(Forgery::DigestAndChain);
}

/// Every byte of a sealed envelope flipped in turn, digest and chain forged: the content read
/// is never anything but the original. Where the byte lies says what catches it:
/// - the epoch number: open, which knows no such epoch, or finds the record's copy of its
///   secret does not open under that epoch's key;
/// - the nonce, ciphertext or tag: the sealing (get and verify), and for a record of the epoch
///   in force also open, which unwraps the record's copy of its secret;
/// - the record's copy of its secret: open, for a record of the epoch in force; under a
///   destroyed epoch nothing can use that copy, so nothing reads it (only a kept fingerprint
///   sees the rewritten chain, as for any rechained edit).
fn every_forged_byte_of_an_envelope_is_caught_or_harmless<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    for (id, content, epoch_in_force) in [(fixture.lot_a, CONTENT_A, false), (fixture.late, LATE, true)] {
        let target = Target::Node(id.get());
        let (_, _, original) = locate(&place, ALICE, target);
        for index in (0..original.len()).step_by(B::OFFSET_STRIDE) {
            let copy = place.duplicate();
            let mut sealed = original.clone();
            sealed[index] ^= 1 << (index % 8);
            forge(&copy, ALICE, target, &sealed, Forgery::DigestAndChain);
            let outcome = read_through(&copy, &fixture.alice, id);
            let what = format!("byte {index} of {id}'s envelope");
            let secret_copy = (4 + 24..4 + 24 + 48).contains(&index);
            match outcome {
                Ok(read) => {
                    assert!(secret_copy && !epoch_in_force, "{what}: not caught");
                    assert_eq!(read.as_deref(), Some(content), "{what}: another content read");
                }
                Err((stage, error)) => {
                    let reason = reason_of(&error);
                    let expected = match index {
                        0..=3 => vec![CorruptReason::EpochOfRecordUnknown, CorruptReason::SealedContentDoesNotOpen],
                        _ => vec![CorruptReason::SealedContentDoesNotOpen],
                    };
                    assert!(expected.contains(&reason), "{what}: {stage} gave {error:?}");
                    if index >= 4 + 24 + 48 && !epoch_in_force {
                        assert_eq!(stage, "get", "{what}");
                    }
                }
            }
        }
    }
}

/// A vector record's sealed numbers put in place of a later vector record of the same node:
/// same key, another place in the log. Its associated data (the sequence) fails.
fn a_sealed_vector_moved_to_a_later_record_of_its_node_fails_its_associated_data<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let memory = fixture.memory.get();
    let (_, _, first) = locate(&place, ALICE, Target::Vector(memory, 0));
    forge(&place, ALICE, Target::Vector(memory, 1), &first, Forgery::DigestAndChain);
    let store = place.open(options(false)).unwrap();
    let alice = store.open_agent(&fixture.alice).unwrap();
    assert_corrupt(alice.verify(), CorruptReason::SealedContentDoesNotOpen, "verify");
    assert_corrupt(alice.search_vector(&FIRST_VECTOR, 5), CorruptReason::SealedContentDoesNotOpen, "vector search");
}

/// A sealed lot put in place of another lot's: of the same agent, or of another encrypted
/// agent, every checksum and the chain forged to fit. Neither opens where it now lies.
fn a_sealed_lot_moved_to_another_node_or_agent_fails_to_open<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let cases = [
        ("another node of alice", ALICE, Target::Node(fixture.lot_a.get()), ALICE, fixture.lot_b, &fixture.alice),
        ("alice's lot in bob's log", ALICE, Target::Node(fixture.lot_b.get()), BOB, fixture.bob_lot, &fixture.bob),
        ("bob's lot in alice's log", BOB, Target::Node(fixture.bob_lot.get()), ALICE, fixture.lot_b, &fixture.alice),
    ];
    for (what, from_agent, from, to_agent, to, token) in cases {
        let copy = place.duplicate();
        let (_, _, moved) = locate(&copy, from_agent, from);
        forge(&copy, to_agent, Target::Node(to.get()), &moved, Forgery::DigestAndChain);
        let (stage, error) = read_through(&copy, token, to).expect_err(what);
        assert_eq!(reason_of(&error), CorruptReason::SealedContentDoesNotOpen, "{what}: {stage}");
    }
}

/// The associated data alone, with the right key: a sealed content opens only as the record it
/// was written as (agent, id, sequence); the segment is not bound, since compaction moves
/// records to other segments.
fn a_sealed_content_opens_only_under_its_own_identity<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let id = fixture.lot_a.get();
    let (path, _, _) = locate(&place, ALICE, Target::Node(id));
    let bytes = place.read_file(&path);
    let mut position = SEGMENT_HEADER_BYTES;
    let record = loop {
        let (record, length) = record::decode(&bytes[position..]).unwrap();
        if is_target(&record, Target::Node(id), &mut 0) {
            break record;
        }
        position += length;
    };
    let (_, sealed) = record.content().unwrap().present.unwrap();
    let key_table = place.read_file(&key_table_path(&agent_folder(ALICE)));
    let slot_key = AgentSecrets::from_token(fixture.alice.as_bytes()).slot_key;
    let start = key_slot_offset(id).unwrap() as usize;
    let secret = secret_in_slot(ALICE, &slot_key, id, &key_table[start..start + KEY_SLOT_BYTES]).unwrap().unwrap();

    let plain = open_sealed(&record, id, &secret, sealed).unwrap();
    assert!(plain.ends_with(CONTENT_A));
    let Identity { agent, segment, sequence } = record.identity;
    let elsewhere = |identity: Identity| Record { identity, ..record };
    let does_not_open = Err(CorruptReason::SealedContentDoesNotOpen);
    assert_eq!(open_sealed(&elsewhere(Identity { agent: BOB, ..record.identity }), id, &secret, sealed), does_not_open);
    assert_eq!(
        open_sealed(&elsewhere(Identity { sequence: sequence + 1, ..record.identity }), id, &secret, sealed),
        does_not_open
    );
    assert_eq!(open_sealed(&record, id + 1, &secret, sealed), does_not_open);
    let moved_segment = elsewhere(Identity { agent, segment: segment + 1, sequence });
    assert_eq!(open_sealed(&moved_segment, id, &secret, sealed), Ok(plain));
}

/// The key table's slot of `id`.
fn slot_of<B: Backend>(place: &B, agent: u64, id: u64) -> Vec<u8> {
    let table = place.read_file(&key_table_path(&agent_folder(agent)));
    let start = key_slot_offset(id).unwrap() as usize;
    table[start..start + KEY_SLOT_BYTES].to_vec()
}

fn put_slot<B: Backend>(place: &B, agent: u64, id: u64, slot: &[u8]) {
    let path = key_table_path(&agent_folder(agent));
    let mut table = place.read_file(&path);
    let start = key_slot_offset(id).unwrap() as usize;
    table[start..start + KEY_SLOT_BYTES].copy_from_slice(slot);
    place.replace_file(&path, &table);
}

/// Slots written over the key table: the id, and the bytes.
type SlotWrites = Vec<(u64, Vec<u8>)>;

/// `slot`, taken from another place, with its checksum made to fit `id` of `agent`: what a
/// forger can do, since the checksum holds no secret.
fn refit(slot: &[u8], from_agent: u64, from_id: u64, agent: u64, id: u64) -> Vec<u8> {
    let decoded = decode_key_slot(from_agent, from_id, slot).unwrap().unwrap();
    encode_key_slot(agent, id, &decoded).to_vec()
}

/// Slots swapped between two ids, or copied from another agent, as they are or with their
/// checksums refitted. Under a destroyed epoch the slot is the only key, so the damage stays
/// and is reported by get and verify, before and after a reopen; under the epoch in force,
/// open writes the slot again from the record's own copy of the secret, and reads right.
fn a_key_slot_moved_between_ids_or_agents_is_corrupt<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let (a, b) = (fixture.lot_a.get(), fixture.lot_b.get());
    let slot_a = slot_of(&place, ALICE, a);
    let slot_b = slot_of(&place, ALICE, b);
    let bobs = slot_of(&place, BOB, fixture.bob_lot.get());
    let checksum = CorruptReason::KeySlotChecksumMismatch;
    let does_not_open = CorruptReason::KeySlotDoesNotOpen;
    let cases: Vec<(&str, SlotWrites, CorruptReason)> = vec![
        ("swapped", vec![(a, slot_b.clone()), (b, slot_a.clone())], checksum),
        (
            "swapped, refitted",
            vec![(a, refit(&slot_b, ALICE, b, ALICE, a)), (b, refit(&slot_a, ALICE, a, ALICE, b))],
            does_not_open,
        ),
        ("bob's, at alice's id of the same number", vec![(fixture.bob_lot.get(), bobs.clone())], checksum),
        ("bob's, refitted", vec![(b, refit(&bobs, BOB, fixture.bob_lot.get(), ALICE, b))], does_not_open),
    ];
    for (what, writes, reason) in cases {
        let copy = place.duplicate();
        let store = copy.open(options(false)).unwrap();
        let alice = store.open_agent(&fixture.alice).unwrap();
        for (id, slot) in &writes {
            put_slot(&copy, ALICE, *id, slot);
        }
        let damaged = writes.last().unwrap().0;
        assert_corrupt(alice.get(Id::from(damaged)), reason, what);
        assert_corrupt(alice.verify(), reason, what);
        drop((alice, store));
        let (stage, error) = read_through(&copy, &fixture.alice, Id::from(damaged)).expect_err(what);
        assert_eq!((stage, reason_of(&error)), ("get", reason), "{what} after a reopen");
        let store = copy.open(options(false)).unwrap();
        let alice = store.open_agent(&fixture.alice).unwrap();
        assert_eq!(alice.get(fixture.late).unwrap().content(), Some(LATE), "{what}: the others read");
    }
    // The slot of the lot of the epoch in force, taken from another id: repaired at open.
    let copy = place.duplicate();
    let late = fixture.late.get();
    put_slot(&copy, ALICE, late, &refit(&slot_a, ALICE, a, ALICE, late));
    assert_eq!(read_through(&copy, &fixture.alice, fixture.late), Ok(Some(LATE.to_vec())));
}

/// Every file of the place, for comparing before and after a failed open.
fn snapshot_of_files<B: Backend>(place: &B) -> Vec<(String, Vec<u8>)> {
    place.files()
}

/// Flips `offsets` of the file at `path` one at a time (in copies of `place`), and checks the
/// open fails with a `Corrupt` naming that file and leaves every file as it was.
fn each_flip_fails_the_open<B: Backend>(place: &B, token: &Token, path: &str, offsets: std::ops::Range<usize>) {
    let original = place.read_file(path);
    for offset in offsets.step_by(B::OFFSET_STRIDE) {
        let copy = place.duplicate();
        let mut bytes = original.clone();
        bytes[offset] ^= 1 << (offset % 8);
        copy.replace_file(path, &bytes);
        let before = snapshot_of_files(&copy);
        let store = copy.open(options(false)).unwrap();
        match store.open_agent(token) {
            Err(Error::Corrupt { file, .. }) => assert_eq!(file, path, "byte {offset}"),
            Err(other) => panic!("byte {offset} of {path}: expected Corrupt, got {other:?}"),
            Ok(_) => panic!("byte {offset} of {path}: the open succeeded"),
        }
        drop(store);
        assert!(snapshot_of_files(&copy) == before, "byte {offset} of {path}: a failed open changed a file");
    }
}

fn a_damaged_key_file_header_is_corrupt_naming_the_file<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let folder = agent_folder(ALICE);
    each_flip_fails_the_open(&place, &fixture.alice, &key_table_path(&folder), 0..KEY_FILE_HEADER_BYTES);
    each_flip_fails_the_open(&place, &fixture.alice, &epochs_path(&folder), 0..KEY_FILE_HEADER_BYTES);
}

/// The slot of the epoch in force damaged, with or without a snapshot to start from: the open
/// fails naming the epoch file and changes nothing. It must not take the slot for one torn
/// while being added (which is cut, its epoch never used): records were sealed under it, and
/// a new epoch given its number would not open them.
fn a_damaged_slot_of_the_epoch_in_force_is_corrupt_and_left_as_it_is<B: Backend>() {
    for snapshots in [false, true] {
        let place = B::new();
        let fixture = fixture(&place, snapshots);
        let path = epochs_path(&agent_folder(ALICE));
        assert_eq!(place.files().iter().any(|(name, _)| *name == snapshot_path(&agent_folder(ALICE))), snapshots);
        let length = place.read_file(&path).len();
        assert_eq!(length, KEY_FILE_HEADER_BYTES + 2 * 88, "two epochs: the first destroyed, the second in force");
        each_flip_fails_the_open(&place, &fixture.alice, &path, length - 88..length);
    }
}

/// The slot of a destroyed epoch damaged: it held no key, so nothing is lost; the agent opens
/// and reads as before. Open writes the slot again as destroyed, and says so in its report; the
/// next open finds nothing to repair.
fn a_damaged_slot_of_a_destroyed_epoch_loses_nothing_and_its_repair_is_reported<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let path = epochs_path(&agent_folder(ALICE));
    let original = place.read_file(&path);
    for offset in (KEY_FILE_HEADER_BYTES..KEY_FILE_HEADER_BYTES + 88).step_by(B::OFFSET_STRIDE) {
        let copy = place.duplicate();
        let mut bytes = original.clone();
        bytes[offset] ^= 1 << (offset % 8);
        copy.replace_file(&path, &bytes);
        for (id, content) in [(fixture.lot_a, CONTENT_A), (fixture.late, LATE)] {
            assert_eq!(read_through(&copy, &fixture.alice, id), Ok(Some(content.to_vec())), "byte {offset}");
        }
        let store = copy.open(options(false)).unwrap();
        let report = store.open_agent(&fixture.alice).unwrap().report();
        assert!(!report.repaired_anything(), "byte {offset}: a second open repairs nothing: {report:?}");
    }
    let copy = place.duplicate();
    let mut bytes = original.clone();
    bytes[KEY_FILE_HEADER_BYTES + 3] ^= 0x10;
    copy.replace_file(&path, &bytes);
    let store = copy.open(options(false)).unwrap();
    let report = store.open_agent(&fixture.alice).unwrap().report();
    assert_eq!(report.epoch_slots_destroyed_on_open, 1, "{report:?}");
    assert!(report.repaired_anything(), "{report:?}");
}

/// An epoch file that lost slots at its end (cut to its header, or to the destroyed epoch
/// only): the epoch in force is gone, which no crash leaves. Corrupt, naming the file, with or
/// without a snapshot that would spare the open from replaying the records sealed under it.
fn an_epoch_file_cut_short_is_corrupt<B: Backend>() {
    for snapshots in [false, true] {
        let place = B::new();
        let fixture = fixture(&place, snapshots);
        let path = epochs_path(&agent_folder(ALICE));
        let original = place.read_file(&path);
        for length in [KEY_FILE_HEADER_BYTES, KEY_FILE_HEADER_BYTES + 88, original.len() - 1] {
            let copy = place.duplicate();
            copy.replace_file(&path, &original[..length]);
            let before = snapshot_of_files(&copy);
            let store = copy.open(options(false)).unwrap();
            match store.open_agent(&fixture.alice) {
                Err(Error::Corrupt { file, .. }) => assert_eq!(file, path, "cut to {length}"),
                other => panic!("cut to {length}: expected Corrupt, got {:?}", other.map(|_| ())),
            }
            drop(store);
            assert!(snapshot_of_files(&copy) == before, "cut to {length}: a failed open changed a file");
        }
    }
}

/// A key table cut short loses the slots past the cut: a node of a destroyed epoch has no key
/// left anywhere, which get and verify report (a slot cut in its middle fails its checksum);
/// one of the epoch in force gets its slot back from its record.
fn a_key_table_cut_short_is_corrupt_for_the_nodes_it_lost<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let path = key_table_path(&agent_folder(ALICE));
    let table = place.read_file(&path);
    let slot_b = key_slot_offset(fixture.lot_b.get()).unwrap() as usize;
    for (cut, reason) in
        [(slot_b, CorruptReason::KeyMissingForReadableNode), (slot_b + 10, CorruptReason::KeySlotChecksumMismatch)]
    {
        let copy = place.duplicate();
        copy.replace_file(&path, &table[..cut]);
        let store = copy.open(options(false)).unwrap();
        let alice = store.open_agent(&fixture.alice).unwrap();
        // The slot of the lot written under the epoch in force came back from its record.
        assert_eq!(alice.report().key_slots_restored_on_open, 1, "{:?}", alice.report());
        assert!(alice.report().repaired_anything());
        assert_eq!(alice.get(fixture.lot_a).unwrap().content(), Some(CONTENT_A));
        assert_eq!(alice.get(fixture.late).unwrap().content(), Some(LATE));
        assert_corrupt(alice.get(fixture.lot_b), reason, "get");
        assert_corrupt(alice.search("Goa", 10), reason, "search");
        assert_corrupt(alice.verify(), reason, "verify");
    }
}

/// A key file cut inside its header: the open fails, `Corrupt` naming the file, where it ends.
fn a_key_file_cut_inside_its_header_is_corrupt_naming_it<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let folder = agent_folder(ALICE);
    for path in [key_table_path(&folder), epochs_path(&folder)] {
        for length in [0, 30, KEY_FILE_HEADER_BYTES - 1] {
            let copy = place.duplicate();
            copy.replace_file(&path, &place.read_file(&path)[..length]);
            let store = copy.open(options(false)).unwrap();
            match store.open_agent(&fixture.alice) {
                Err(Error::Corrupt { file, offset, reason: CorruptReason::KeyFileCutShort }) => {
                    assert_eq!((file, offset), (path.clone(), length as u64));
                }
                other => panic!("{path} cut to {length}: expected Corrupt, got {:?}", other.map(|_| ())),
            }
        }
    }
}

/// A key file removed: damage to the agent, not a failure of the storage. The open fails with
/// `Corrupt` (`KeyFileMissing`) naming it, and the other agents work on.
fn a_missing_key_file_is_corrupt_naming_it<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let folder = agent_folder(ALICE);
    for path in [key_table_path(&folder), epochs_path(&folder)] {
        let copy = place.duplicate();
        copy.remove_file(&path);
        let store = copy.open(options(false)).unwrap();
        match store.open_agent(&fixture.alice) {
            Err(Error::Corrupt { file, offset: 0, reason: CorruptReason::KeyFileMissing }) => assert_eq!(file, path),
            other => panic!("{path} missing: expected Corrupt, got {:?}", other.map(|_| ())),
        }
        assert!(matches!(
            store.verify_agent_without_token("alice"),
            Err(Error::Corrupt { file, reason: CorruptReason::KeyFileMissing, .. }) if file == path
        ));
        assert_eq!(store.open_agent(&fixture.bob).unwrap().get(fixture.bob_lot).unwrap().content(), Some(CONTENT_B));
    }
}

cheesedb_tests::conformance!(
    a_flipped_ciphertext_byte_is_corrupt_to_get_and_verify,
    a_flipped_ciphertext_byte_with_checksums_recomputed_fails_its_digest,
    a_flipped_ciphertext_byte_with_digest_and_chain_forged_fails_to_open,
    every_forged_byte_of_an_envelope_is_caught_or_harmless,
    a_sealed_vector_moved_to_a_later_record_of_its_node_fails_its_associated_data,
    a_sealed_lot_moved_to_another_node_or_agent_fails_to_open,
    a_sealed_content_opens_only_under_its_own_identity,
    a_key_slot_moved_between_ids_or_agents_is_corrupt,
    a_damaged_key_file_header_is_corrupt_naming_the_file,
    a_damaged_slot_of_the_epoch_in_force_is_corrupt_and_left_as_it_is,
    a_damaged_slot_of_a_destroyed_epoch_loses_nothing_and_its_repair_is_reported,
    an_epoch_file_cut_short_is_corrupt,
    a_key_table_cut_short_is_corrupt_for_the_nodes_it_lost,
    a_key_file_cut_inside_its_header_is_corrupt_naming_it,
    a_missing_key_file_is_corrupt_naming_it,
);
