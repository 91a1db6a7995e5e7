//! Erase takes the text off the disk before the call returns; Untrusted hides it until compact.
//! On every backend, and for the simulator in every image of a file a crash could leave.

use cheesedb::{Error, Id, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_tests::backend::Backend;

const CANARY: &[u8] = b"canary-7f3a91-the-weather-tool-said-rain";
const DEPENDENT_CANARY: &[u8] = b"canary-c04e22-so-carry-an-umbrella";
const SURVIVOR: &[u8] = b"survivor-5d81-user-lives-in-pune";

struct Fixture<B: Backend> {
    place: B,
    token: Token,
    store: Store<B::Storage>,
    lot: Id,
    dependent: Id,
    survivor: Id,
}

fn fixture<B: Backend>() -> Fixture<B> {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let user = alice.add_lot("user_message", b"I live in Pune").unwrap();
    let lot = alice.add_lot("weather_tool", CANARY).unwrap();
    let survivor = alice.remember(SURVIVOR, &[Leg::from([user])]).unwrap();
    let dependent = alice.remember(DEPENDENT_CANARY, &[Leg::from([lot, survivor])]).unwrap();
    Fixture { place, token, store, lot, dependent, survivor }
}

fn erase_removes_the_text_from_every_file_before_returning<B: Backend>() {
    let fixture = fixture::<B>();
    let place = &fixture.place;
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    assert!(!place.files_containing(CANARY).is_empty());
    let removed = alice.recall(fixture.lot, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(removed, vec![fixture.dependent]);
    assert_eq!(place.files_containing(CANARY), Vec::<String>::new());
    assert_eq!(place.files_containing(DEPENDENT_CANARY), Vec::<String>::new());
    assert_eq!(place.files_containing(SURVIVOR).len(), 1, "alive memories keep their text");
    assert_eq!(alice.get(fixture.lot).unwrap().content(), None);
    assert_eq!(alice.get(fixture.dependent).unwrap().content(), None);
    assert_eq!(alice.get(fixture.survivor).unwrap().content(), Some(SURVIVOR));
    let fingerprint = alice.verify().unwrap();

    drop(alice);
    drop(fixture.store);
    let store = place.open(Options::default()).unwrap();
    let alice = store.open_agent(&fixture.token).unwrap();
    assert_eq!(alice.verify().unwrap(), fingerprint, "the chain still verifies after erasure");
    assert!(place.files_containing(CANARY).is_empty());
    assert_eq!(alice.get(fixture.lot).unwrap().content(), None);
}

fn untrusted_hides_now_and_a_later_erase_removes_the_text<B: Backend>() {
    let fixture = fixture::<B>();
    let place = &fixture.place;
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.lot, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(alice.memories().unwrap(), vec![fixture.survivor]);
    assert_eq!(place.files_containing(CANARY).len(), 1, "Untrusted leaves the text");

    let removed = alice.recall(fixture.lot, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(removed, Vec::<Id>::new());
    assert!(place.files_containing(CANARY).is_empty());
    assert!(place.files_containing(DEPENDENT_CANARY).is_empty(), "dead descendants go too");
    assert_eq!(place.files_containing(SURVIVOR).len(), 1);
    alice.verify().unwrap();
}

fn compact_removes_the_text_of_every_recalled_node<B: Backend>() {
    let fixture = fixture::<B>();
    let place = &fixture.place;
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.lot, Mode::Fair, Removal::Untrusted).unwrap();
    let fingerprint = alice.verify().unwrap();
    alice.compact().unwrap();
    assert!(place.files_containing(CANARY).is_empty());
    assert!(place.files_containing(DEPENDENT_CANARY).is_empty());
    assert_eq!(place.files_containing(SURVIVOR).len(), 1);
    assert_eq!(alice.verify().unwrap(), fingerprint, "compaction does not change the history");
    assert!(!alice.get(fixture.lot).unwrap().is_alive());
    assert_eq!(alice.get(fixture.lot).unwrap().content(), None);
}

fn erase_leaves_no_temporary_file_behind<B: Backend>() {
    let fixture = fixture::<B>();
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.lot, Mode::Strict, Removal::Erase).unwrap();
    let leftovers: Vec<String> =
        fixture.place.files().into_iter().map(|(path, _)| path).filter(|path| path.ends_with(".tmp")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn erase_across_sealed_segments_and_writes_after_it_still_work<B: Backend>() {
    let place = B::new();
    let options = Options::default().segment_size_max_bytes(4096);
    let store = place.open(options.clone()).unwrap();
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
    assert!(place.files_containing(CANARY).is_empty());
    assert!(place.files_containing(DEPENDENT_CANARY).is_empty());
    let after = alice.add_lot("later", b"written after the erasure").unwrap();
    let fingerprint = alice.verify().unwrap();
    drop(alice);
    drop(store);
    let store = place.open(options).unwrap();
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(alice.verify().unwrap(), fingerprint);
    assert_eq!(alice.get(after).unwrap().content(), Some(&b"written after the erasure"[..]));
    assert_eq!(alice.recall(lot, Mode::Fair, Removal::Untrusted), Err(Error::AlreadyRecalled { id: lot }));
}

cheesedb_tests::conformance!(
    erase_removes_the_text_from_every_file_before_returning,
    untrusted_hides_now_and_a_later_erase_removes_the_text,
    compact_removes_the_text_of_every_recalled_node,
    erase_leaves_no_temporary_file_behind,
    erase_across_sealed_segments_and_writes_after_it_still_work,
);
