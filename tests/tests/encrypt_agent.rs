//! Encrypting a plaintext agent (`Store::encrypt_agent`): every node reads as before, what was
//! erased or compacted stays gone, search and verify work, the token keeps working and the
//! fingerprint changes; no byte of the plaintext is left in any file. On every backend, and on
//! the simulator through a crash at every storage operation of the conversion (and a second one
//! while the store reopens): the agent is always whole, plaintext or encrypted, never lost.

use std::sync::{Arc, Mutex};

use cheesedb::{
    Error, Id, Leg, Mode, NameKind, Node, NodeKind, Options, ReadSet, Removal, SharedStorage, Storage, StorageFile,
    Store, Token,
};
use cheesedb_sim::storage::SimStorage;
use cheesedb_tests::backend::{contains, Backend};
use cheesedb_tests::conformance;

/// Texts that only the plaintext agent ever held: none may be in a file once it is encrypted.
const CANARIES: [&[u8]; 5] = [
    b"canary-5e1f-alpha lives in Pune",
    b"canary-77b0-beta hidden web page",
    b"canary-a3c9-gamma derived memory",
    b"canary-0d42-delta compacted away",
    b"label-canary-91fe",
];

/// `inner`, noting every file that, when it was removed or renamed over, still held one of the
/// canaries: its blocks would then be free blocks holding plaintext.
#[derive(Debug, Clone)]
struct FreedBlocks<S> {
    inner: S,
    with_plaintext: Arc<Mutex<Vec<String>>>,
}

impl<S: Storage> FreedBlocks<S> {
    fn new(inner: S) -> FreedBlocks<S> {
        FreedBlocks { inner, with_plaintext: Arc::default() }
    }

    /// The files freed while they held plaintext.
    fn freed_with_plaintext(&self) -> Vec<String> {
        self.with_plaintext.lock().unwrap().clone()
    }

    /// Notes `path` if the bytes about to be freed there hold a canary.
    fn look_at(&self, path: &str) {
        let Ok(file) = self.inner.open_file(path, false) else { return };
        let Ok(length) = file.len() else { return };
        let mut bytes = vec![0u8; usize::try_from(length).unwrap()];
        if file.read_at(0, &mut bytes).is_ok() && CANARIES.iter().any(|canary| contains(&bytes, canary)) {
            self.with_plaintext.lock().unwrap().push(path.to_string());
        }
    }
}

impl<S: Storage> Storage for FreedBlocks<S> {
    type File = S::File;
    type Error = S::Error;

    fn open_file(&self, path: &str, create: bool) -> Result<S::File, S::Error> {
        self.inner.open_file(path, create)
    }
    fn exists(&self, path: &str) -> Result<bool, S::Error> {
        self.inner.exists(path)
    }
    fn holds(&self, path: &str, kind: NameKind) -> Result<bool, S::Error> {
        self.inner.holds(path, kind)
    }
    fn list(&self, folder: &str) -> Result<Vec<String>, S::Error> {
        self.inner.list(folder)
    }
    fn create_folder(&self, path: &str) -> Result<(), S::Error> {
        self.inner.create_folder(path)
    }
    fn remove_folder(&self, path: &str) -> Result<(), S::Error> {
        self.inner.remove_folder(path)
    }
    fn rename(&self, from: &str, to: &str) -> Result<(), S::Error> {
        self.look_at(to);
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &str) -> Result<(), S::Error> {
        self.look_at(path);
        self.inner.remove_file(path)
    }
    fn sync_folder(&self, folder: &str) -> Result<(), S::Error> {
        self.inner.sync_folder(folder)
    }
    fn fill_random(&self, out: &mut [u8]) -> Result<(), S::Error> {
        self.inner.fill_random(out)
    }
}

/// A plaintext agent "alice" with every kind of record (lots, memories with two legs and with
/// tracked parents, vectors, a recall that hides, one that erases, a compaction), and an
/// agent "bob" beside it. Returns their tokens.
fn write_history<S: SharedStorage>(store: &Store<S>) -> (Token, Token) {
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let a = alice.add_lot("label-canary-91fe", CANARIES[0]).unwrap();
    let b = alice.add_lot("web_page", CANARIES[1]).unwrap();
    let c = alice.add_lot("weather_tool", b"rain over the city").unwrap();
    let m1 = alice.remember(CANARIES[2], &[Leg::from([a])]).unwrap();
    let m2 = alice.remember(b"umbrella weather memory", &[Leg::from([b]), Leg::from([c])]).unwrap();
    let mut reads = ReadSet::new();
    reads.note(c);
    alice.remember_tracked(b"tracked rain memory", &[Leg::from([m2])], &reads).unwrap();
    alice.set_vector(c, &[1.0, 0.0]).unwrap();
    alice.set_vector(m2, &[0.0, 1.0]).unwrap();
    alice.set_vector(m1, &[0.6, 0.8]).unwrap();
    let d = alice.add_lot("temporary", CANARIES[3]).unwrap();
    alice.recall(d, Mode::Fair, Removal::Untrusted).unwrap();
    alice.compact().unwrap();
    alice.recall(b, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(alice.recall(a, Mode::Strict, Removal::Erase).unwrap(), [m1]);
    alice.batch(|batch| batch.add_lot("batched", b"written in a batch")).unwrap();
    let bob = store.create_agent("bob").unwrap();
    store.open_agent(&bob).unwrap().add_lot("note", b"bob's own words").unwrap();
    (token, bob)
}

/// Every node of the agent as `audit` shows it. With `as_encrypted`, a lot whose content is
/// gone shows no label: an encrypted agent keeps labels inside the sealed bytes, so the label of
/// a lot erased or compacted before the conversion is gone with its content.
fn every_node<S: SharedStorage>(store: &Store<S>, token: &Token, as_encrypted: bool) -> Vec<Node> {
    let agent = store.open_agent(token).unwrap();
    let mut ids: Vec<Id> = agent.lots().unwrap();
    ids.extend(agent.memories().unwrap());
    let count = ids.iter().map(|id| id.get()).max().unwrap_or(0) + 2;
    (1..=count)
        .map_while(|id| agent.audit(Id::from(id)).ok())
        .map(|mut node| {
            if as_encrypted && node.content().is_none() {
                if let NodeKind::Lot { label } = &mut node.kind {
                    label.clear();
                }
            }
            node
        })
        .collect()
}

/// What alice must show after the conversion, and what search finds.
struct Expected {
    plaintext: Vec<Node>,
    encrypted: Vec<Node>,
}

fn expected<S: SharedStorage>(store: &Store<S>, token: &Token) -> Expected {
    Expected { plaintext: every_node(store, token, false), encrypted: every_node(store, token, true) }
}

/// Checks that alice is whole and encrypted, searches and verifies, and that bob is untouched.
fn assert_encrypted_whole<S: SharedStorage>(store: &Store<S>, token: &Token, bob: &Token, expected: &Expected) {
    assert!(store.is_encrypted("alice").unwrap());
    assert!(!store.is_encrypted("bob").unwrap());
    assert_eq!(store.agent_names().unwrap(), ["alice", "bob"]);
    assert_eq!(every_node(store, token, true), expected.encrypted);
    let alice = store.open_agent(token).unwrap();
    assert!(alice.is_encrypted());
    alice.verify().unwrap();
    let mut found: Vec<u64> = alice.search("rain", 10).unwrap().iter().map(|hit| hit.id.get()).collect();
    found.sort_unstable();
    assert_eq!(found, [3, 6]);
    assert_eq!(alice.search_vector(&[0.0, 1.0], 1).unwrap().first().map(|hit| hit.id.get()), Some(5));
    assert_eq!(store.open_agent(bob).unwrap().get(Id::from(1)).unwrap().content(), Some(&b"bob's own words"[..]));
}

fn every_node_reads_the_same_and_no_plaintext_stays<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let (token, bob) = write_history(&store);
    let expected = expected(&store, &token);
    let kept = store.open_agent(&token).unwrap().verify().unwrap();
    assert!(!place.files_containing(CANARIES[1]).is_empty(), "the hidden text is in the plaintext files");

    drop(store);
    // The conversion runs through a storage that sees what every removed file held.
    let watched = FreedBlocks::new(place.storage());
    let store = Store::open_with(watched.clone(), Options::default()).unwrap();
    let head = store.encrypt_agent(&token).unwrap();
    assert_eq!(watched.freed_with_plaintext(), Vec::<String>::new(), "plaintext left in free blocks");
    assert_ne!(head, kept, "the history is chained anew");
    assert_eq!(store.open_agent(&token).unwrap().verify().unwrap(), head);
    assert_encrypted_whole(&store, &token, &bob, &expected);
    for canary in CANARIES {
        assert_eq!(place.files_containing(canary), Vec::<String>::new(), "{}", String::from_utf8_lossy(canary));
    }

    // It goes on as an encrypted agent, through a reopen.
    let alice = store.open_agent(&token).unwrap();
    let later = alice.add_lot("later", b"canary-61aa written after").unwrap();
    assert!(place.files_containing(b"canary-61aa").is_empty());
    let now = every_node(&store, &token, true);
    drop((alice, store));
    let store = place.open(Options::default()).unwrap();
    assert_eq!(every_node(&store, &token, true), now);
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(alice.get(later).unwrap().content(), Some(&b"canary-61aa written after"[..]));
    alice.verify().unwrap();
}

fn an_open_agent_an_encrypted_one_and_a_wrong_token_are_refused<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    alice.add_lot("note", b"canary-3b7d still plaintext").unwrap();
    assert_eq!(store.encrypt_agent(&token), Err(Error::AgentInUse { name: String::from("alice") }));
    assert!(!alice.is_encrypted());
    drop(alice);
    assert_eq!(store.encrypt_agent(&Token::from_bytes([9; 32])), Err(Error::UnknownToken));
    store.encrypt_agent(&token).unwrap();
    assert_eq!(store.encrypt_agent(&token), Err(Error::AlreadyEncrypted { name: String::from("alice") }));
    let sealed = store.create_encrypted_agent("bob").unwrap();
    assert_eq!(store.encrypt_agent(&sealed), Err(Error::AlreadyEncrypted { name: String::from("bob") }));
    assert!(place.files_containing(b"canary-3b7d").is_empty());
}

conformance!(
    every_node_reads_the_same_and_no_plaintext_stays,
    an_open_agent_an_encrypted_one_and_a_wrong_token_are_refused,
);

#[test]
fn a_read_only_store_refuses_to_encrypt() {
    let folder = tempfile::tempdir().unwrap();
    let token = Store::open(folder.path()).unwrap().create_agent("alice").unwrap();
    let read_only = Store::builder(folder.path()).read_only(true).open().unwrap();
    assert_eq!(read_only.encrypt_agent(&token), Err(Error::ReadOnly));
    assert!(!read_only.is_encrypted("alice").unwrap());
}

/// Whether any image of any file (every one a crash could leave) holds one of the canaries.
fn plaintext_anywhere(storage: &SimStorage) -> bool {
    let mut found = false;
    storage.visit_images(|_, bytes| found |= CANARIES.iter().any(|canary| contains(bytes, canary)));
    found
}

/// How many agent folders the disk holds.
fn agent_folders(storage: &SimStorage) -> usize {
    let mut folders: Vec<String> = storage
        .file_paths()
        .into_iter()
        .filter_map(|path| path.split_once('/').map(|(folder, _)| folder.to_string()))
        .filter(|folder| folder.starts_with("agent-"))
        .collect();
    folders.dedup();
    folders.len()
}

/// The simulated disk of one crash state, and the same disk seen through [`FreedBlocks`].
struct CrashState {
    disk: SimStorage,
    watched: FreedBlocks<SimStorage>,
}

impl CrashState {
    fn open(&self) -> Result<Store<FreedBlocks<SimStorage>>, Error> {
        Store::open_with(self.watched.clone(), Options::default())
    }

    /// Opens the store after a crash; with `crash_again_after`, the power goes once more after
    /// that many storage operations of the open (which removes what the conversion left), and
    /// the store is opened a third time.
    fn reopen_after_crash(&self, crash_again_after: Option<u64>) -> Store<FreedBlocks<SimStorage>> {
        if let Some(operations) = crash_again_after {
            self.disk.arm_crash(operations);
            let opened = self.open();
            let crashed = self.disk.is_powered_off();
            self.disk.disarm_crash();
            match opened {
                Ok(store) if !crashed => return store,
                _ => self.disk.crash(),
            }
        }
        self.open().unwrap()
    }

    /// Checks that no file was freed holding plaintext and that no image of any file a crash
    /// could leave holds any.
    fn assert_no_plaintext(&self, point: u64) {
        assert_eq!(self.watched.freed_with_plaintext(), Vec::<String>::new(), "freed with plaintext, at {point}");
        assert!(!plaintext_anywhere(&self.disk), "plaintext in a file, at {point}");
    }
}

#[test]
fn a_crash_at_every_step_of_the_conversion_leaves_the_agent_whole() {
    let origin = SimStorage::without_faults(0x00e4_c7a9);
    let (token, bob, expected) = {
        let store = Store::open_with(origin.clone(), Options::default()).unwrap();
        let (token, bob) = write_history(&store);
        let expected = expected(&store, &token);
        (token, bob, expected)
    };
    let (mut plaintext_states, mut encrypted_states) = (0, 0);
    let mut point = 0u64;
    loop {
        let disk = origin.fork();
        let state = CrashState { watched: FreedBlocks::new(disk.clone()), disk };
        let store = state.open().unwrap();
        state.disk.arm_crash(point);
        let outcome = store.encrypt_agent(&token);
        let crashed = state.disk.is_powered_off();
        state.disk.disarm_crash();
        drop(store);
        if !crashed {
            // The conversion ran to its end: the plaintext is gone from every image of every
            // file, never left in free blocks, and stays gone through a crash right after.
            let head = outcome.unwrap();
            state.assert_no_plaintext(point);
            state.disk.crash();
            let store = state.reopen_after_crash(None);
            assert_encrypted_whole(&store, &token, &bob, &expected);
            assert_eq!(store.open_agent(&token).unwrap().verify().unwrap(), head);
            state.assert_no_plaintext(point);
            break;
        }
        assert!(outcome.is_err(), "a conversion that lost its power reported success, at {point}");
        state.disk.crash();
        let store = state.reopen_after_crash(Some(point % 11 * 3));
        assert_eq!(agent_folders(&state.disk), 2, "the open removed what the crash left, at {point}");
        if store.is_encrypted("alice").unwrap() {
            encrypted_states += 1;
            assert_encrypted_whole(&store, &token, &bob, &expected);
            state.assert_no_plaintext(point);
        } else {
            plaintext_states += 1;
            assert_eq!(every_node(&store, &token, false), expected.plaintext, "at {point}");
            store.open_agent(&token).unwrap().verify().unwrap();
            // A conversion after the crash succeeds.
            store.encrypt_agent(&token).unwrap();
            assert_encrypted_whole(&store, &token, &bob, &expected);
            state.assert_no_plaintext(point);
        }
        point += 1;
    }
    assert!(plaintext_states > 20, "{plaintext_states} crash states before the switch");
    assert!(encrypted_states > 5, "{encrypted_states} crash states after the switch");
}
