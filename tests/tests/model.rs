//! Random operation sequences against the reference model the simulator checks against too:
//! every result (refusals included, error for error), every alive set and every erasure must
//! match, across compactions and reopens.

use std::collections::BTreeMap;
use std::path::Path;

use cheesedb::{Agent, Error, Id, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_sim::model::{AgentModel, Text};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Operation {
    AddLot,
    Remember(Vec<Vec<u8>>),
    Recall { target: u8, strict: bool, erase: bool },
    Preview { target: u8, strict: bool, erase: bool },
    Batch { lots: u8, memories: Vec<Vec<Vec<u8>>> },
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
        1 => (0..3u8, prop::collection::vec(legs(), 0..3)).prop_map(|(lots, memories)| Operation::Batch { lots, memories }),
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
        format!("canary-{:06}-qz", self.attempts).into_bytes()
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
            Operation::Batch { lots, memories } => self.run_batch(*lots, memories),
            Operation::Compact => {
                self.agent().compact().unwrap();
                for (id, content) in &self.contents {
                    if is_dead(&self.model, *id) {
                        assert!(
                            cheesedb_tests::files_containing(self.folder.path(), content).is_empty(),
                            "{id} after compact"
                        );
                    }
                }
            }
            Operation::Reopen => {
                let fingerprint = self.agent().verify().unwrap();
                self.agent = None;
                let store = open_store(self.folder.path());
                self.agent = Some(store.open_agent(&self.token).unwrap());
                assert_eq!(self.agent().verify().unwrap(), fingerprint);
                assert_eq!(self.agent().report().dropped_bytes, 0);
            }
        }
        assert_eq!(ids(self.agent().lots().unwrap()), self.model.alive_lots());
        assert_eq!(ids(self.agent().memories().unwrap()), self.model.alive_memories());
        self.check_recalled_text_is_hidden();
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

    fn run_batch(&mut self, lots: u8, memories: &[Vec<Vec<u8>>]) {
        let mut expected_model = self.model.clone();
        let mut planned = Vec::new();
        let mut expected: Result<Vec<u64>, Error> = Ok(Vec::new());
        for _ in 0..lots {
            let content = self.next_content();
            let id = expected_model.add_lot("batched", &content);
            planned.push((None, content));
            if let Ok(ids) = expected.as_mut() {
                ids.push(id);
            }
        }
        for choices in memories {
            let legs = pick_legs(&expected_model, choices);
            let content = self.next_content();
            if expected.is_ok() {
                match expected_model.remember(&content, &legs) {
                    Ok(id) => expected.as_mut().map(|ids| ids.push(id)).unwrap_or_default(),
                    Err(refusal) => expected = Err(refusal),
                }
            }
            planned.push((Some(legs), content));
        }
        let actual = self.agent().batch(|batch| {
            let mut written = Vec::new();
            for (legs, content) in &planned {
                let id = match legs {
                    None => batch.add_lot("batched", content)?,
                    Some(legs) => batch.remember(content, &to_legs(legs))?,
                };
                written.push(id.get());
            }
            Ok(written)
        });
        assert_eq!(actual, expected, "batch");
        if let Ok(written) = actual {
            self.model = expected_model;
            for (id, (_, content)) in written.into_iter().zip(planned) {
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
