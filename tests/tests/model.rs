//! Random operation sequences against the reference model the simulator checks against too:
//! every result (refusals included, error for error), every alive set, every search and every
//! erasure (of text and of vectors) must match, across compactions and reopens.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use cheesedb::{Agent, Hit, Id, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_sim::model::{AgentModel, ModelWrite, Text};
use proptest::prelude::*;

/// Words added to contents, so that a keyword search finds several nodes.
const VOCABULARY: [&str; 5] = ["brie", "gouda", "Comté", "feta", "BRIE"];
/// How far a vector search's score may be from the model's cosine.
const COSINE_TOLERANCE: f64 = 1e-4;

#[derive(Debug, Clone)]
enum Operation {
    AddLot,
    Remember(Vec<Vec<u8>>),
    Recall { target: u8, strict: bool, erase: bool },
    Preview { target: u8, strict: bool, erase: bool },
    Batch { lots: u8, memories: Vec<Vec<Vec<u8>>>, vectors: Vec<(u8, u8)> },
    SetVector { target: u8, shape: u8 },
    Search { words: Vec<(u8, u8)>, probe: u8 },
    Compact,
    Reopen,
}

fn legs() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..4), 0..4)
}

fn operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        4 => Just(Operation::AddLot),
        6 => legs().prop_map(Operation::Remember),
        3 => (any::<u8>(), any::<bool>(), any::<bool>()).prop_map(|(target, strict, erase)| Operation::Recall { target, strict, erase }),
        1 => (any::<u8>(), any::<bool>(), any::<bool>()).prop_map(|(target, strict, erase)| Operation::Preview { target, strict, erase }),
        1 => (0..3u8, prop::collection::vec(legs(), 0..3), prop::collection::vec((any::<u8>(), any::<u8>()), 0..3))
            .prop_map(|(lots, memories, vectors)| Operation::Batch { lots, memories, vectors }),
        3 => (any::<u8>(), any::<u8>()).prop_map(|(target, shape)| Operation::SetVector { target, shape }),
        2 => (prop::collection::vec((any::<u8>(), any::<u8>()), 0..4), any::<u8>())
            .prop_map(|(words, probe)| Operation::Search { words, probe }),
        1 => Just(Operation::Compact),
        1 => Just(Operation::Reopen),
    ]
}

/// Picks an id from a byte: mostly existing ids, sometimes the next (unknown) one.
fn pick(model: &AgentModel, choice: u8) -> u64 {
    let known = model.ids().count() as u64;
    u64::from(choice) % (known + 2) + u64::from(known == 0)
}

fn pick_legs(model: &AgentModel, choices: &[Vec<u8>]) -> Vec<Vec<u64>> {
    choices.iter().map(|leg| leg.iter().map(|choice| pick(model, *choice)).collect()).collect()
}

fn to_legs(legs: &[Vec<u64>]) -> Vec<Leg> {
    legs.iter().map(|leg| leg.iter().copied().map(Id::from).collect()).collect()
}

fn mode(strict: bool) -> Mode {
    if strict {
        Mode::Strict
    } else {
        Mode::Fair
    }
}

fn removal(erase: bool) -> Removal {
    if erase {
        Removal::Erase
    } else {
        Removal::Untrusted
    }
}

/// Whether `id` was recalled, by the model.
fn is_dead(model: &AgentModel, id: u64) -> bool {
    model.node(id).is_some_and(|node| !node.alive)
}

/// Whether an Erase covered `id`, by the model (which is told of no compaction here).
fn is_erased(model: &AgentModel, id: u64) -> bool {
    model.node(id).is_some_and(|node| node.text == Text::Absent)
}

fn ids(list: Vec<Id>) -> Vec<u64> {
    list.into_iter().map(Id::get).collect()
}

/// The ids of `hits`, checked: none twice, none recalled, best first.
fn hit_ids(hits: &[Hit], model: &AgentModel, what: &str) -> BTreeSet<u64> {
    assert!(hits.windows(2).all(|pair| pair[0].score >= pair[1].score), "{what}: not best first: {hits:?}");
    let found: BTreeSet<u64> = hits.iter().map(|hit| hit.id.get()).collect();
    assert_eq!(found.len(), hits.len(), "{what}: an id twice: {hits:?}");
    for id in &found {
        assert!(!is_dead(model, *id), "{what} returned recalled node {id}");
    }
    found
}

/// The bytes of `vector` as a record stores them.
fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|number| number.to_le_bytes()).collect()
}

struct Harness {
    folder: tempfile::TempDir,
    token: Token,
    agent: Option<Agent>,
    model: AgentModel,
    contents: BTreeMap<u64, Vec<u8>>,
    attempts: u64,
}

impl Harness {
    fn new() -> Harness {
        let folder = tempfile::tempdir().unwrap();
        let store = open_store(folder.path());
        let token = store.create_agent("model").unwrap();
        let agent = Some(store.open_agent(&token).unwrap());
        Harness { folder, token, agent, model: AgentModel::default(), contents: BTreeMap::new(), attempts: 0 }
    }

    fn agent(&self) -> &Agent {
        self.agent.as_ref().unwrap()
    }

    fn next_content(&mut self) -> Vec<u8> {
        self.attempts += 1;
        let word = VOCABULARY[(self.attempts as usize * 7) % VOCABULARY.len()];
        format!("canary-{:06}-qz {word}", self.attempts).into_bytes()
    }

    /// A vector of `dimension` numbers no other vector holds (so its bytes can be searched
    /// for), or with `shape` one the engine must refuse: empty, not finite, all zeros or one
    /// number longer.
    fn next_vector(&mut self, dimension: usize, shape: u8) -> Vec<f32> {
        self.attempts += 1;
        let mut vector: Vec<f32> = (0..dimension as u64)
            .map(|position| {
                let number = (self.attempts * 8 + position) as f32 * 0.37 + 1.0;
                if (self.attempts + position) % 3 == 0 {
                    -number
                } else {
                    number
                }
            })
            .collect();
        match shape % 12 {
            0 => Vec::new(),
            1 => {
                vector[usize::from(shape) % dimension] = f32::INFINITY;
                vector
            }
            2 => vec![0.0; dimension],
            3 => {
                vector.push(1.0);
                vector
            }
            _ => vector,
        }
    }

    /// The dimension of a new vector: the agent's, or with none alive one of 2 to 4.
    fn dimension(&self, choice: u8) -> usize {
        self.model.vector_dimension().unwrap_or(2 + usize::from(choice) % 3)
    }

    fn run(&mut self, operation: &Operation) {
        match operation {
            Operation::AddLot => {
                let content = self.next_content();
                let id = self.agent().add_lot("source", &content).unwrap();
                assert_eq!(id.get(), self.model.add_lot("source", &content));
                self.contents.insert(id.get(), content);
            }
            Operation::Remember(choices) => {
                let legs = pick_legs(&self.model, choices);
                let content = self.next_content();
                let actual = self.agent().remember(&content, &to_legs(&legs)).map(Id::get);
                let expected = self.model.remember(&content, &legs);
                assert_eq!(actual, expected, "remember {legs:?}");
                if let Ok(id) = actual {
                    self.contents.insert(id, content);
                }
            }
            Operation::Recall { target, strict, erase } => {
                let id = pick(&self.model, *target);
                let (mode, removal) = (mode(*strict), removal(*erase));
                let previewed = self.agent().preview_recall_with(Id::from(id), mode, removal).map(ids);
                let actual = self.agent().recall(Id::from(id), mode, removal).map(ids);
                assert_eq!(previewed, actual, "the preview of recall {id} strict={strict} erase={erase}");
                let expected = self.model.recall(id, mode, removal);
                assert_eq!(actual, expected, "recall {id} strict={strict} erase={erase}");
                if *erase {
                    self.check_erased_text_is_gone();
                    self.check_erased_vectors_are_gone();
                }
            }
            Operation::Preview { target, strict, erase } => {
                let id = pick(&self.model, *target);
                let (mode, removal) = (mode(*strict), removal(*erase));
                let actual = self.agent().preview_recall_with(Id::from(id), mode, removal).map(ids);
                if !*erase {
                    let untrusted = self.agent().preview_recall(Id::from(id), mode).map(ids);
                    assert_eq!(untrusted, actual, "preview_recall is the Untrusted preview");
                }
                let expected = self.model.preview_with(id, mode, removal);
                assert_eq!(actual, expected, "preview {id}");
            }
            Operation::Batch { lots, memories, vectors } => self.run_batch(*lots, memories, vectors),
            Operation::SetVector { target, shape } => {
                let id = pick(&self.model, *target);
                let vector = self.next_vector(self.dimension(*target), *shape);
                let actual = self.agent().set_vector(Id::from(id), &vector);
                let expected = self.model.set_vector(id, &vector);
                assert_eq!(actual, expected, "set_vector {id} {vector:?}");
                if actual.is_ok() {
                    assert_eq!(self.agent().has_vector(Id::from(id)), Ok(true));
                }
            }
            Operation::Search { words, probe } => {
                let query = self.query(words);
                let probe = self.probe(*probe);
                self.check_searches(&query, &probe);
            }
            Operation::Compact => {
                self.agent().compact().unwrap();
                self.model.compact();
                for (id, content) in &self.contents {
                    if is_dead(&self.model, *id) {
                        assert!(
                            cheesedb_tests::files_containing(self.folder.path(), content).is_empty(),
                            "{id} after compact"
                        );
                    }
                }
                self.check_erased_vectors_are_gone();
            }
            Operation::Reopen => {
                let fingerprint = self.agent().verify().unwrap();
                let query = "canary brie gouda";
                let before = hit_ids(&self.agent().search(query, usize::MAX).unwrap(), &self.model, "before reopen");
                self.agent = None;
                let store = open_store(self.folder.path());
                self.agent = Some(store.open_agent(&self.token).unwrap());
                assert_eq!(self.agent().verify().unwrap(), fingerprint);
                assert_eq!(self.agent().report().dropped_bytes, 0);
                let after = hit_ids(&self.agent().search(query, usize::MAX).unwrap(), &self.model, "after reopen");
                assert_eq!(before, after, "search({query:?}) after reopen");
            }
        }
        assert_eq!(ids(self.agent().lots().unwrap()), self.model.alive_lots());
        assert_eq!(ids(self.agent().memories().unwrap()), self.model.alive_memories());
        self.check_recalled_text_is_hidden();
        // Every operation, a recall above all, leaves every search as the model says.
        let probe = self.probe(0);
        self.check_searches("canary", &probe);
    }

    /// A query of the words `choices` pick: of a node's content (alive or recalled), of the
    /// vocabulary, or none that is stored.
    fn query(&self, choices: &[(u8, u8)]) -> String {
        let words: Vec<String> = choices
            .iter()
            .map(|(node, word)| match word % 4 {
                0 | 1 => {
                    let mut words = Vec::new();
                    if let Some(content) = self.contents.get(&pick(&self.model, *node)) {
                        cheesedb_core::internal::search::for_each_word(content, |found| words.push(found.to_string()));
                    }
                    words.get(usize::from(*word) % words.len().max(1)).cloned().unwrap_or_default()
                }
                2 => VOCABULARY[usize::from(*word) % VOCABULARY.len()].to_uppercase(),
                _ => "nowhere".to_string(),
            })
            .collect();
        words.join(" ")
    }

    /// A vector to search for: a node's (alive or recalled) of the agent's dimension, or a
    /// fixed one.
    fn probe(&self, choice: u8) -> Vec<f32> {
        let dimension = self.dimension(choice);
        let node = self.model.node(pick(&self.model, choice));
        match node.and_then(|node| node.vectors.last()).filter(|vector| vector.len() == dimension) {
            Some(vector) => vector.clone(),
            None => (0..dimension).map(|position| position as f32 + 0.5).collect(),
        }
    }

    /// Keyword, vector and hybrid searches against the model: the same nodes (compared as
    /// sets, since ranking ties depend on float rounding), cosines within a tolerance, never a
    /// recalled node.
    fn check_searches(&self, query: &str, probe: &[f32]) {
        let keyword = hit_ids(&self.agent().search(query, usize::MAX).unwrap(), &self.model, query);
        assert_eq!(keyword, self.model.keyword_hits(query), "search({query:?})");
        let expected = self.model.vector_hits(probe);
        let hits = self.agent().search_vector(probe, usize::MAX).unwrap();
        let found = hit_ids(&hits, &self.model, "search_vector");
        assert_eq!(found, expected.keys().copied().collect::<BTreeSet<u64>>(), "search_vector({probe:?})");
        for hit in &hits {
            let cosine = expected[&hit.id.get()];
            assert!((f64::from(hit.score) - cosine).abs() <= COSINE_TOLERANCE, "{hit:?}: cosine {cosine}");
        }
        let hybrid = hit_ids(&self.agent().search_hybrid(query, probe, usize::MAX).unwrap(), &self.model, "hybrid");
        let union: BTreeSet<u64> = keyword.union(&found).copied().collect();
        assert_eq!(hybrid, union, "search_hybrid({query:?}, {probe:?})");
        let short = hit_ids(&self.agent().search_hybrid(query, probe, 2).unwrap(), &self.model, "hybrid, 2");
        assert!(short.len() == union.len().min(2) && short.is_subset(&union), "hybrid with limit 2: {short:?}");
    }

    /// No byte string of a vector whose numbers the model says are gone is in any file.
    fn check_erased_vectors_are_gone(&self) {
        for (position, node) in self.model.nodes.iter().enumerate() {
            if node.numbers != Text::Absent {
                continue;
            }
            for vector in &node.vectors {
                let files = cheesedb_tests::files_containing(self.folder.path(), &vector_bytes(vector));
                assert!(files.is_empty(), "a vector of node {} is still in {files:?}", position + 1);
            }
        }
    }

    /// `get` never shows a recalled node's text; `audit` shows it until an Erase or a
    /// compaction takes it, and never shows erased text.
    fn check_recalled_text_is_hidden(&self) {
        for (id, content) in &self.contents {
            let node = self.agent().get(Id::from(*id)).unwrap();
            let audited = self.agent().audit(Id::from(*id)).unwrap();
            if is_dead(&self.model, *id) {
                assert_eq!(node.content(), None, "get shows the text of recalled {id}");
                assert!(audited.content().is_none() || audited.content() == Some(content.as_slice()), "audit of {id}");
            } else {
                assert_eq!(node.content(), Some(content.as_slice()), "get of alive {id}");
            }
            if is_erased(&self.model, *id) {
                assert_eq!(audited.content(), None, "audit shows the erased text of {id}");
            }
        }
    }

    fn run_batch(&mut self, lots: u8, memories: &[Vec<Vec<u8>>], vectors: &[(u8, u8)]) {
        // Ids are picked among the nodes before the batch and those it adds.
        let mut growing = self.model.clone();
        let mut writes = Vec::new();
        for _ in 0..lots {
            let content = self.next_content();
            growing.add_lot("batched", &content);
            writes.push(ModelWrite::Lot { label: "batched".to_string(), content });
        }
        for choices in memories {
            let legs = pick_legs(&growing, choices);
            let content = self.next_content();
            let _ = growing.remember(&content, &legs);
            writes.push(ModelWrite::Memory { content, legs, reads: Vec::new() });
        }
        // Vectors last, for any node (the batch's own included), some of them refused.
        for (target, shape) in vectors {
            let id = pick(&growing, *target);
            let vector = self.next_vector(self.dimension(*target), *shape);
            writes.push(ModelWrite::Vector { id, vector });
        }
        let mut expected_model = self.model.clone();
        let expected = expected_model.batch(&writes);
        let actual = self.agent().batch(|batch| {
            let mut written = Vec::new();
            for write in &writes {
                match write {
                    ModelWrite::Lot { label, content } => written.push(batch.add_lot(label, content)?.get()),
                    ModelWrite::Memory { content, legs, .. } => {
                        written.push(batch.remember(content, &to_legs(legs))?.get())
                    }
                    ModelWrite::Vector { id, vector } => batch.set_vector(Id::from(*id), vector)?,
                }
            }
            Ok(written)
        });
        assert_eq!(actual, expected, "batch");
        if let Ok(written) = actual {
            self.model = expected_model;
            let contents = writes.into_iter().filter_map(|write| match write {
                ModelWrite::Lot { content, .. } | ModelWrite::Memory { content, .. } => Some(content),
                ModelWrite::Vector { .. } => None,
            });
            for (id, content) in written.into_iter().zip(contents) {
                self.contents.insert(id, content);
            }
        }
    }

    fn check_erased_text_is_gone(&self) {
        for (id, content) in &self.contents {
            let present = !cheesedb_tests::files_containing(self.folder.path(), content).is_empty();
            // Erased text is gone; alive text stays; dead text stays until a compaction.
            if is_erased(&self.model, *id) {
                assert!(!present, "erased text of {id} is still on disk");
            } else if !is_dead(&self.model, *id) {
                assert!(present, "alive text of {id} is missing");
            }
        }
    }
}

fn open_store(folder: &Path) -> Store {
    // Small segments and frequent snapshots, so that rolls and snapshot loads happen often.
    Store::builder(folder)
        .options(Options::default().segment_size_max_bytes(4096).snapshot_after_bytes(512))
        .open()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_engine_behaves_like_the_model(operations in prop::collection::vec(operation(), 1..60)) {
        let mut harness = Harness::new();
        for operation in &operations {
            harness.run(operation);
        }
        harness.agent().verify().unwrap();
    }
}
