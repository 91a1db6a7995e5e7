//! Copies of an encrypted agent's segments taken before an Erase do not give the erased text
//! back, to someone who holds the token and every file of the folder after the Erase: the test
//! tries every key those yield on every sealed record of the old copies and of the current
//! files, and the same attempt does open what was not erased. And what the design cannot
//! cover, shown rather than claimed: a copy of the key table or of the epoch file taken before
//! the Erase (so a copy of the whole folder) opens the erased text again with the token. On
//! every backend.

use cheesedb::{Id, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_core::log::names::{agent_folder, epochs_path, key_table_path};
use cheesedb_tests::backend::Backend;
use cheesedb_tests::key_recovery::{any_holds, Keys, Opened};

/// The store's first agent: the encrypted one.
const AGENT: u64 = 1;

const ERASED_LOT: &[u8] = b"erased-7c1f the user's diagnosis, from a tool";
const ERASED_MEMORY: &[u8] = b"erased-0b9e the user is being treated";
const ERASED_VECTOR: [f32; 3] = [-46.250_435, -6.635_432, -43.014_458];
const KEPT_LOT: &[u8] = b"kept-4d2a the user lives in Pune";
const KEPT_MEMORY: &[u8] = b"kept-e610 the user cycles to work";
const KEPT_VECTOR: [f32; 3] = [-4.762_044_4, 5.977_238_7, 42.421_06];
const AFTER: &[u8] = b"after-92c3 written after the erase";

/// Small segments, so the old copies hold several.
fn options() -> Options {
    Options::default().segment_size_max_bytes(4096)
}

fn bytes_of(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|number| number.to_le_bytes()).collect()
}

/// The agent's files in `place`: its segments, key table and epoch file.
struct AgentFiles {
    segments: Vec<Vec<u8>>,
    key_table: Vec<u8>,
    epochs: Vec<u8>,
}

fn agent_files<B: Backend>(place: &B) -> AgentFiles {
    let folder = agent_folder(AGENT);
    let segments = place
        .files()
        .into_iter()
        .filter(|(path, _)| path.starts_with(&folder) && path.ends_with(".log"))
        .map(|(_, bytes)| bytes)
        .collect();
    let key_table = place.read_file(&key_table_path(&folder));
    let epochs = place.read_file(&epochs_path(&folder));
    AgentFiles { segments, key_table, epochs }
}

/// Every sealed record of `segments` that the keys of `key_table` and `epochs` (either may be
/// left out) and the token open.
fn attack(token: &Token, segments: &[Vec<u8>], key_table: Option<&[u8]>, epochs: Option<&[u8]>) -> Vec<Opened> {
    let mut keys = Keys::from_token(token);
    if let Some(key_table) = key_table {
        keys.add_key_table(token, AGENT, key_table);
    }
    if let Some(epochs) = epochs {
        keys.add_epochs(token, AGENT, epochs);
    }
    keys.open_all(AGENT, segments)
}

fn assert_nothing_erased(opened: &[Opened], what: &str) {
    for (needle, name) in
        [(ERASED_LOT.to_vec(), "lot"), (ERASED_MEMORY.to_vec(), "memory"), (bytes_of(&ERASED_VECTOR), "vector")]
    {
        assert!(!any_holds(opened, &needle), "{what}: the erased {name} came out");
    }
}

fn assert_all_erased_opened(opened: &[Opened], what: &str) {
    for (needle, name) in
        [(ERASED_LOT.to_vec(), "lot"), (ERASED_MEMORY.to_vec(), "memory"), (bytes_of(&ERASED_VECTOR), "vector")]
    {
        assert!(any_holds(opened, &needle), "{what}: the erased {name} should come out");
    }
}

/// An encrypted agent holding what will be erased, what will be kept, and enough fillers for
/// several segments; and a copy of the whole place taken then.
struct Fixture<B: Backend> {
    place: B,
    before: B,
    token: Token,
    store: Store<B::Storage>,
    doomed: Id,
}

impl<B: Backend> Fixture<B> {
    fn new() -> Fixture<B> {
        let place = B::new();
        let store = place.open(options()).unwrap();
        let token = store.create_encrypted_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        let kept = alice.add_lot("user_message", KEPT_LOT).unwrap();
        let doomed = alice.add_lot("health_tool", ERASED_LOT).unwrap();
        let kept_memory = alice.remember(KEPT_MEMORY, &[Leg::from([kept])]).unwrap();
        let doomed_memory = alice.remember(ERASED_MEMORY, &[Leg::from([doomed, kept])]).unwrap();
        alice.set_vector(kept_memory, &KEPT_VECTOR).unwrap();
        alice.set_vector(doomed_memory, &ERASED_VECTOR).unwrap();
        for index in 0..30 {
            let source = if index % 2 == 0 { kept } else { doomed };
            alice.remember(format!("filler {index}").as_bytes(), &[Leg::from([source])]).unwrap();
        }
        assert!(alice.report().segments >= 3, "the copies hold several segments");
        // Everything reads back before the Erase, and the attack opens it all: the test can
        // tell an opened record from one that does not open.
        assert_eq!(alice.get(doomed).unwrap().content(), Some(ERASED_LOT));
        let now = agent_files(&place);
        let opened = attack(&token, &now.segments, Some(&now.key_table), Some(&now.epochs));
        assert_all_erased_opened(&opened, "before the Erase");
        // The copy is of a closed store, so that every slot written is in the key table copied
        // (a running agent's slots reach the file at the latest when it closes).
        drop((alice, store));
        let before = place.duplicate();
        let store = place.open(options()).unwrap();
        Fixture { place, before, token, store, doomed }
    }

    fn erase(&self) {
        let alice = self.store.open_agent(&self.token).unwrap();
        alice.recall(self.doomed, Mode::Fair, Removal::Erase).unwrap();
        assert_eq!(alice.get(self.doomed).unwrap().content(), None);
        alice.add_lot("user_message", AFTER).unwrap();
    }
}

fn old_segment_copies_with_the_token_and_the_current_folder_do_not_open_the_erased_text<B: Backend>() {
    let fixture = Fixture::<B>::new();
    fixture.erase();
    let old = agent_files(&fixture.before);
    let now = agent_files(&fixture.place);
    let segments: Vec<Vec<u8>> = old.segments.iter().chain(&now.segments).cloned().collect();

    let opened = attack(&fixture.token, &segments, Some(&now.key_table), Some(&now.epochs));
    assert_nothing_erased(&opened, "old segments, current key files");
    // The same attempt opens what was kept, in the old copies and the current files alike.
    for (needle, name) in [
        (KEPT_LOT.to_vec(), "kept lot"),
        (KEPT_MEMORY.to_vec(), "kept memory"),
        (bytes_of(&KEPT_VECTOR), "kept vector"),
        (AFTER.to_vec(), "write after the Erase"),
    ] {
        assert!(any_holds(&opened, &needle), "the attack should open the {name}");
    }
    let opened_old = attack(&fixture.token, &old.segments, Some(&now.key_table), Some(&now.epochs));
    assert!(any_holds(&opened_old, KEPT_LOT), "the old copies alone open with the current key table");

    // The epoch file alone opens what was written under the epoch in force, and nothing erased.
    let by_epochs = attack(&fixture.token, &segments, None, Some(&now.epochs));
    assert!(any_holds(&by_epochs, AFTER), "the epoch in force opens the write after the Erase");
    assert!(!any_holds(&by_epochs, KEPT_LOT), "the epoch before the Erase is destroyed");
    assert_nothing_erased(&by_epochs, "old segments, current epoch file");
}

/// The stated limit: a copy of a key file taken before the Erase holds the keys the Erase
/// destroyed. With the token, the old key table opens the erased nodes' slots; the old epoch
/// file opens the epoch key that sealed each record's own copy of its secret. So a copy of the
/// whole folder (a backup of it) plus the token gives the erased text back.
fn old_key_files_with_the_token_open_the_erased_text_the_limit_of_the_design<B: Backend>() {
    let fixture = Fixture::<B>::new();
    fixture.erase();
    let old = agent_files(&fixture.before);
    let now = agent_files(&fixture.place);

    let whole_old_folder = attack(&fixture.token, &old.segments, Some(&old.key_table), Some(&old.epochs));
    assert_all_erased_opened(&whole_old_folder, "the whole old folder");
    let old_key_table = attack(&fixture.token, &old.segments, Some(&old.key_table), Some(&now.epochs));
    assert_all_erased_opened(&old_key_table, "the old key table");
    let old_epochs = attack(&fixture.token, &old.segments, Some(&now.key_table), Some(&old.epochs));
    assert_all_erased_opened(&old_epochs, "the old epoch file");
    // Opened as a store, the old copy is simply the agent before the Erase.
    let store = fixture.before.open(options()).unwrap();
    let alice = store.open_agent(&fixture.token).unwrap();
    assert_eq!(alice.get(fixture.doomed).unwrap().content(), Some(ERASED_LOT));
    // Without the token, none of it opens.
    let stranger = Token::from_bytes([0x33; 32]);
    let guessed = attack(&stranger, &old.segments, Some(&old.key_table), Some(&old.epochs));
    assert!(guessed.is_empty(), "{} records opened without the token", guessed.len());
}

/// Copies taken before each of two Erases: neither erased text comes out of any of them with
/// the current folder; a whole-folder copy taken between the two gives back only what the
/// second Erase took, never what the first had destroyed already.
fn copies_from_before_each_of_two_erases_open_neither<B: Backend>() {
    let fixture = Fixture::<B>::new();
    let second_text = b"erased-second-51aa the user's new address";
    let second = {
        let alice = fixture.store.open_agent(&fixture.token).unwrap();
        alice.add_lot("web_page", second_text).unwrap()
    };
    let first_copy = fixture.place.duplicate();
    fixture.erase();
    let between = fixture.place.duplicate();
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(second, Mode::Fair, Removal::Erase).unwrap();
    alice.add_lot("user_message", b"written after both").unwrap();

    let now = agent_files(&fixture.place);
    let mut segments = now.segments.clone();
    for copy in [agent_files(&fixture.before), agent_files(&first_copy), agent_files(&between)] {
        segments.extend(copy.segments);
    }
    let opened = attack(&fixture.token, &segments, Some(&now.key_table), Some(&now.epochs));
    assert_nothing_erased(&opened, "copies from before both Erases");
    assert!(!any_holds(&opened, second_text), "the second erased text came out");
    assert!(any_holds(&opened, KEPT_LOT) && any_holds(&opened, b"written after both"));

    let between = agent_files(&between);
    let whole_copy_between = attack(&fixture.token, &segments, Some(&between.key_table), Some(&between.epochs));
    assert!(any_holds(&whole_copy_between, second_text), "the limit: the copy holds the second text's keys");
    assert_nothing_erased(&whole_copy_between, "a whole copy taken after the first Erase");
}

cheesedb_tests::conformance!(
    old_segment_copies_with_the_token_and_the_current_folder_do_not_open_the_erased_text,
    old_key_files_with_the_token_open_the_erased_text_the_limit_of_the_design,
    copies_from_before_each_of_two_erases_open_neither,
);
