//! What an encrypted agent is given (a content, a lot's label, a vector) is found in no file of
//! the store at any moment: after every kind of write, searches, snapshots, compaction, Erase,
//! verify, a crash and reopen. A plaintext agent beside it keeps its text in the clear, which
//! shows the byte search would find a leak. On every backend; for the simulator the search
//! covers every image of a file that a crash could leave.

use cheesedb::{Agent, Id, Leg, Mode, NodeKind, Options, ReadSet, Removal, StagedBatch, Store, Token};
use cheesedb_tests::backend::Backend;

/// A lot label that must never show.
const LABEL: &str = "label-canary-4be1-private-tool";
/// A second one, written in a batch.
const BATCH_LABEL: &str = "label-canary-77c0-batched-tool";
/// A third, written in a staged batch.
const STAGED_LABEL: &str = "label-canary-e3a9-staged-tool";
/// A word in every canary text, for keyword search.
const WORD: &str = "quokkavault";
/// Vectors whose bytes are found nowhere by chance.
const VECTOR: [f32; 4] = [-17.616_724, -34.915_08, 15.093_448, -42.756_37];
const BATCH_VECTOR: [f32; 4] = [3.588_200_3, -13.431_108, -44.200_108, 0.743_573_3];
/// What the plaintext agent beside it writes: this one must show.
const PLAINTEXT: &[u8] = b"plaintext-5a0c-bob-keeps-this-in-the-clear";

/// Small segments (several seals and rolls) and frequent snapshots.
fn options() -> Options {
    Options::default().segment_size_max_bytes(4096).snapshot_after_bytes(2048)
}

/// A canary text for one kind of write.
fn canary(what: &str) -> Vec<u8> {
    format!("canary-{what}-9d3c {WORD} the user has a rare condition").into_bytes()
}

fn bytes_of(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|number| number.to_le_bytes()).collect()
}

/// Everything written to the encrypted agent that must never be found, with its id.
#[derive(Default)]
struct Written {
    texts: Vec<(Id, Vec<u8>)>,
    labels: Vec<&'static str>,
    vectors: Vec<Vec<f32>>,
}

impl Written {
    /// The byte strings a search must not find: each text whole and in its first 24 bytes, each
    /// label, each vector whole and each pair of its numbers.
    fn needles(&self) -> Vec<Vec<u8>> {
        let mut needles = Vec::new();
        for (_, text) in &self.texts {
            needles.push(text.clone());
        }
        needles.push(b"canary-".to_vec());
        needles.push(WORD.as_bytes().to_vec());
        needles.extend(self.labels.iter().map(|label| label.as_bytes().to_vec()));
        for vector in &self.vectors {
            let bytes = bytes_of(vector);
            needles.extend(bytes.windows(8).step_by(4).map(<[u8]>::to_vec));
            needles.push(bytes);
        }
        needles
    }

    fn assert_nowhere<B: Backend>(&self, place: &B, step: &str) {
        for needle in self.needles() {
            let found = place.files_containing(&needle);
            assert!(found.is_empty(), "after {step}: {:?} found in {found:?}", String::from_utf8_lossy(&needle));
        }
        assert!(!place.files_containing(PLAINTEXT).is_empty(), "the search finds the plaintext agent's text");
    }

    /// Every text written reads back from `alice` as it was written, while alive.
    fn assert_read_back<S: cheesedb::SharedStorage>(&self, alice: &Agent<S>) {
        for (id, text) in &self.texts {
            let node = alice.get(*id).unwrap();
            if node.is_alive() {
                assert_eq!(node.content(), Some(&text[..]), "node {id}");
            }
        }
    }
}

/// A store holding an encrypted agent, alice, and a plaintext one, bob, who wrote `PLAINTEXT`.
fn store_with_both<B: Backend>(place: &B) -> (Store<B::Storage>, Token, Agent<B::Storage>) {
    let store = place.open(options()).unwrap();
    let token = store.create_encrypted_agent("alice").unwrap();
    let bob = store.open_agent(&store.create_agent("bob").unwrap()).unwrap();
    bob.add_lot("bob-label", PLAINTEXT).unwrap();
    let alice = store.open_agent(&token).unwrap();
    assert!(alice.is_encrypted());
    assert!(!bob.is_encrypted());
    (store, token, alice)
}

/// Writes through every path a write can take, checking the files after each.
fn write_every_way<B: Backend>(place: &B, alice: &Agent<B::Storage>, written: &mut Written) -> (Id, Id) {
    let lot = alice.add_lot(LABEL, &canary("single-lot")).unwrap();
    written.texts.push((lot, canary("single-lot")));
    written.labels.push(LABEL);
    written.assert_nowhere(place, "a single lot");
    assert_eq!(alice.get(lot).unwrap().kind, NodeKind::Lot { label: LABEL.to_string() });

    let memory = alice.remember(&canary("memory"), &[Leg::from([lot])]).unwrap();
    written.texts.push((memory, canary("memory")));
    written.assert_nowhere(place, "a memory");

    let reads: ReadSet = [memory].into_iter().collect();
    let tracked = alice.remember_tracked(&canary("tracked"), &[Leg::from([lot])], &reads).unwrap();
    written.texts.push((tracked, canary("tracked")));
    written.assert_nowhere(place, "a tracked memory");

    let (batch_lot, batch_memory) = alice
        .batch(|batch| {
            let batch_lot = batch.add_lot(BATCH_LABEL, &canary("batch-lot"))?;
            let batch_memory = batch.remember(&canary("batch-memory"), &[Leg::from([batch_lot, lot])])?;
            batch.set_vector(batch_memory, &BATCH_VECTOR)?;
            Ok((batch_lot, batch_memory))
        })
        .unwrap();
    written.texts.push((batch_lot, canary("batch-lot")));
    written.texts.push((batch_memory, canary("batch-memory")));
    written.labels.push(BATCH_LABEL);
    written.vectors.push(BATCH_VECTOR.to_vec());
    written.assert_nowhere(place, "a batch");

    let mut staged = StagedBatch::default();
    let staged_lot = alice.stage_into(&mut staged, |batch| batch.add_lot(STAGED_LABEL, &canary("staged-lot"))).unwrap();
    let staged_memory = alice
        .stage_into(&mut staged, |batch| batch.remember(&canary("staged-memory"), &[Leg::from([staged_lot])]))
        .unwrap();
    alice.commit_staged_batch(staged).unwrap();
    written.texts.push((staged_lot, canary("staged-lot")));
    written.texts.push((staged_memory, canary("staged-memory")));
    written.labels.push(STAGED_LABEL);
    written.assert_nowhere(place, "a staged batch");

    alice.set_vector(lot, &VECTOR).unwrap();
    written.vectors.push(VECTOR.to_vec());
    written.assert_nowhere(place, "a vector");
    written.assert_read_back(alice);
    (lot, batch_memory)
}

/// Searches of every kind find what was written, and leave nothing in the files.
fn search_every_way<B: Backend>(place: &B, alice: &Agent<B::Storage>, written: &Written, lot: Id, step: &str) {
    let alive = written.texts.iter().filter(|(id, _)| alice.get(*id).unwrap().is_alive()).count();
    assert_eq!(alice.search(WORD, 100).unwrap().len(), alive, "keyword search after {step}");
    let by_vector = alice.search_vector(&VECTOR, 1).unwrap();
    if alice.get(lot).unwrap().is_alive() {
        assert_eq!(by_vector[0].id, lot, "vector search after {step}");
    }
    assert!(!alice.search_hybrid(WORD, &VECTOR, 5).unwrap().is_empty());
    written.assert_nowhere(place, &format!("searches after {step}"));
}

fn no_canary_in_any_file_after_writes_searches_snapshots_compaction_erase_and_verify<B: Backend>() {
    let place = B::new();
    let (store, token, alice) = store_with_both(&place);
    let mut written = Written::default();
    let (lot, batch_memory) = write_every_way(&place, &alice, &mut written);
    search_every_way(&place, &alice, &written, lot, "the writes");

    let mut index = 0;
    while alice.report().segments < 3 {
        let text = canary(&format!("filler-{index}"));
        let id = alice.remember(&text, &[Leg::from([lot])]).unwrap();
        written.texts.push((id, text));
        index += 1;
    }
    assert!(place.files().iter().any(|(path, _)| path.ends_with("/snapshot")), "a snapshot was taken");
    written.assert_nowhere(&place, "segment rolls and snapshots");
    let fingerprint = alice.verify().unwrap();
    written.assert_nowhere(&place, "verify");

    alice.recall(batch_memory, Mode::Fair, Removal::Untrusted).unwrap();
    alice.compact().unwrap();
    written.assert_nowhere(&place, "a compaction");
    assert_eq!(alice.verify().unwrap().records, fingerprint.records + 1);
    written.assert_read_back(&alice);

    alice.recall(lot, Mode::Strict, Removal::Erase).unwrap();
    written.assert_nowhere(&place, "an Erase");
    assert_eq!(alice.get(lot).unwrap().content(), None);
    alice.compact().unwrap();
    written.assert_nowhere(&place, "a compaction after the Erase");
    alice.verify().unwrap();
    search_every_way(&place, &alice, &written, lot, "the Erase");

    drop(alice);
    drop(store);
    let store = place.open(options()).unwrap();
    let alice = store.open_agent(&token).unwrap();
    written.assert_nowhere(&place, "a reopen");
    written.assert_read_back(&alice);
    search_every_way(&place, &alice, &written, lot, "a reopen");
    alice.verify().unwrap();
    written.assert_nowhere(&place, "verify after the reopen");
}

/// A copy of the files taken while the agent is open and writing, opened as a crash leaves
/// them: no clean close, no snapshot at the end, slots of the key table maybe not yet synced.
fn no_canary_after_a_crash_and_reopen<B: Backend>() {
    let place = B::new();
    let (_store, token, alice) = store_with_both(&place);
    let mut written = Written::default();
    let (lot, _) = write_every_way(&place, &alice, &mut written);
    let doomed = alice.add_lot("tool", &canary("doomed")).unwrap();
    written.texts.push((doomed, canary("doomed")));
    alice.recall(doomed, Mode::Fair, Removal::Erase).unwrap();
    let last = alice.remember(&canary("last-before-the-crash"), &[Leg::from([lot])]).unwrap();
    written.texts.push((last, canary("last-before-the-crash")));
    let crashed = place.duplicate();
    written.assert_nowhere(&crashed, "the crash");

    let store = crashed.open(options()).unwrap();
    let alice = store.open_agent(&token).unwrap();
    written.assert_read_back(&alice);
    assert_eq!(alice.get(doomed).unwrap().content(), None);
    search_every_way(&crashed, &alice, &written, lot, "the crash");
    alice.verify().unwrap();
    let after = alice.add_lot(LABEL, &canary("after-the-crash")).unwrap();
    written.texts.push((after, canary("after-the-crash")));
    written.assert_nowhere(&crashed, "writes after the crash");
}

cheesedb_tests::conformance!(
    no_canary_in_any_file_after_writes_searches_snapshots_compaction_erase_and_verify,
    no_canary_after_a_crash_and_reopen,
);

/// The simulator's crashes: the power cut before every storage operation of a run of writes,
/// an Erase and a compaction, every unsynced change meeting a random fate (kept, dropped, torn,
/// garbled). In every image of every file, before and after the recovery, no canary; what was
/// acknowledged reads back.
mod crashes {
    use super::*;
    use cheesedb_sim::storage::{Fate, SimStorage};

    fn assert_nowhere_in_any_image(storage: &SimStorage, written: &Written, step: &str) {
        let needles = written.needles();
        storage.visit_images(|path, bytes| {
            for needle in &needles {
                let leaked = bytes.windows(needle.len()).any(|window| window == &needle[..]);
                assert!(!leaked, "{step}: {:?} found in an image of {path}", String::from_utf8_lossy(needle));
            }
        });
    }

    /// Runs the writes on `alice`, noting in `written` each one acknowledged, until one fails.
    fn run(alice: &Agent<SimStorage>, written: &mut Written) -> Option<Id> {
        let lot = alice.add_lot(LABEL, &canary("lot")).ok()?;
        written.texts.push((lot, canary("lot")));
        let memory = alice.remember(&canary("memory"), &[Leg::from([lot])]).ok()?;
        written.texts.push((memory, canary("memory")));
        alice.set_vector(memory, &VECTOR).ok()?;
        let doomed = alice
            .batch(|batch| {
                let doomed = batch.add_lot(BATCH_LABEL, &canary("doomed"))?;
                batch.remember(&canary("doomed-memory"), &[Leg::from([doomed])])?;
                Ok(doomed)
            })
            .ok()?;
        written.texts.push((doomed, canary("doomed")));
        written.texts.push((Id::from(doomed.get() + 1), canary("doomed-memory")));
        for index in 0..12 {
            let text = canary(&format!("filler-{index}"));
            let id = alice.remember(&text, &[Leg::from([lot])]).ok()?;
            written.texts.push((id, text));
        }
        alice.recall(doomed, Mode::Fair, Removal::Erase).ok()?;
        alice.recall(memory, Mode::Fair, Removal::Untrusted).ok()?;
        alice.compact().ok()?;
        let last = alice.add_lot(STAGED_LABEL, &canary("last")).ok()?;
        written.texts.push((last, canary("last")));
        Some(last)
    }

    #[test]
    fn no_canary_in_any_image_at_any_crash_point() {
        let base = SimStorage::without_faults(0x5eed_ca4a);
        let token = {
            let store = Store::open_with(base.clone(), options()).unwrap();
            store
                .create_agent("bob")
                .and_then(|bob| store.open_agent(&bob))
                .unwrap()
                .add_lot("bob", PLAINTEXT)
                .unwrap();
            store.create_encrypted_agent("alice").unwrap()
        };
        base.crash_with(&vec![Fate::Keep; base.pending_changes().len()]);
        let written_labels = || Written {
            labels: vec![LABEL, BATCH_LABEL, STAGED_LABEL],
            vectors: vec![VECTOR.to_vec()],
            ..Written::default()
        };

        let counting = base.fork();
        let start = counting.operation_count();
        {
            let store = Store::open_with(counting.clone(), options()).unwrap();
            let alice = store.open_agent(&token).unwrap();
            assert!(run(&alice, &mut written_labels()).is_some(), "the run succeeds without a crash");
        }
        let operations = counting.operation_count() - start;
        assert!(operations > 100, "{operations} operations");

        let mut crashes = 0;
        for crash_point in 0..=operations {
            let disk = base.fork();
            let mut written = written_labels();
            {
                let store = Store::open_with(disk.clone(), options()).unwrap();
                let alice = store.open_agent(&token).unwrap();
                disk.arm_crash(crash_point);
                let _ = run(&alice, &mut written);
                disk.power_off();
            }
            let step = format!("a crash after {crash_point} operations");
            assert_nowhere_in_any_image(&disk, &written, &step);
            disk.crash();
            crashes += 1;
            let store = Store::open_with(disk.clone(), options()).unwrap();
            let alice = store.open_agent(&token).unwrap();
            written.assert_read_back(&alice);
            alice.verify().unwrap_or_else(|error| panic!("{step}: verify: {error}"));
            let after = alice.add_lot(LABEL, &canary("after")).unwrap();
            written.texts.push((after, canary("after")));
            assert!(alice.search(WORD, 100).unwrap().iter().any(|hit| hit.id == after), "{step}: search");
            assert_nowhere_in_any_image(&disk, &written, &format!("the recovery from {step}"));
        }
        assert_eq!(crashes, operations + 1);
    }
}
