//! Proof that cheesedb's keyword search and SQLite FTS5 match the same texts, so the comparison
//! times the same work: for many OR queries, the full set of ids each finds (no limit) is the
//! same, before and after recalls, after compaction and after a reopen.

use std::collections::BTreeSet;

use cheesedb::{Io, Mode, Removal};

use crate::cheesedb_search_side::CheesedbSearchSide;
use crate::cheesedb_side::OpenMeasurement;
use crate::folder::BenchFolder;
use crate::fts5_side::Fts5Side;
use crate::search_corpus::{lots_for, queries, Corpus, SearchQuery, Vocabulary, VOCABULARY_WORDS};
use crate::search_engine::SearchEngine;
use crate::workload::PlannedNode;

struct Both {
    cheesedb: CheesedbSearchSide,
    fts5: Fts5Side,
    /// Every node written: the limit that asks for every match.
    nodes: usize,
    _folder: BenchFolder,
}

fn both_with_corpus(vocabulary: &Vocabulary, memories: u64, seed: u64) -> Both {
    let folder = BenchFolder::new(None).unwrap();
    let mut cheesedb =
        CheesedbSearchSide::create(&folder.fresh("cheesedb", 1).unwrap(), Io::Std, OpenMeasurement::InThisProcess)
            .unwrap();
    let mut fts5 = Fts5Side::create(&folder.fresh("sqlite", 1).unwrap()).unwrap();
    let mut corpus = Corpus::new(vocabulary, memories, seed);
    let mut nodes = 0;
    loop {
        let batch = corpus.next_batch(500);
        if batch.is_empty() {
            break;
        }
        let ids = cheesedb.write_batch(&batch).unwrap();
        assert_eq!(fts5.write_batch(&batch).unwrap(), ids);
        nodes += batch.len();
    }
    assert_eq!(nodes as u64, memories + lots_for(memories));
    fts5.finish_setup().unwrap();
    Both { cheesedb, fts5, nodes, _folder: folder }
}

/// Every id each engine matches for `query`, sorted.
fn matched(both: &mut Both, query: &SearchQuery) -> (BTreeSet<u64>, BTreeSet<u64>) {
    let from_cheesedb: Vec<u64> =
        both.cheesedb.search_hits(&query.text(), both.nodes).unwrap().into_iter().map(|hit| hit.id.get()).collect();
    let distinct: BTreeSet<u64> = from_cheesedb.iter().copied().collect();
    assert_eq!(distinct.len(), from_cheesedb.len(), "cheesedb gave an id twice for {query:?}");
    let from_fts5 = both.fts5.search_scored(query).unwrap().into_iter().map(|(id, _)| id).collect();
    (distinct, from_fts5)
}

/// Checks every query; returns how many matched anything and the most any matched.
fn assert_same_matches(both: &mut Both, queries: &[SearchQuery], when: &str) -> (usize, usize) {
    let mut with_hits = 0;
    let mut most = 0;
    for query in queries {
        let (from_cheesedb, from_fts5) = matched(both, query);
        assert_eq!(from_cheesedb, from_fts5, "{when}: \"{}\"", query.text());
        with_hits += usize::from(!from_cheesedb.is_empty());
        most = most.max(from_cheesedb.len());
    }
    (with_hits, most)
}

#[test]
fn both_engines_match_the_same_texts_on_the_benchmark_vocabulary() {
    let vocabulary = Vocabulary::new(VOCABULARY_WORDS, 21);
    let mut both = both_with_corpus(&vocabulary, 3_000, 22);
    let queries = queries(&vocabulary, 400, 23);
    let (with_hits, most) = assert_same_matches(&mut both, &queries, "after setup");
    // Half the query words are drawn by frequency, so most queries match something, and a
    // query with one of the commonest words matches most texts.
    assert!(with_hits > 200, "only {with_hits} of 400 queries matched anything");
    assert!(most > 2_000, "no query matched more than {most} texts");
}

#[test]
fn both_engines_match_the_same_texts_after_recalls_compaction_and_reopen() {
    // A small vocabulary, so that rare words too occur in many texts.
    let vocabulary = Vocabulary::new(2_000, 31);
    let mut both = both_with_corpus(&vocabulary, 2_000, 32);
    let queries = queries(&vocabulary, 300, 33);
    assert_same_matches(&mut both, &queries, "after setup");
    // Lots come first and after every hundred memories: ids 1, 102, 203, ... Recalling one
    // takes the hundred memories learned from it out of cheesedb's searches; FTS5 loses the
    // same texts.
    let recalls =
        [(1, Mode::Fair, Removal::Untrusted), (102, Mode::Strict, Removal::Erase), (506, Mode::Fair, Removal::Erase)];
    for (lot, mode, removal) in recalls {
        let mut removed = both.cheesedb.recall(lot, mode, removal).unwrap();
        assert_eq!(removed.len(), 100, "recall of lot {lot}");
        removed.push(lot);
        both.fts5.remove(&removed).unwrap();
        // A memory of the middle of the family: it matches nothing any more.
        let gone = removed[50];
        let alive = both.cheesedb.search_hits(vocabulary.word(0), both.nodes).unwrap();
        assert!(alive.iter().all(|hit| hit.id.get() != gone), "recalled {gone} was found");
    }
    assert_same_matches(&mut both, &queries, "after the recalls");
    both.cheesedb.compact().unwrap();
    assert_same_matches(&mut both, &queries, "after compaction");
    both.cheesedb.reopen_here().unwrap();
    let (with_hits, _) = assert_same_matches(&mut both, &queries, "after a reopen");
    assert!(with_hits > 250, "only {with_hits} of 300 queries matched anything");
}

#[test]
fn a_memory_with_only_rare_words_is_found_by_each_of_them() {
    let folder = BenchFolder::new(None).unwrap();
    let mut cheesedb =
        CheesedbSearchSide::create(&folder.fresh("cheesedb", 1).unwrap(), Io::Std, OpenMeasurement::InThisProcess)
            .unwrap();
    let mut fts5 = Fts5Side::create(&folder.fresh("sqlite", 1).unwrap()).unwrap();
    let nodes = vec![
        PlannedNode::Lot { label: "document", content: b"zuvaka mirote".to_vec() },
        PlannedNode::Memory { content: b"kelopa zuvaka zuvaka".to_vec(), legs: vec![vec![1]] },
        PlannedNode::Memory { content: b"tiramo".to_vec(), legs: vec![vec![1]] },
    ];
    assert_eq!(cheesedb.write_batch(&nodes).unwrap(), fts5.write_batch(&nodes).unwrap());
    for (words, expected) in
        [(vec!["zuvaka"], vec![1, 2]), (vec!["tiramo", "mirote"], vec![1, 3]), (vec!["nopu"], vec![])]
    {
        let query = SearchQuery::new(words.into_iter().map(String::from).collect());
        let mut from_cheesedb = cheesedb.search(&query, 10).unwrap();
        from_cheesedb.sort_unstable();
        let mut from_fts5 = fts5.search(&query, 10).unwrap();
        from_fts5.sort_unstable();
        assert_eq!(from_cheesedb, expected);
        assert_eq!(from_fts5, expected);
    }
}
