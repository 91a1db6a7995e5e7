//! Search that forgets: keyword and vector search never bring back a recalled lot or memory,
//! an Erase takes vectors off the disk with the text, and a reopen answers as before. On every
//! backend (the simulator's disk searched in every image a crash could leave).

use cheesedb::{Error, Hit, Id, Leg, Mode, Options, Removal, Store, Token, VectorProblem};
use cheesedb_tests::backend::Backend;

/// A word that occurs only in the text that gets recalled.
const CANARY_WORD: &str = "zebrafinch7q";
/// A vector whose bytes are found nowhere else by chance.
const CANARY_VECTOR: [f32; 4] = [0.123_456_78, -9.876_543, 3.333_592_7, 2.111_281_8];
/// The vector of the memory that stays, as distinctive.
const GOOD_VECTOR: [f32; 4] = [0.987_654_3, 0.011_223_3, 0.000_321, 0.000_777];

struct Fixture<B: Backend> {
    place: B,
    token: Token,
    store: Store<B::Storage>,
    bad_source: Id,
    bad_memory: Id,
    good_memory: Id,
}

fn bytes_of(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|number| number.to_le_bytes()).collect()
}

fn canary_vector_bytes() -> Vec<u8> {
    bytes_of(&CANARY_VECTOR)
}

fn ids(hits: &[Hit]) -> Vec<Id> {
    hits.iter().map(|hit| hit.id).collect()
}

fn fixture<B: Backend>(options: Options) -> Fixture<B> {
    let place = B::new();
    let store = place.open(options).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let user = alice.add_lot("user_message", b"I live in Pune and cycle to work").unwrap();
    let bad_source = alice.add_lot("weather_tool", format!("rain all week {CANARY_WORD}").as_bytes()).unwrap();
    let bad_memory = alice
        .remember(format!("carry an umbrella in Pune {CANARY_WORD}").as_bytes(), &[Leg::from([bad_source])])
        .unwrap();
    let good_memory = alice.remember(b"the user lives in Pune", &[Leg::from([user])]).unwrap();
    alice.set_vector(bad_memory, &CANARY_VECTOR).unwrap();
    alice.set_vector(good_memory, &GOOD_VECTOR).unwrap();
    alice.set_vector(user, &[0.9, 0.1, 0.0, 0.0]).unwrap();
    Fixture { place, token, store, bad_source, bad_memory, good_memory }
}

fn keyword_search_ranks_by_bm25_and_skips_nothing_alive<B: Backend>() {
    let fixture = fixture::<B>(Options::default());
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    let hits = alice.search(CANARY_WORD, 10).unwrap();
    assert_eq!(ids(&hits), vec![fixture.bad_source, fixture.bad_memory]);
    let hits = alice.search("Pune", 10).unwrap();
    assert_eq!(hits.len(), 3, "{hits:?}");
    assert!(hits.windows(2).all(|pair| pair[0].score >= pair[1].score), "best first: {hits:?}");
    assert!(hits.iter().all(|hit| hit.score > 0.0));
    assert_eq!(alice.search("PUNE", 1).unwrap().len(), 1, "words are lower-cased, and the limit holds");
    assert!(alice.search("", 10).unwrap().is_empty());
    assert!(alice.search("Pune", 0).unwrap().is_empty());
    assert!(alice.search("nothing-matches-this", 10).unwrap().is_empty());
}

fn no_search_returns_a_recalled_id<B: Backend>(removal: Removal) {
    let fixture = fixture::<B>(Options::default());
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    assert_eq!(alice.search(CANARY_WORD, 10).unwrap().len(), 2);
    let removed = alice.recall(fixture.bad_source, Mode::Fair, removal).unwrap();
    assert_eq!(removed, vec![fixture.bad_memory]);
    let recalled = [fixture.bad_source, fixture.bad_memory];
    let check = |alice: &cheesedb::Agent<B::Storage>| {
        assert!(alice.search(CANARY_WORD, 10).unwrap().is_empty());
        for hit in alice.search("Pune umbrella rain", 10).unwrap() {
            assert!(!recalled.contains(&hit.id), "{hit:?}");
        }
        let by_vector = alice.search_vector(&CANARY_VECTOR, 10).unwrap();
        assert_eq!(ids(&by_vector).len(), 2);
        assert!(ids(&by_vector).iter().all(|id| !recalled.contains(id)), "{by_vector:?}");
        let hybrid = alice.search_hybrid("umbrella Pune", &CANARY_VECTOR, 10).unwrap();
        assert!(ids(&hybrid).iter().all(|id| !recalled.contains(id)), "{hybrid:?}");
        assert_eq!(alice.has_vector(fixture.bad_memory), Err(Error::AlreadyRecalled { id: fixture.bad_memory }));
    };
    check(&alice);
    drop(alice);
    drop(fixture.store);
    let store = fixture.place.open(Options::default()).unwrap();
    check(&store.open_agent(&fixture.token).unwrap());
}

fn no_search_returns_an_untrusted_recall<B: Backend>() {
    no_search_returns_a_recalled_id::<B>(Removal::Untrusted);
}

fn no_search_returns_an_erased_recall<B: Backend>() {
    no_search_returns_a_recalled_id::<B>(Removal::Erase);
}

fn erase_takes_the_vector_bytes_off_the_disk<B: Backend>() {
    let fixture = fixture::<B>(Options::default());
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    // A second vector of the same memory replaces the first; both records must go.
    alice.set_vector(fixture.bad_memory, &CANARY_VECTOR.map(|number| number * 2.0)).unwrap();
    let doubled: Vec<u8> = CANARY_VECTOR.iter().flat_map(|number| (number * 2.0).to_le_bytes()).collect();
    assert_eq!(fixture.place.files_containing(&canary_vector_bytes()).len(), 1);
    assert_eq!(fixture.place.files_containing(&doubled).len(), 1);
    alice.recall(fixture.bad_source, Mode::Fair, Removal::Erase).unwrap();
    assert!(fixture.place.files_containing(&canary_vector_bytes()).is_empty());
    assert!(fixture.place.files_containing(&doubled).is_empty());
    assert!(fixture.place.files_containing(CANARY_WORD.as_bytes()).is_empty());
    let fingerprint = alice.verify().unwrap();
    drop(alice);
    drop(fixture.store);
    let store = fixture.place.open(Options::default()).unwrap();
    let alice = store.open_agent(&fixture.token).unwrap();
    assert_eq!(alice.verify().unwrap(), fingerprint, "the chain still verifies");
    assert!(alice.has_vector(fixture.good_memory).unwrap());
}

fn erase_after_reopen_finds_vectors_written_before_the_snapshot<B: Backend>() {
    // A snapshot at every close: the reopened engine has not read the early records.
    let options = Options::default().snapshot_after_bytes(1);
    let fixture = fixture::<B>(options.clone());
    drop(fixture.store);
    let store = fixture.place.open(options).unwrap();
    let alice = store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.bad_memory, Mode::Fair, Removal::Erase).unwrap();
    assert!(fixture.place.files_containing(&canary_vector_bytes()).is_empty());
}

fn compact_takes_the_vector_bytes_of_an_untrusted_recall_off_the_disk<B: Backend>() {
    let fixture = fixture::<B>(Options::default());
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    alice.recall(fixture.bad_source, Mode::Fair, Removal::Untrusted).unwrap();
    assert!(!fixture.place.files_containing(&canary_vector_bytes()).is_empty(), "Untrusted hides, it does not erase");
    alice.compact().unwrap();
    assert!(fixture.place.files_containing(&canary_vector_bytes()).is_empty());
    assert!(fixture.place.files_containing(CANARY_WORD.as_bytes()).is_empty());
    // The vectors that stay were moved by the rewrite and are still found and erasable.
    assert_eq!(ids(&alice.search_vector(&GOOD_VECTOR, 1).unwrap()), vec![fixture.good_memory]);
    assert_eq!(fixture.place.files_containing(&bytes_of(&GOOD_VECTOR)).len(), 1);
    alice.recall(fixture.good_memory, Mode::Fair, Removal::Erase).unwrap();
    assert!(fixture.place.files_containing(&bytes_of(&GOOD_VECTOR)).is_empty());
}

fn results_after_reopen_are_the_results_before_it<B: Backend>() {
    let fixture = fixture::<B>(Options::default());
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    let queries = ["Pune", "rain umbrella", CANARY_WORD, "cycle work lives"];
    let before: Vec<Vec<Hit>> = queries.iter().map(|query| alice.search(query, 10).unwrap()).collect();
    let vector_before = alice.search_vector(&[1.0, 1.0, 0.0, 0.0], 10).unwrap();
    let hybrid_before = alice.search_hybrid("Pune", &[1.0, 1.0, 0.0, 0.0], 10).unwrap();
    drop(alice);
    drop(fixture.store);
    let store = fixture.place.open(Options::default()).unwrap();
    let alice = store.open_agent(&fixture.token).unwrap();
    let after: Vec<Vec<Hit>> = queries.iter().map(|query| alice.search(query, 10).unwrap()).collect();
    assert_eq!(before, after);
    assert_eq!(vector_before, alice.search_vector(&[1.0, 1.0, 0.0, 0.0], 10).unwrap());
    assert_eq!(hybrid_before, alice.search_hybrid("Pune", &[1.0, 1.0, 0.0, 0.0], 10).unwrap());
}

fn vectors_are_checked<B: Backend>() {
    let fixture = fixture::<B>(Options::default());
    let alice = fixture.store.open_agent(&fixture.token).unwrap();
    let invalid = |problem| Err(Error::InvalidVector { problem });
    let id = fixture.good_memory;
    assert_eq!(alice.set_vector(id, &[1.0, 2.0]), invalid(VectorProblem::DimensionMismatch { expected: 4, found: 2 }));
    assert_eq!(alice.set_vector(id, &[]), invalid(VectorProblem::Empty));
    assert_eq!(alice.set_vector(id, &[1.0, f32::NAN, 0.0, 0.0]), invalid(VectorProblem::NotFinite { position: 1 }));
    assert_eq!(alice.set_vector(id, &[0.0; 4]), invalid(VectorProblem::AllZero));
    assert_eq!(alice.set_vector(Id::from(999), &[1.0; 4]), Err(Error::UnknownId { id: Id::from(999) }));
    assert_eq!(
        alice.search_vector(&[1.0; 3], 10),
        Err(Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected: 4, found: 3 } })
    );
    // An agent without vectors takes any dimension up to the limit.
    let bob = fixture.store.open_agent(&fixture.store.create_agent("bob").unwrap()).unwrap();
    let bob_lot = bob.add_lot("source", b"text").unwrap();
    let too_long = vec![1.0; cheesedb::limits::VECTOR_DIMENSION_MAX + 1];
    assert!(matches!(bob.set_vector(bob_lot, &too_long), Err(Error::LimitExceeded { .. })));
    bob.set_vector(bob_lot, &[1.0; 7]).unwrap();
    alice.recall(fixture.bad_source, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(alice.set_vector(fixture.bad_memory, &[1.0; 4]), Err(Error::AlreadyRecalled { id: fixture.bad_memory }));
    // Refusals wrote nothing: the agent still writes and verifies.
    alice.set_vector(id, &[0.0, 1.0, 0.0, 0.0]).unwrap();
    alice.verify().unwrap();
    assert_eq!(ids(&alice.search_vector(&[0.0, 1.0, 0.0, 0.0], 1).unwrap()), vec![id], "the later vector replaced it");
}

fn a_batch_writes_nodes_and_their_vectors_together<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let (lot, memory) = alice
        .batch(|batch| {
            let lot = batch.add_lot("source", b"solar panels on the roof")?;
            let memory = batch.remember(b"the house has solar power", &[Leg::from([lot])])?;
            batch.set_vector(lot, &[0.0, 1.0])?;
            batch.set_vector(memory, &[1.0, 0.0])?;
            Ok((lot, memory))
        })
        .unwrap();
    assert_eq!(ids(&alice.search_vector(&[1.0, 0.1], 2).unwrap()), vec![memory, lot]);
    assert_eq!(ids(&alice.search("solar", 10).unwrap()), vec![lot, memory]);
    let refused = alice.batch(|batch| {
        let other = batch.add_lot("source", b"another")?;
        batch.set_vector(other, &[1.0, 0.0, 0.0])
    });
    assert_eq!(
        refused,
        Err(Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected: 2, found: 3 } })
    );
    assert_eq!(alice.lots().unwrap(), vec![lot], "a refused batch writes nothing");
    drop(alice);
    drop(store);
    let store = place.open(Options::default()).unwrap();
    let alice = store.open_agent(&token).unwrap();
    assert_eq!(ids(&alice.search_vector(&[1.0, 0.1], 2).unwrap()), vec![memory, lot]);
}

/// The first document of the index (the lowest id, the first posting of every word it holds)
/// recalled: none of its words finds it any more, whether the other documents are few (scores
/// added up in one slot per document) or many (scores listed posting by posting), and whether
/// the recall came after the index was built or before a reopen built it.
fn the_first_document_recalled_is_never_found<B: Backend>() {
    for others in [3usize, 300] {
        for removal in [Removal::Untrusted, Removal::Erase] {
            let label = format!("{others} other documents, {removal:?}");
            let place = B::new();
            let store = place.open(Options::default()).unwrap();
            let token = store.create_agent("alice").unwrap();
            let alice = store.open_agent(&token).unwrap();
            let first = alice.add_lot("first", format!("{CANARY_WORD} shared rain").as_bytes()).unwrap();
            assert_eq!(first, Id::from(1));
            let mut sharing = Vec::new();
            for index in 0..others {
                let text = if index % 100 == 0 { format!("shared rain {index}") } else { format!("filler {index}") };
                let lot = alice.add_lot("other", text.as_bytes()).unwrap();
                if index % 100 == 0 {
                    sharing.push(lot);
                }
            }
            assert_eq!(ids(&alice.search(CANARY_WORD, 10).unwrap()), vec![first], "{label}");
            assert!(ids(&alice.search("shared", 10).unwrap()).contains(&first), "{label}");
            alice.recall(first, Mode::Fair, removal).unwrap();
            let check = |alice: &cheesedb::Agent<B::Storage>, when: &str| {
                assert_eq!(alice.search(CANARY_WORD, 10).unwrap(), vec![], "{label}, {when}");
                for query in ["shared", "rain", "shared rain", &format!("{CANARY_WORD} rain")] {
                    let mut found = ids(&alice.search(query, usize::MAX).unwrap());
                    found.sort();
                    assert_eq!(found, sharing, "{label}, {when}: {query}");
                }
            };
            check(&alice, "live");
            drop(alice);
            drop(store);
            let store = place.open(Options::default()).unwrap();
            check(&store.open_agent(&token).unwrap(), "after reopen");
        }
    }
}

cheesedb_tests::conformance!(
    the_first_document_recalled_is_never_found,
    keyword_search_ranks_by_bm25_and_skips_nothing_alive,
    no_search_returns_an_untrusted_recall,
    no_search_returns_an_erased_recall,
    erase_takes_the_vector_bytes_off_the_disk,
    erase_after_reopen_finds_vectors_written_before_the_snapshot,
    compact_takes_the_vector_bytes_of_an_untrusted_recall_off_the_disk,
    results_after_reopen_are_the_results_before_it,
    vectors_are_checked,
    a_batch_writes_nodes_and_their_vectors_together,
);
