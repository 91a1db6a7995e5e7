//! Trust levels: a lot has its label's level, a memory the best over its legs of the worst over
//! each leg's parents, following what still holds it after a recall; the same after reopen,
//! erasure and compaction; and the same as a simple reference over random histories. On every
//! backend.

use std::collections::BTreeMap;

use cheesedb::{Agent, Error, Id, Leg, Mode, Options, Removal, TrustLevel, TrustRules};
use cheesedb_tests::backend::{Backend, Simulated};
use proptest::prelude::*;

use TrustLevel::{High, Low, Normal};

fn rules() -> TrustRules {
    TrustRules::new().with("user_message", High).with("web_page", Low)
}

fn open_alice<B: Backend>(place: &B) -> (cheesedb::Token, Agent<B::Storage>) {
    let store = place.open(Options::default().snapshot_after_bytes(1)).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    (token, alice)
}

/// Lots: a user message (high), a web page (low), a tool result (normal). Memories: one learned
/// from the message or the page, one from the page and the tool together, one from both.
struct Fixture {
    message: Id,
    page: Id,
    tool: Id,
    either: Id,
    together: Id,
    both: Id,
}

fn fixture<S: cheesedb::SharedStorage>(alice: &Agent<S>) -> Fixture {
    let message = alice.add_lot("user_message", b"I live in Pune").unwrap();
    let page = alice.add_lot("web_page", b"profile: lives in Pune").unwrap();
    let tool = alice.add_lot("weather_tool", b"Pune: rain").unwrap();
    let either = alice.remember(b"lives in Pune", &[Leg::from([message]), Leg::from([page])]).unwrap();
    let together = alice.remember(b"rain where they live", &[Leg::from([page, tool])]).unwrap();
    let both = alice.remember(b"carry an umbrella", &[Leg::from([either, together])]).unwrap();
    Fixture { message, page, tool, either, together, both }
}

fn levels<S: cheesedb::SharedStorage>(alice: &Agent<S>, ids: &[Id], rules: &TrustRules) -> Vec<TrustLevel> {
    ids.iter().map(|id| alice.trust_under(*id, rules).unwrap()).collect()
}

fn best_leg_of_worst_parents<B: Backend>() {
    let place = B::new();
    let (_token, alice) = open_alice(&place);
    let f = fixture(&alice);
    let all = [f.message, f.page, f.tool, f.either, f.together, f.both];
    assert_eq!(levels(&alice, &all, &rules()), [High, Low, Normal, High, Low, Low]);
    assert_eq!(levels(&alice, &all, &TrustRules::new()), [Normal; 6], "without rules every level is normal");
    let vouched = rules().with("web_page", High).with("weather_tool", High);
    assert_eq!(levels(&alice, &all, &vouched), [High; 6], "the labels are kept, the rules apply afresh");
    assert_eq!(alice.trust_under(Id::from(99), &rules()), Err(Error::UnknownId { id: Id::from(99) }));
}

fn a_recall_leaves_only_the_legs_that_still_hold<B: Backend>() {
    let place = B::new();
    let (_token, alice) = open_alice(&place);
    let f = fixture(&alice);
    // The message's recall leaves `either` standing on the page alone.
    assert_eq!(alice.recall(f.message, Mode::Fair, Removal::Untrusted).unwrap(), Vec::<Id>::new());
    assert_eq!(alice.trust_under(f.either, &rules()), Ok(Low));
    assert_eq!(alice.trust_under(f.message, &rules()), Ok(High), "a recalled lot keeps its label's level");
    // A recalled memory is judged over all its legs, as it was written.
    assert_eq!(alice.recall(f.tool, Mode::Fair, Removal::Untrusted).unwrap(), vec![f.together, f.both]);
    assert_eq!(levels(&alice, &[f.together, f.both], &rules()), [Low, Low]);
    let vouched = rules().with("web_page", High);
    assert_eq!(levels(&alice, &[f.either, f.together, f.both], &vouched), [High, Normal, Normal]);
}

fn levels_stay_through_reopen_erasure_and_compaction<B: Backend>() {
    let place = B::new();
    let (token, alice) = open_alice(&place);
    let f = fixture(&alice);
    let all = [f.message, f.page, f.tool, f.either, f.together, f.both];
    let before = levels(&alice, &all, &rules());
    drop(alice);
    let alice = place.open(Options::default()).unwrap().open_agent(&token).unwrap();
    assert_eq!(levels(&alice, &all, &rules()), before);
    alice.recall(f.tool, Mode::Fair, Removal::Erase).unwrap();
    alice.compact().unwrap();
    assert_eq!(levels(&alice, &all, &rules()), before, "an erased lot keeps its label");
    drop(alice);
    let alice = place.open(Options::default()).unwrap().open_agent(&token).unwrap();
    assert_eq!(levels(&alice, &all, &rules()), before);
}

/// A leg holds while all its parents are alive: one of two parents recalled, the leg no longer
/// counts, though its other parent is alive. The memory stands on its other leg only, and has
/// that leg's level.
fn a_leg_with_one_of_its_parents_recalled_no_longer_counts<B: Backend>() {
    let place = B::new();
    let (token, alice) = open_alice(&place);
    let message = alice.add_lot("user_message", b"I live in Pune").unwrap();
    let tool = alice.add_lot("weather_tool", b"Pune: rain").unwrap();
    let page = alice.add_lot("web_page", b"profile: lives in Pune").unwrap();
    let memory = alice.remember(b"rain where they live", &[Leg::from([message, tool]), Leg::from([page])]).unwrap();
    let vouched = rules().with("weather_tool", High);
    assert_eq!(alice.trust_under(memory, &rules()), Ok(Normal), "the message and the tool together, normal at worst");
    assert_eq!(alice.trust_under(memory, &vouched), Ok(High));
    assert_eq!(alice.recall(message, Mode::Fair, Removal::Untrusted).unwrap(), Vec::<Id>::new());
    assert!(alice.get(memory).unwrap().is_alive(), "the page still holds it");
    for rules in [rules(), vouched] {
        assert_eq!(alice.trust_under(memory, &rules), Ok(Low), "only the page's leg holds, though the tool is alive");
    }
    drop(alice);
    let alice = place.open(Options::default()).unwrap().open_agent(&token).unwrap();
    assert_eq!(alice.trust_under(memory, &rules().with("weather_tool", High)), Ok(Low), "after reopen");
}

cheesedb_tests::conformance!(
    a_leg_with_one_of_its_parents_recalled_no_longer_counts,
    best_leg_of_worst_parents,
    a_recall_leaves_only_the_legs_that_still_hold,
    levels_stay_through_reopen_erasure_and_compaction,
);

/// One step of a random history.
#[derive(Debug, Clone)]
enum Step {
    /// A lot with label number `label`.
    Lot { label: usize },
    /// A memory whose legs pick parents among the alive nodes by these numbers.
    Memory { legs: Vec<Vec<usize>> },
    /// A recall of the node picked by this number.
    Recall { pick: usize, strict: bool },
}

const LABELS: [&str; 4] = ["user_message", "web_page", "weather_tool", "file"];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..LABELS.len()).prop_map(|label| Step::Lot { label }),
        5 => prop::collection::vec(prop::collection::vec(any::<usize>(), 1..4), 1..4).prop_map(|legs| Step::Memory { legs }),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(pick, strict)| Step::Recall { pick, strict }),
    ]
}

/// The reference: every node, its label or legs, and whether it is alive.
#[derive(Debug, Default)]
struct Reference {
    labels: BTreeMap<u64, &'static str>,
    legs: BTreeMap<u64, Vec<Vec<u64>>>,
    alive: BTreeMap<u64, bool>,
}

impl Reference {
    fn is_alive(&self, id: u64) -> bool {
        self.alive.get(&id).copied().unwrap_or(false)
    }

    fn holds(&self, leg: &[u64]) -> bool {
        leg.iter().all(|parent| self.is_alive(*parent))
    }

    fn has_in_history(&self, id: u64, ancestor: u64) -> bool {
        self.legs.get(&id).is_some_and(|legs| {
            legs.iter().flatten().any(|parent| *parent == ancestor || self.has_in_history(*parent, ancestor))
        })
    }

    /// Recalls `id`; returns the memories that died with it, ascending.
    fn recall(&mut self, id: u64, strict: bool) -> Vec<u64> {
        self.alive.insert(id, false);
        let mut removed = Vec::new();
        loop {
            let dying: Vec<u64> = self
                .legs
                .iter()
                .filter(|(memory, legs)| {
                    self.is_alive(**memory)
                        && if strict {
                            self.has_in_history(**memory, id)
                        } else {
                            !legs.iter().any(|leg| self.holds(leg))
                        }
                })
                .map(|(memory, _)| *memory)
                .collect();
            if dying.is_empty() {
                break;
            }
            for memory in dying {
                self.alive.insert(memory, false);
                removed.push(memory);
            }
        }
        removed.sort_unstable();
        removed
    }

    /// The rule in its plainest form, by recursion over the (small) history.
    fn trust(&self, id: u64, rules: &TrustRules) -> TrustLevel {
        if let Some(label) = self.labels.get(&id) {
            return rules.level_of(label);
        }
        let legs = &self.legs[&id];
        let holding: Vec<&Vec<u64>> = legs.iter().filter(|leg| !self.is_alive(id) || self.holds(leg)).collect();
        holding.iter().map(|leg| leg.iter().map(|parent| self.trust(*parent, rules)).min().unwrap()).max().unwrap()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn trust_matches_the_reference(steps in prop::collection::vec(step(), 1..40), levels in prop::collection::vec(0u8..3, LABELS.len())) {
        let level = |number: u8| [Low, Normal, High][usize::from(number)];
        let rules = LABELS.iter().zip(&levels).fold(TrustRules::new(), |rules, (label, number)| rules.with(label, level(*number)));
        let place = Simulated::new();
        let (_token, alice) = open_alice(&place);
        let mut reference = Reference::default();
        for step in steps {
            let alive: Vec<u64> = reference.alive.iter().filter(|(_, alive)| **alive).map(|(id, _)| *id).collect();
            match step {
                Step::Lot { label } => {
                    let id = alice.add_lot(LABELS[label], b"a source").unwrap().get();
                    reference.labels.insert(id, LABELS[label]);
                    reference.alive.insert(id, true);
                }
                Step::Memory { legs } if !alive.is_empty() => {
                    let legs: Vec<Vec<u64>> = legs.iter().map(|leg| {
                        let mut parents: Vec<u64> = leg.iter().map(|pick| alive[pick % alive.len()]).collect();
                        parents.sort_unstable();
                        parents.dedup();
                        parents
                    }).collect();
                    let as_legs: Vec<Leg> = legs.iter().map(|leg| leg.iter().copied().map(Id::from).collect()).collect();
                    let id = alice.remember(b"a memory", &as_legs).unwrap().get();
                    reference.legs.insert(id, legs);
                    reference.alive.insert(id, true);
                }
                Step::Recall { pick, strict } if !alive.is_empty() => {
                    let id = alive[pick % alive.len()];
                    let mode = if strict { Mode::Strict } else { Mode::Fair };
                    let removed: Vec<u64> = alice.recall(Id::from(id), mode, Removal::Untrusted).unwrap().iter().map(|id| id.get()).collect();
                    prop_assert_eq!(removed, reference.recall(id, strict));
                }
                Step::Memory { .. } | Step::Recall { .. } => {}
            }
        }
        for id in reference.alive.keys() {
            prop_assert_eq!(alice.trust_under(Id::from(*id), &rules).unwrap(), reference.trust(*id, &rules), "id {}", id);
        }
    }
}
