//! Erase takes the text off the disk before the call returns; Untrusted hides it until compact.

use cheesedb::{Error, Id, Leg, Mode, Removal, Store, Token};
use cheesedb_tests::files_containing;

const CANARY: &[u8] = b"canary-7f3a91-the-weather-tool-said-rain";
const DEPENDENT_CANARY: &[u8] = b"canary-c04e22-so-carry-an-umbrella";
const SURVIVOR: &[u8] = b"survivor-5d81-user-lives-in-pune";

struct Fixture {
    folder: tempfile::TempDir,
    token: Token,
    store: Store,
    lot: Id,
    dependent: Id,
    survivor: Id,
}

fn fixture() -> Fixture {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let user = alice.add_lot("user_message", b"I live in Pune").unwrap();
    let lot = alice.add_lot("weather_tool", CANARY).unwrap();
    let survivor = alice.remember(SURVIVOR, &[Leg::from([user])]).unwrap();
    let dependent = alice.remember(DEPENDENT_CANARY, &[Leg::from([lot, survivor])]).unwrap();
    Fixture { folder, token, store, lot, dependent, survivor }
}

#[test]
fn erase_removes_the_text_from_every_file_before_returning() {
    let fixture = fixture();
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    assert!(!files_containing(fixture.folder.path(), CANARY).is_empty());
    let removed = alice.recall(fixture.lot, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(removed, vec![fixture.dependent]);
    assert_eq!(files_containing(fixture.folder.path(), CANARY), Vec::<std::path::PathBuf>::new());
    assert_eq!(files_containing(fixture.folder.path(), DEPENDENT_CANARY), Vec::<std::path::PathBuf>::new());
    assert_eq!(files_containing(fixture.folder.path(), SURVIVOR).len(), 1, "alive memories keep their text");
    assert_eq!(alice.get(fixture.lot).unwrap().content(), None);
    assert_eq!(alice.get(fixture.dependent).unwrap().content(), None);
    assert_eq!(alice.get(fixture.survivor).unwrap().content(), Some(SURVIVOR));
    let fingerprint = alice.verify().unwrap();

    drop(alice);
    drop(fixture.store);
    let store = Store::open(fixture.folder.path()).unwrap();
    let alice = store.open_agent(&fixture.token).unwrap();
    assert_eq!(alice.verify().unwrap(), fingerprint, "the chain still verifies after erasure");
    assert!(files_containing(fixture.folder.path(), CANARY).is_empty());
    assert_eq!(alice.get(fixture.lot).unwrap().content(), None);
}

#[test]
fn untrusted_hides_now_and_a_later_erase_removes_the_text() {
    let fixture = fixture();
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.lot, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(alice.memories().unwrap(), vec![fixture.survivor]);
    assert_eq!(files_containing(fixture.folder.path(), CANARY).len(), 1, "Untrusted leaves the text");

    let removed = alice.recall(fixture.lot, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(removed, Vec::<Id>::new());
    assert!(files_containing(fixture.folder.path(), CANARY).is_empty());
    assert!(files_containing(fixture.folder.path(), DEPENDENT_CANARY).is_empty(), "dead descendants go too");
    assert_eq!(files_containing(fixture.folder.path(), SURVIVOR).len(), 1);
    alice.verify().unwrap();
}

#[test]
fn compact_removes_the_text_of_every_recalled_node() {
    let fixture = fixture();
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.lot, Mode::Fair, Removal::Untrusted).unwrap();
    let fingerprint = alice.verify().unwrap();
    alice.compact().unwrap();
    assert!(files_containing(fixture.folder.path(), CANARY).is_empty());
    assert!(files_containing(fixture.folder.path(), DEPENDENT_CANARY).is_empty());
    assert_eq!(files_containing(fixture.folder.path(), SURVIVOR).len(), 1);
    assert_eq!(alice.verify().unwrap(), fingerprint, "compaction does not change the history");
    assert!(!alice.get(fixture.lot).unwrap().is_alive());
    assert_eq!(alice.get(fixture.lot).unwrap().content(), None);
}

#[test]
fn erase_leaves_no_temporary_file_behind() {
    let fixture = fixture();
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.lot, Mode::Strict, Removal::Erase).unwrap();
    let leftovers: Vec<_> = cheesedb_tests::all_files(fixture.folder.path())
        .into_iter()
        .filter(|(path, _)| path.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn erase_across_sealed_segments_and_writes_after_it_still_work() {
    let folder = tempfile::tempdir().unwrap();
    let options = cheesedb::Options { segment_size_max_bytes: 4096, ..cheesedb::Options::default() };
    let store = Store::open_with_options(folder.path(), options.clone()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let lot = alice.add_lot("source", CANARY).unwrap();
    let mut memories = Vec::new();
    for index in 0..60 {
        let text = format!("{}-{index}", String::from_utf8_lossy(DEPENDENT_CANARY));
        memories.push(alice.remember(text.as_bytes(), &[Leg::from([lot])]).unwrap());
    }
    assert!(alice.report().segments >= 3, "the test needs several segments");
    assert_eq!(alice.recall(lot, Mode::Fair, Removal::Erase).unwrap(), memories);
    assert!(files_containing(folder.path(), CANARY).is_empty());
    assert!(files_containing(folder.path(), DEPENDENT_CANARY).is_empty());
    let after = alice.add_lot("later", b"written after the erasure").unwrap();
    let fingerprint = alice.verify().unwrap();
    drop(alice);
    drop(store);
    let store = Store::open_with_options(folder.path(), options).unwrap();
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(alice.verify().unwrap(), fingerprint);
    assert_eq!(alice.get(after).unwrap().content(), Some(&b"written after the erasure"[..]));
    assert_eq!(alice.recall(lot, Mode::Fair, Removal::Untrusted), Err(Error::AlreadyRecalled { id: lot }));
}
