//! The first search after open builds the index with the segments indexed on threads: it must
//! give every answer the one pass of the core gives (by words, by vector, fused, which nodes have
//! a vector), on an agent of many segments with recalled, erased and replaced vectors, and for a
//! damaged segment the same error, in the same file at the same offset. On every backend.

use cheesedb::{Agent, Id, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_core::AgentEngine;
use cheesedb_tests::backend::Backend;

/// Small segments, no zeros written ahead and no snapshots (so that an engine opened beside the
/// store to compare with writes nothing when it is dropped).
fn small_segments() -> Options {
    Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(u64::MAX)
}

/// The number the store gives its first agent, the one every test here makes.
const FIRST_AGENT: u64 = 1;

const QUERIES: [&str; 7] = ["memory", "pune rain", "umbrella", "word3 word5", "secret", "source", "12 word6 nothing"];

const VECTORS: [[f32; 3]; 3] = [[1.0, 2.0, 0.5], [0.0, 1.0, 0.0], [-1.0, 0.5, 2.0]];

/// Makes an agent of at least `segments` segments: memories of varied words, some recalled
/// (Untrusted or Erase), vectors set on most of them and replaced on some, often in a later
/// segment; then a source is erased with every memory drawn from it. Returns its token.
fn agent_with_segments<B: Backend>(place: &B, segments: u64) -> Token {
    let store = place.open(small_segments()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    let source = alice.add_lot("source", b"the source of pune rain").unwrap();
    let secret = alice.add_lot("secret", b"a secret umbrella source").unwrap();
    let mut memories = Vec::new();
    let mut index = 0u64;
    while alice.report().segments < segments {
        let parent = if index % 5 == 0 { secret } else { source };
        let text = format!("memory {index} word{} word{} pune umbrella", index % 7, index % 11);
        let memory = alice.remember(text.as_bytes(), &[Leg::from([parent])]).unwrap();
        memories.push(memory);
        if index % 3 != 0 {
            alice.set_vector(memory, &[1.0, (index % 5) as f32, 0.5]).unwrap();
        }
        let earlier = memories[memories.len() / 2];
        if index % 4 == 1 && alice.get(earlier).unwrap().is_alive() {
            alice.set_vector(earlier, &[0.25, 1.0, (index % 3) as f32]).unwrap();
        }
        if index % 9 == 4 {
            let removal = if index % 2 == 0 { Removal::Erase } else { Removal::Untrusted };
            alice.recall(memory, Mode::Fair, removal).unwrap();
        }
        index += 1;
    }
    alice.recall(secret, Mode::Strict, Removal::Erase).unwrap();
    token
}

/// The agent opened through a store (which builds its index on threads), and the core engine
/// opened beside it (which builds it in one pass), neither having searched yet.
struct Both<S: cheesedb::SharedStorage> {
    agent: Agent<S>,
    one_pass: AgentEngine<S>,
    _store: Store<S>,
}

fn open_both<B: Backend>(place: &B, token: &Token) -> Both<B::Storage> {
    let store = place.open(small_segments()).unwrap();
    let agent = store.open_agent(token).unwrap();
    let one_pass = AgentEngine::open(place.storage(), FIRST_AGENT, small_segments()).unwrap();
    Both { agent, one_pass, _store: store }
}

fn the_index_built_on_threads_answers_as_the_one_pass<B: Backend>() {
    let place = B::new();
    let token = agent_with_segments(&place, 6);
    let Both { agent, mut one_pass, _store } = open_both(&place, &token);
    assert!(agent.report().segments >= 6);
    // A search by vector first: whichever call builds the index, it is the same.
    for vector in VECTORS {
        let found = agent.search_vector(&vector, usize::MAX).unwrap();
        assert_eq!(found, one_pass.search_vector(&vector, usize::MAX).unwrap());
        assert!(found.len() > 10, "{found:?}");
        assert_eq!(agent.search_vector(&vector, 3), one_pass.search_vector(&vector, 3));
    }
    for query in QUERIES {
        assert_eq!(agent.search(query, usize::MAX), one_pass.search(query, usize::MAX), "{query}");
        assert_eq!(agent.search(query, 5), one_pass.search(query, 5), "{query}");
        for vector in VECTORS {
            assert_eq!(agent.search_hybrid(query, &vector, 10), one_pass.search_hybrid(query, &vector, 10));
        }
    }
    assert!(agent.search("secret", 10).unwrap().is_empty(), "the erased source and its memories are gone");
    assert!(!agent.search("umbrella", 10).unwrap().is_empty());
    let mut with_vector = 0;
    for id in (1..=one_pass.node_count()).map(Id::from) {
        let has = agent.has_vector(id);
        assert_eq!(has, one_pass.has_vector(id), "{id:?}");
        with_vector += usize::from(has == Ok(true));
    }
    assert!(with_vector > 10);
}

fn a_damaged_segment_gives_the_one_pass_error<B: Backend>() {
    let place = B::new();
    let token = agent_with_segments(&place, 4);
    let mut both = Some(open_both(&place, &token));
    let mut failures = 0;
    for path in place.segment_files() {
        let sound = place.read_file(&path);
        for offset in (0..sound.len()).step_by(B::OFFSET_STRIDE.max(5)) {
            let mut damaged = sound.clone();
            damaged[offset] ^= 0x20;
            place.replace_file(&path, &damaged);
            let Both { agent, one_pass, .. } = both.as_mut().unwrap();
            let expected = one_pass.search("memory umbrella", 10);
            assert_eq!(agent.search("memory umbrella", 10), expected, "flip at {offset} of {path}");
            place.replace_file(&path, &sound);
            if expected.is_ok() {
                // Both built their index from bytes that pass every check: open afresh, so that
                // the next search builds again.
                drop(both.take());
                both = Some(open_both(&place, &token));
            } else {
                failures += 1;
            }
        }
    }
    assert!(failures > 100, "{failures}");
    let Both { agent, mut one_pass, .. } = both.unwrap();
    assert_eq!(agent.search("memory", 10), one_pass.search("memory", 10));
    assert!(!agent.search("memory", 10).unwrap().is_empty());
}

cheesedb_tests::conformance!(
    the_index_built_on_threads_answers_as_the_one_pass,
    a_damaged_segment_gives_the_one_pass_error
);
