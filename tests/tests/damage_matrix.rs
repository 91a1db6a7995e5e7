//! The damage matrix of docs/FORMAT.md, one test per row, with the same names: each kind of
//! damage, where it lands, and what the open does. An open that fails must leave every file
//! byte for byte as it was; an open that succeeds must keep everything acknowledged, except
//! where the row says the loss cannot be seen from the files, and then a kept fingerprint
//! must see it. On every backend.

use cheesedb::{Agent, Error, Fingerprint, Id, Leg, Mode, Options, Removal, Token};
use cheesedb_core::codec::erase_journal::{EraseJournal, Overwrite};
use cheesedb_core::codec::snapshot_file::SnapshotFile;
use cheesedb_core::{Storage, StorageFile};
use cheesedb_tests::backend::Backend;

/// Bytes of a segment header.
const HEADER_BYTES: usize = 96;
/// The flag of a node slot that says an Erase covers it (bit 2 of the flag byte at bit 48).
const SLOT_ERASE_FLAG: u64 = 4 << 48;

/// Small segments, no zeros written ahead (a file ends where its last write ends), and no
/// snapshot unless `snapshots`.
fn options(snapshots: bool) -> Options {
    let snapshot_after_bytes = if snapshots { 1 } else { u64::MAX };
    Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(snapshot_after_bytes)
}

/// One agent with a sealed segment and an active one holding four writes after its header.
struct Fixture {
    token: Token,
    /// Every lot and memory acknowledged, ascending.
    acknowledged: Vec<Id>,
    /// The active segment's length after each of its writes (the first: just the header and
    /// the write that rolled into it).
    boundaries: Vec<u64>,
    /// The fingerprint after the last write, as a user would keep it.
    kept: Fingerprint,
    sealed: String,
    active: String,
}

fn fixture<B: Backend>(place: &B, snapshots: bool) -> Fixture {
    let store = place.open(options(snapshots)).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"the source").unwrap();
    let mut acknowledged = vec![lot];
    while alice.report().segments < 2 {
        acknowledged
            .push(alice.remember(format!("memory {}", acknowledged.len()).as_bytes(), &[Leg::from([lot])]).unwrap());
    }
    let mut segments = place.segment_files();
    let active = segments.pop().unwrap();
    let sealed = segments.pop().unwrap();
    let mut boundaries = vec![place.read_file(&active).len() as u64];
    for extra in 0..4 {
        acknowledged.push(alice.remember(format!("late memory {extra}").as_bytes(), &[Leg::from([lot])]).unwrap());
        boundaries.push(place.read_file(&active).len() as u64);
    }
    let kept = alice.verify().unwrap();
    Fixture { token, acknowledged, boundaries, kept, sealed, active }
}

fn open<B: Backend>(place: &B, token: &Token, snapshots: bool) -> Result<Agent<B::Storage>, Error> {
    place.open(options(snapshots))?.open_agent(token)
}

/// Every file but the lock, which any open takes.
fn store_files<B: Backend>(place: &B) -> Vec<(String, Vec<u8>)> {
    place.files().into_iter().filter(|(path, _)| !path.ends_with("lock")).collect()
}

/// The open fails with `Corrupt` naming `file` (and `offset`, when given), and changes nothing.
fn assert_corrupt_and_unchanged<B: Backend>(place: &B, token: &Token, file: &str, offset: Option<u64>) {
    let before = store_files(place);
    match open(place, token, false) {
        Err(Error::Corrupt { file: named, offset: at, reason }) => {
            assert!(named.ends_with(file) || file.ends_with(&named), "{named} named instead of {file}: {reason}");
            if let Some(offset) = offset {
                assert_eq!(at, offset, "{reason}");
            }
        }
        other => panic!("expected Corrupt naming {file}, got {other:?}"),
    }
    assert!(store_files(place) == before, "a failed open modified the files");
}

/// Every acknowledged lot and memory is there and alive, and the history extends the kept one.
fn assert_nothing_lost<B: Backend>(alice: &Agent<B::Storage>, fixture: &Fixture) {
    let mut found = alice.lots().unwrap();
    found.extend(alice.memories().unwrap());
    found.sort();
    assert_eq!(found, fixture.acknowledged);
    alice.verify_extends(&fixture.kept).unwrap();
}

fn flip<B: Backend>(place: &B, path: &str, offset: usize) {
    let mut bytes = place.read_file(path);
    bytes[offset] ^= 0x20;
    place.replace_file(path, &bytes);
}

fn fill<B: Backend>(place: &B, path: &str, range: std::ops::Range<usize>, byte: u8) {
    let mut bytes = place.read_file(path);
    bytes[range].fill(byte);
    place.replace_file(path, &bytes);
}

fn cut<B: Backend>(place: &B, path: &str, length: u64) {
    let bytes = place.read_file(path);
    place.replace_file(path, &bytes[..length as usize]);
}

fn bit_flip_in_a_sealed_segment<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    flip(&place, &fixture.sealed, 500);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.sealed, None);
}

fn bit_flip_in_the_active_segment_before_the_last_commit<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let offset = fixture.boundaries[1] as usize + 40;
    flip(&place, &fixture.active, offset);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.active, Some(fixture.boundaries[1]));
}

fn bit_flip_in_a_segment_header<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    flip(&place, &fixture.active, 20);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.active, Some(0));
}

fn torn_write_after_the_last_commit<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let mut bytes = place.read_file(&fixture.active);
    bytes.extend((0..333u32).map(|index| (index * 7 + 3) as u8));
    place.replace_file(&fixture.active, &bytes);
    let alice = open(&place, &fixture.token, false).unwrap();
    assert_eq!((alice.report().dropped_bytes, alice.report().dropped_records), (333, 0));
    assert_nothing_lost::<B>(&alice, &fixture);
}

fn torn_write_with_damage_inside_it<B: Backend>() {
    let place = B::new();
    let store = place.open(options(false)).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    alice.add_lot("first", b"the first lot").unwrap();
    let active = place.segment_files().pop().unwrap();
    let batch_start = place.read_file(&active).len();
    alice
        .batch(|batch| {
            batch.add_lot("second", b"a lot in a batch")?;
            batch.add_lot("third", b"another lot in it")
        })
        .unwrap();
    drop((alice, store));
    // The batch's commit marker is gone and a byte of its first record is damaged: a torn
    // write. Its second record still decodes whole, and is counted with the cut.
    let length = place.read_file(&active).len() as u64 - 84;
    cut(&place, &active, length);
    flip(&place, &active, batch_start + 50);
    let alice = open(&place, &token, false).unwrap();
    assert_eq!(alice.report().dropped_records, 1);
    assert_eq!(alice.report().dropped_bytes, length - batch_start as u64);
    assert_eq!(alice.lots().unwrap().len(), 1);
}

fn zeroed_range_before_the_last_commit<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let start = fixture.boundaries[1] as usize;
    fill(&place, &fixture.active, start..start + 30, 0);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.active, Some(fixture.boundaries[1]));
}

fn stale_record_beside_its_rewritten_commit_marker<B: Backend>() {
    let place = B::new();
    let store = place.open(options(false)).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let secret = alice.add_lot("source", b"stale-sector-canary").unwrap();
    alice.add_lot("other", b"an unrelated lot").unwrap();
    let active = place.segment_files().pop().unwrap();
    let before_erase = place.read_file(&active);
    alice.recall(secret, Mode::Fair, Removal::Erase).unwrap();
    drop((alice, store));
    // The sectors of the erased record revert to their older image; its commit marker keeps
    // the new batch checksum. Each record checks, the batch does not.
    let at = before_erase.windows(19).position(|window| window == b"stale-sector-canary").unwrap();
    let mut bytes = place.read_file(&active);
    bytes[HEADER_BYTES..at + 19].copy_from_slice(&before_erase[HEADER_BYTES..at + 19]);
    place.replace_file(&active, &bytes);
    assert_corrupt_and_unchanged(&place, &token, &active, None);
}

fn active_segment_cut_after_its_header<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    // Inside the last write: the cut bytes look like a torn write and nothing proves otherwise.
    let length = fixture.boundaries[4] - 30;
    cut(&place, &fixture.active, length);
    // Zeros at the very end cannot be told from space written ahead, so they are not counted:
    // the cut lands among checksum bytes, and one of them is zero about once in 256 runs.
    let kept = place.read_file(&fixture.active);
    let data_end = kept.iter().rposition(|byte| *byte != 0).unwrap() as u64 + 1;
    assert!(length - data_end < 30, "the cut keeps bytes of the last write");
    let alice = open(&place, &fixture.token, false).unwrap();
    assert_eq!(alice.report().dropped_bytes, data_end - fixture.boundaries[3]);
    assert_eq!(alice.memories().unwrap().len(), fixture.acknowledged.len() - 2, "the last write is gone");
    // Only a kept fingerprint sees the loss.
    assert!(matches!(alice.verify_extends(&fixture.kept), Err(Error::HistoryMismatch { .. })));
}

/// An agent with the default settings (zeros written ahead, so segments keep a write margin)
/// and three writes; returns its token, its active segment and where its data ends.
fn agent_with_zeros_ahead<B: Backend>(place: &B) -> (Token, String, u64) {
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"the source").unwrap();
    alice.remember(b"a memory", &[Leg::from([lot])]).unwrap();
    alice.remember(b"another memory", &[Leg::from([lot])]).unwrap();
    drop((alice, store));
    let active = place.segment_files().pop().unwrap();
    let bytes = place.read_file(&active);
    let data_end = bytes.iter().rposition(|byte| *byte != 0).unwrap() as u64 + 1;
    (token, active, data_end)
}

fn active_segment_with_zeros_ahead_cut_inside_its_last_write<B: Backend>() {
    let place = B::new();
    let (token, active, data_end) = agent_with_zeros_ahead(&place);
    cut(&place, &active, data_end - 30);
    let before = store_files(&place);
    match place.open(Options::default()).unwrap().open_agent(&token) {
        Err(Error::Corrupt { file, offset, .. }) => {
            assert!(active.ends_with(&file) || file.ends_with(&active), "{file}");
            assert_eq!(offset, data_end - 30);
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(store_files(&place) == before, "a failed open modified the files");
}

fn active_segment_with_zeros_ahead_cut_to_its_header<B: Backend>() {
    let place = B::new();
    let (token, active, _) = agent_with_zeros_ahead(&place);
    cut(&place, &active, HEADER_BYTES as u64);
    let before = store_files(&place);
    assert!(matches!(place.open(Options::default()).unwrap().open_agent(&token), Err(Error::Corrupt { .. })));
    assert!(store_files(&place) == before, "a failed open modified the files");
}

fn active_segment_cut_inside_its_header<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    cut(&place, &fixture.active, 50);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.active, Some(0));
}

fn active_segment_cut_before_a_snapshot_point<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, true);
    cut(&place, &fixture.active, fixture.boundaries[1] + 10);
    let before = store_files(&place);
    match open(&place, &fixture.token, true) {
        Err(Error::Corrupt { file, offset, .. }) => {
            assert!(fixture.active.ends_with(&file) || file.ends_with(&fixture.active), "{file}");
            assert_eq!(offset, fixture.boundaries[4]);
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(store_files(&place) == before, "a failed open modified the files");
}

fn active_segment_zeroed_before_a_snapshot_point<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, true);
    let start = fixture.boundaries[2] as usize;
    fill(&place, &fixture.active, start..fixture.boundaries[4] as usize, 0);
    let before = store_files(&place);
    assert!(matches!(open(&place, &fixture.token, true), Err(Error::Corrupt { .. })));
    assert!(store_files(&place) == before, "a failed open modified the files");
}

fn active_segment_zeroed_at_its_end<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    let start = fixture.boundaries[3] as usize;
    fill(&place, &fixture.active, start..fixture.boundaries[4] as usize, 0);
    let alice = open(&place, &fixture.token, false).unwrap();
    // Zeros are what space written ahead holds: without a snapshot past them, the files
    // cannot tell, and only a kept fingerprint sees the loss.
    assert_eq!(alice.memories().unwrap().len(), fixture.acknowledged.len() - 2);
    assert!(matches!(alice.verify_extends(&fixture.kept), Err(Error::HistoryMismatch { .. })));
}

fn newest_segment_deleted_after_a_seal<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    place.remove_file(&fixture.active);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.active, Some(0));
}

fn sealed_segment_deleted<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    place.remove_file(&fixture.sealed);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.sealed, Some(0));
}

fn segment_replaced_by_a_copy_of_another<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    place.replace_file(&fixture.active, &place.read_file(&fixture.sealed));
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.active, Some(0));
}

fn segments_of_two_agents_swapped<B: Backend>() {
    let place = B::new();
    let store = place.open(options(false)).unwrap();
    let alice_token = store.create_agent("alice").unwrap();
    let bob_token = store.create_agent("bob").unwrap();
    for (token, name) in [(&alice_token, "alice"), (&bob_token, "bob")] {
        let agent = store.open_agent(token).unwrap();
        agent.add_lot("source", format!("{name}'s only lot").as_bytes()).unwrap();
    }
    drop(store);
    let segments = place.segment_files();
    let (alice_segment, bob_segment) = (segments[0].clone(), segments[1].clone());
    let alice_bytes = place.read_file(&alice_segment);
    place.replace_file(&alice_segment, &place.read_file(&bob_segment));
    place.replace_file(&bob_segment, &alice_bytes);
    assert_corrupt_and_unchanged(&place, &alice_token, &alice_segment, Some(0));
    assert_corrupt_and_unchanged(&place, &bob_token, &bob_segment, Some(0));
}

fn unfinished_roll_is_undone<B: Backend>() {
    let place = B::new();
    let store = place.open(options(false)).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"the source").unwrap();
    let mut before_roll = Vec::new();
    let mut nodes_before_roll = 0;
    while alice.report().segments < 2 {
        before_roll = place.read_file(&place.segment_files()[0]);
        nodes_before_roll = alice.lots().unwrap().len() + alice.memories().unwrap().len();
        alice.remember(b"a memory", &[Leg::from([lot])]).unwrap();
    }
    drop((alice, store));
    // The crash came after the next segment was made durable and before the seal was: the
    // first segment as it was before the roll, the second holding only its header.
    let segments = place.segment_files();
    place.replace_file(&segments[0], &before_roll);
    cut(&place, &segments[1], HEADER_BYTES as u64);
    let alice = open(&place, &token, false).unwrap();
    assert_eq!(alice.report().unfinished_rolls_undone_on_open, 1);
    assert_eq!(alice.report().segments, 1);
    let nodes = alice.lots().unwrap().len() + alice.memories().unwrap().len();
    assert_eq!(nodes, nodes_before_roll, "everything before the roll is there");
    alice.verify().unwrap();
    alice.remember(b"after the undone roll", &[Leg::from([lot])]).unwrap();
}

/// Rewrites the snapshot of `place` with `change` applied to its node slots; the checksums
/// are computed again, so only a check against the log can catch it.
fn forge_snapshot<B: Backend>(place: &B, change: impl FnOnce(&mut Vec<u64>)) -> String {
    let path = place.files().into_iter().map(|(path, _)| path).find(|path| path.ends_with("snapshot")).unwrap();
    let mut snapshot = SnapshotFile::decode(&place.read_file(&path)).unwrap();
    change(&mut snapshot.slots);
    let parts = snapshot.graph_parts();
    place.replace_file(&path, &SnapshotFile::encode(&snapshot.point, parts, &snapshot.shared));
    path
}

fn forged_erase_flag_in_a_snapshot<B: Backend>() {
    let place = B::new();
    let store = place.open(options(true)).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", b"forged-flag-canary").unwrap();
    alice.remember(b"a memory", &[Leg::from([lot])]).unwrap();
    drop((alice, store));
    forge_snapshot(&place, |slots| slots[0] |= SLOT_ERASE_FLAG);
    let alice = open(&place, &token, true).unwrap();
    assert!(alice.report().snapshot_ignored.is_some(), "the forged snapshot was used");
    assert_eq!(alice.get(lot).unwrap().content(), Some(&b"forged-flag-canary"[..]));
    assert_eq!(alice.report().erasures_completed_on_open, 0);
    assert!(!place.files_containing(b"forged-flag-canary").is_empty());
    alice.verify().unwrap();
}

fn forged_child_edges_in_a_snapshot<B: Backend>() {
    let place = B::new();
    let store = place.open(options(true)).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let a = alice.add_lot("a", b"lot a").unwrap();
    let b = alice.add_lot("b", b"lot b").unwrap();
    alice.remember(b"learned from a", &[Leg::from([a])]).unwrap();
    let unrelated = alice.remember(b"forged-edge-canary", &[Leg::from([b])]).unwrap();
    drop((alice, store));
    // The snapshot now says the memory learned from b is a's child, and the other one b's.
    let path = place.files().into_iter().map(|(path, _)| path).find(|path| path.ends_with("snapshot")).unwrap();
    let mut snapshot = SnapshotFile::decode(&place.read_file(&path)).unwrap();
    assert_eq!(snapshot.child_row, [2, 3]);
    snapshot.child_row = vec![3, 2];
    let parts = snapshot.graph_parts();
    place.replace_file(&path, &SnapshotFile::encode(&snapshot.point, parts, &snapshot.shared));
    let alice = open(&place, &token, true).unwrap();
    assert_eq!(alice.report().snapshot_ignored, None, "the lie passes every check of open");
    // An Erase computed from the lie would erase the unrelated memory: the graph is checked
    // against the log first.
    match alice.recall(a, Mode::Strict, Removal::Erase) {
        Err(Error::Corrupt { .. }) => {}
        other => panic!("an Erase computed from a lying snapshot answered {other:?}"),
    }
    assert_eq!(alice.get(unrelated).unwrap().content(), Some(&b"forged-edge-canary"[..]));
    assert!(!place.files_containing(b"forged-edge-canary").is_empty());
}

fn damaged_snapshot<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, true);
    let path = forge_snapshot(&place, |_| {});
    flip(&place, &path, 130);
    let alice = open(&place, &fixture.token, true).unwrap();
    assert!(alice.report().snapshot_ignored.is_some());
    assert_eq!(alice.report().records_from_snapshot, 0);
    assert_nothing_lost::<B>(&alice, &fixture);
}

fn damaged_catalog<B: Backend>() {
    let place = B::new();
    fixture(&place, false);
    flip(&place, "catalog", 20);
    let before = store_files(&place);
    assert!(matches!(place.open(options(false)), Err(Error::Corrupt { .. })));
    assert!(store_files(&place) == before, "a failed open modified the files");
}

/// Writes `bytes` as the erase journal of the agent whose active segment is `active`, durably.
fn write_erase_journal<B: Backend>(place: &B, active: &str, bytes: &[u8]) {
    let folder = active.rsplit_once('/').unwrap().0;
    let storage = place.storage();
    let mut file = storage.open_file(&format!("{folder}/erase-journal"), true).unwrap();
    file.write_at(0, bytes).unwrap();
    file.sync().unwrap();
    storage.sync_folder(folder).unwrap();
}

fn erase_journal_of_another_agent<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    // A whole journal, checksums and all, that names another agent and would zero a record.
    let overwrite = Overwrite { segment: 2, offset: HEADER_BYTES as u64, literal: vec![0; 8], zeros: 64 };
    write_erase_journal(&place, &fixture.active, &EraseJournal { agent: 99, overwrites: vec![overwrite] }.encode());
    let journal = format!("{}/erase-journal", fixture.active.rsplit_once('/').unwrap().0);
    assert_corrupt_and_unchanged(&place, &fixture.token, &journal, None);
}

fn zeroed_range_in_a_sealed_segment<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    fill(&place, &fixture.sealed, 1000..1100, 0);
    assert_corrupt_and_unchanged(&place, &fixture.token, &fixture.sealed, None);
}

fn deleted_snapshot<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, true);
    let path = place.files().into_iter().map(|(path, _)| path).find(|path| path.ends_with("snapshot")).unwrap();
    place.remove_file(&path);
    let alice = open(&place, &fixture.token, true).unwrap();
    assert_eq!(alice.report().records_from_snapshot, 0);
    assert_nothing_lost::<B>(&alice, &fixture);
}

fn garbage_erase_journal<B: Backend>() {
    let place = B::new();
    let fixture = fixture(&place, false);
    write_erase_journal(&place, &fixture.active, b"not a journal at all");
    let alice = open(&place, &fixture.token, false).unwrap();
    assert_eq!(alice.report().erase_journals_discarded_on_open, 1);
    assert!(place.files().iter().all(|(path, _)| !path.ends_with("erase-journal")), "the journal stays");
    assert_nothing_lost::<B>(&alice, &fixture);
}

cheesedb_tests::conformance!(
    bit_flip_in_a_sealed_segment,
    bit_flip_in_the_active_segment_before_the_last_commit,
    bit_flip_in_a_segment_header,
    torn_write_after_the_last_commit,
    torn_write_with_damage_inside_it,
    zeroed_range_before_the_last_commit,
    stale_record_beside_its_rewritten_commit_marker,
    active_segment_cut_after_its_header,
    active_segment_cut_inside_its_header,
    active_segment_with_zeros_ahead_cut_inside_its_last_write,
    active_segment_with_zeros_ahead_cut_to_its_header,
    active_segment_cut_before_a_snapshot_point,
    active_segment_zeroed_before_a_snapshot_point,
    active_segment_zeroed_at_its_end,
    newest_segment_deleted_after_a_seal,
    sealed_segment_deleted,
    segment_replaced_by_a_copy_of_another,
    segments_of_two_agents_swapped,
    unfinished_roll_is_undone,
    forged_erase_flag_in_a_snapshot,
    forged_child_edges_in_a_snapshot,
    damaged_snapshot,
    damaged_catalog,
    garbage_erase_journal,
    erase_journal_of_another_agent,
    zeroed_range_in_a_sealed_segment,
    deleted_snapshot,
);
