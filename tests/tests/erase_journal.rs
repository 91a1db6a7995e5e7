//! An Erase cut short among its overwrites in place is finished at open from its journal, before
//! any segment is read; a journal that is not whole is removed and the erasure done again. On
//! every backend.

use std::sync::atomic::Ordering;

use cheesedb::{Error, Id, Leg, Mode, Options, Removal, Token};
use cheesedb_core::codec::erase_journal::EraseJournal;
use cheesedb_tests::backend::Backend;
use cheesedb_tests::faulty::FaultyStorage;

const CANARY: &[u8] = b"canary-3e7d-journal-the-tool-said-rain";
const SURVIVOR: &[u8] = b"survivor-88a1-kept-through-the-journal";
const JOURNAL_NAME: &str = "erase-journal";

/// Small segments, so the erased records lie in a sealed segment and in the active one.
fn options() -> Options {
    Options::default().segment_size_max_bytes(4096)
}

/// What an erase that stopped before removing its journal left.
struct Interrupted<B: Backend> {
    place: B,
    token: Token,
    lot: Id,
    doomed: Vec<Id>,
    survivor: Id,
    /// Every file as it was just before the erase.
    files_before: Vec<(String, Vec<u8>)>,
}

/// Writes a lot with memories on it across two segments, then erases it with file removals
/// failing: the overwrites are done and synced, the journal stays.
fn erase_stopped_before_removing_its_journal<B: Backend>() -> Interrupted<B> {
    let place = B::new();
    let storage = FaultyStorage::wrap(place.storage());
    let faults = storage.faults.clone();
    let store = cheesedb::Store::open_with(storage, options()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let other = alice.add_lot("user", b"user message").unwrap();
    let lot = alice.add_lot("tool", CANARY).unwrap();
    let survivor = alice.remember(SURVIVOR, &[Leg::from([other])]).unwrap();
    let mut doomed = Vec::new();
    while alice.report().segments < 2 || doomed.len() < 20 {
        let text = format!("{}-{}", String::from_utf8_lossy(CANARY), doomed.len());
        doomed.push(alice.remember(text.as_bytes(), &[Leg::from([lot])]).unwrap());
    }
    let files_before = place.files();
    faults.fail_remove.store(true, Ordering::SeqCst);
    assert!(matches!(alice.recall(lot, Mode::Fair, Removal::Erase), Err(Error::OutcomeUnknown { .. })));
    assert_eq!(alice.add_lot("x", b"x"), Err(Error::Poisoned));
    Interrupted { place, token, lot, doomed, survivor, files_before }
}

fn journal_of<B: Backend>(place: &B) -> (String, EraseJournal) {
    let (path, bytes) = place
        .files()
        .into_iter()
        .find(|(path, _)| path.ends_with(&format!("/{JOURNAL_NAME}")))
        .expect("the journal stays when its removal fails");
    (path, EraseJournal::decode(&bytes).expect("a journal renamed into place is whole"))
}

fn segment_path_of<B: Backend>(place: &B, journal_path: &str, segment: u64) -> String {
    let folder = journal_path.strip_suffix(&format!("/{JOURNAL_NAME}")).unwrap();
    let path = cheesedb_core::log::names::segment_path(folder, segment);
    assert!(place.segment_files().iter().any(|name| name.ends_with(&path)), "{path}");
    path
}

/// Puts back what every stretch the journal lists held before the erase, as if none of the
/// overwrites had reached the disk (the recall record written before them stays).
fn undo_overwrites<B: Backend>(interrupted: &Interrupted<B>) {
    let place = &interrupted.place;
    let (journal_path, journal) = journal_of(place);
    for overwrite in &journal.overwrites {
        let path = segment_path_of(place, &journal_path, overwrite.segment);
        let before = &interrupted.files_before.iter().find(|(candidate, _)| *candidate == path).unwrap().1;
        let mut bytes = place.read_file(&path);
        let range = overwrite.offset as usize..overwrite.end().unwrap() as usize;
        bytes[range.clone()].copy_from_slice(&before[range]);
        place.replace_file(&path, &bytes);
    }
}

/// Opens the agent and checks the erasure is complete and everything else intact.
fn check_finished<B: Backend>(interrupted: &Interrupted<B>) -> cheesedb::Report {
    let place = &interrupted.place;
    let store = place.open(options()).unwrap();
    let alice = store.open_agent(&interrupted.token).unwrap();
    assert_eq!(place.files_containing(CANARY), Vec::<String>::new());
    assert!(place.files().iter().all(|(path, _)| !path.contains(JOURNAL_NAME)), "the journal is removed");
    assert_eq!(alice.get(interrupted.lot).unwrap().content(), None);
    for id in &interrupted.doomed {
        let node = alice.get(*id).unwrap();
        assert!(!node.is_alive());
        assert_eq!(node.content(), None);
    }
    assert_eq!(alice.get(interrupted.survivor).unwrap().content(), Some(SURVIVOR));
    alice.verify().unwrap();
    let report = alice.report();
    assert_eq!(report.dropped_bytes, 0, "no committed byte is cut");
    alice.add_lot("after", b"written after the recovery").unwrap();
    report
}

fn the_journal_holds_no_erased_text_and_lists_both_segments<B: Backend>() {
    let interrupted = erase_stopped_before_removing_its_journal::<B>();
    assert_eq!(interrupted.place.files_containing(CANARY), Vec::<String>::new());
    let (_, journal) = journal_of(&interrupted.place);
    let segments: std::collections::BTreeSet<u64> =
        journal.overwrites.iter().map(|overwrite| overwrite.segment).collect();
    assert!(segments.len() >= 2, "{segments:?}");
    // One overwrite per record (up to its text, then zeros) and one per touched write (its
    // commit marker); every zero run covers text, so it is never stored.
    let records = journal.overwrites.iter().filter(|overwrite| overwrite.zeros > 0).count();
    assert_eq!(records, interrupted.doomed.len() + 1);
    assert!(journal.overwrites.len() > records);
}

fn torn_overwrites_are_finished_from_the_journal_before_any_segment_is_read<B: Backend>() {
    let interrupted = erase_stopped_before_removing_its_journal::<B>();
    let place = &interrupted.place;
    let (journal_path, journal) = journal_of(place);
    // Every stretch the erase overwrote is garbage now, as a crash in the middle could leave
    // it: commit markers of the active segment included, which open would otherwise take for
    // damage or for a torn write.
    for overwrite in &journal.overwrites {
        let path = segment_path_of(place, &journal_path, overwrite.segment);
        let mut bytes = place.read_file(&path);
        let start = overwrite.offset as usize;
        let end = overwrite.end().unwrap() as usize;
        bytes[start..end].iter_mut().enumerate().for_each(|(index, byte)| *byte = 0xa5 ^ index as u8);
        place.replace_file(&path, &bytes);
    }
    let report = check_finished(&interrupted);
    assert_eq!(report.erase_journals_replayed_on_open, 1);
    assert_eq!(report.erasures_completed_on_open, 0, "the journal did all of it");
}

fn a_journal_whose_overwrites_never_reached_the_disk_is_applied_at_open<B: Backend>() {
    let interrupted = erase_stopped_before_removing_its_journal::<B>();
    let place = &interrupted.place;
    undo_overwrites(&interrupted);
    assert!(!place.files_containing(CANARY).is_empty());
    let report = check_finished(&interrupted);
    assert_eq!(report.erase_journals_replayed_on_open, 1);
}

fn a_journal_that_is_not_whole_is_removed_and_the_erasure_done_again<B: Backend>() {
    let interrupted = erase_stopped_before_removing_its_journal::<B>();
    let place = &interrupted.place;
    let (journal_path, _) = journal_of(place);
    let mut torn = place.read_file(&journal_path);
    torn.truncate(torn.len() / 2);
    undo_overwrites(&interrupted);
    place.replace_file(&journal_path, &torn);
    let report = check_finished(&interrupted);
    assert_eq!(report.erase_journals_discarded_on_open, 1);
    assert_eq!(report.erasures_completed_on_open, interrupted.doomed.len() as u64 + 1);
}

cheesedb_tests::conformance!(
    the_journal_holds_no_erased_text_and_lists_both_segments,
    torn_overwrites_are_finished_from_the_journal_before_any_segment_is_read,
    a_journal_whose_overwrites_never_reached_the_disk_is_applied_at_open,
    a_journal_that_is_not_whole_is_removed_and_the_erasure_done_again,
);
