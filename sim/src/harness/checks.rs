//! The full check of an agent against its model, and the byte search for erased text.

use std::collections::BTreeMap;

use cheesedb_core::{Id, Mode, TrustRules};

use super::markers::first_mismatched_marker;
use super::recovery::MARKER_MISMATCH_PASSED;
use super::sealed::IN_THE_CLEAR;
use super::world::{Step, Stop, World};
use crate::canary;
use crate::compare::{compare_node, shape_matches, Mismatch};
use crate::model::Text;
use crate::storage::FaultKind;

impl World {
    /// Checks agent `index` in full: shape, every node, verify, previews, erased text; after a
    /// clean reopen without faults, also that open repaired nothing. Faults are off meanwhile.
    pub(crate) fn check_agent(&mut self, index: usize, clean: bool) -> Step {
        // A check is not part of the workload: no crash and no fault interrupts it.
        self.storage.disarm_crash();
        self.storage.suspend_faults(true);
        let result = self.check_agent_with_faults_off(index, clean);
        self.storage.suspend_faults(false);
        result
    }

    fn check_agent_with_faults_off(&mut self, index: usize, clean: bool) -> Step {
        let faults_now = self.storage.fault_counts().total();
        let nothing_happened = clean && faults_now == self.faults_at_last_check;
        let preview_count = 6;
        let mut previews = Vec::new();
        {
            let slot = self.slot(index)?;
            let alive: Vec<u64> = slot.model.ids().filter(|id| slot.model.is_alive(*id)).collect();
            previews.extend(alive.iter().copied().take(preview_count));
        }
        let extra: Vec<u64> = (0..preview_count).map(|_| self.random.next_u64()).collect();
        let storage = self.storage.clone();
        let slot = self.slot(index)?;
        let name = slot.name.clone();
        let engine =
            slot.engine.as_ref().ok_or_else(|| Stop::Violation(format!("harness error: agent {name} not open")))?;
        let model = &mut slot.model;
        if !shape_matches(engine, model) {
            return Err(Stop::Violation(format!(
                "agent {name}: the engine has {} nodes, alive lots {:?}, alive memories {:?}; the model has {} nodes, alive lots {:?}, alive memories {:?}",
                engine.node_count(),
                engine.alive_lots().iter().map(|id| id.get()).collect::<Vec<_>>(),
                engine.alive_memories().iter().map(|id| id.get()).collect::<Vec<_>>(),
                model.nodes.len(),
                model.alive_lots(),
                model.alive_memories()
            )));
        }
        let mut corrupt = None;
        for id in 1..=model.next_id() {
            // A recall hides: `get` withholds a recalled node's text even while it is on disk.
            if model.node(id).is_some_and(|node| !node.alive)
                && engine.get(Id::from(id)).is_ok_and(|node| node.content().is_some())
            {
                return Err(Stop::Violation(format!("agent {name}: get shows the text of recalled node {id}")));
            }
            // `audit` shows what is on disk, which the model follows.
            match compare_node(model, id, engine.audit(Id::from(id))) {
                Ok(Some(text)) => {
                    if let Some(node) = model.nodes.get_mut(id as usize - 1) {
                        node.text = text;
                    }
                }
                Ok(None) => {}
                Err(Mismatch::Corrupt(error)) => {
                    corrupt = Some(error);
                    break;
                }
                Err(Mismatch::Violation(message)) => {
                    return Err(Stop::Violation(format!(
                        "agent {name}, node {id}: {message} (open reported {:?})",
                        engine.report()
                    )));
                }
            }
        }
        if corrupt.is_none() {
            let verified = match slot.kept {
                Some(kept) => engine.verify_extends(&kept),
                None => engine.verify(),
            };
            match verified {
                Ok(fingerprint) if fingerprint == engine.head() => {
                    let paths: Vec<String> = engine
                        .segments_to_verify()
                        .map(|places| places.into_iter().map(|place| place.path).collect())
                        .unwrap_or_default();
                    if let Some((path, offset)) = first_mismatched_marker(&storage, &paths) {
                        return Err(Stop::Violation(format!(
                            "agent {name}: {MARKER_MISMATCH_PASSED} at {path} offset {offset} does not match its batch"
                        )));
                    }
                }
                Ok(fingerprint) => {
                    return Err(Stop::Violation(format!(
                        "agent {name}: verify returned {fingerprint}, the head is {}",
                        engine.head()
                    )))
                }
                Err(error) if error.is_corruption() || matches!(error, cheesedb_core::Error::Io { .. }) => {
                    corrupt = Some(error)
                }
                Err(error) => return Err(Stop::Violation(format!("agent {name}: verify failed: {error}"))),
            }
        }
        if let Some(error) = corrupt {
            return self.corruption(&error, &format!("checking agent {name}"));
        }
        // Previews of the first alive nodes and of a few drawn at random, in both modes.
        let alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
        for draw in extra {
            if let Some(id) = alive.get((draw % alive.len().max(1) as u64) as usize) {
                previews.push(*id);
            }
        }
        for id in previews {
            for mode in [Mode::Fair, Mode::Strict] {
                let expected = model.preview(id, mode);
                let got = engine
                    .preview_recall(Id::from(id), mode)
                    .map(|ids| ids.iter().map(|id| id.get()).collect::<Vec<u64>>());
                if got != expected {
                    return Err(Stop::Violation(format!(
                        "agent {name}: preview_recall({id}, {mode:?}) is {got:?}, the model expects {expected:?}"
                    )));
                }
            }
        }
        if nothing_happened && engine.report().repaired_anything() {
            return Err(Stop::Violation(format!(
                "agent {name}: a clean reopen without faults repaired something: {:?}",
                engine.report()
            )));
        }
        slot.kept = Some(engine.head());
        self.check_erased_text(&format!("checking agent {name}"))?;
        self.check_keys(index, &format!("checking agent {name}"), true)?;
        self.check_trust(index)?;
        self.check_search(index)
    }

    /// Checks the trust level of every node of agent `index` against the model's, computed by
    /// its own rule from its own labels and legs. Faults must be off.
    fn check_trust(&mut self, index: usize) -> Step {
        let rules = self.trust_rules.iter().fold(TrustRules::new(), |rules, (label, level)| rules.with(label, *level));
        let labels = self.trust_rules.clone();
        let expected = self.slot(index)?.model.trust_levels(&labels);
        let (engine, _) = self.engine(index)?;
        let mut failed = None;
        for (id, expected) in (1u64..).zip(&expected) {
            match engine.trust(Id::from(id), &rules) {
                Ok(level) if level == *expected => {}
                Ok(level) => {
                    return Err(Stop::Violation(format!("trust({id}) is {level}, the model expects {expected}")));
                }
                Err(error) if error.is_corruption() || matches!(error, cheesedb_core::Error::Io { .. }) => {
                    failed = Some(error);
                    break;
                }
                Err(error) => return Err(Stop::Violation(format!("trust({id}) failed: {error}"))),
            }
        }
        if let Some(error) = failed {
            return self.corruption(&error, "checking trust levels");
        }
        self.stats.trust_levels_checked += expected.len() as u64;
        Ok(())
    }

    /// Searches every image of every file for the text and the vectors of nodes whose text or
    /// vectors must be gone.
    pub(crate) fn check_erased_text(&mut self, during: &str) -> Step {
        let mut found = std::collections::BTreeSet::new();
        let mut places: BTreeMap<u64, String> = BTreeMap::new();
        let seed = self.seed;
        self.storage.visit_images(|path, bytes| {
            let before = found.len();
            canary::find_all_markers(bytes, seed, &mut found);
            if found.len() != before {
                for serial in &found {
                    places.entry(*serial).or_insert_with(|| path.to_string());
                }
            }
        });
        // An encrypted agent's text and vectors are never written in the clear, not even for a
        // moment: no fault excuses finding one.
        if let Some(serial) = found.iter().find(|serial| self.sealed_serials.contains(serial)) {
            let place = places.get(serial).cloned().unwrap_or_default();
            return Err(Stop::Violation(format!(
                "{during}: the text or a vector (serial {serial}) written to an encrypted agent is {IN_THE_CLEAR} in {place}"
            )));
        }
        // Text found only on the medium may be a lost write's stale sector, which the engine
        // cannot see until it reads the medium again: judged after a crash, right after this step.
        let lost_writes = self.storage.fault_counts().count(FaultKind::LostWrite) > 0;
        let mut served = std::collections::BTreeSet::new();
        let mut judge = false;
        if lost_writes {
            self.storage.visit_cached_images(|_, bytes| {
                canary::find_all_markers(bytes, seed, &mut served);
            });
        }
        for slot in &self.agents {
            for (position, node) in slot.model.nodes.iter().enumerate() {
                let text = canary::serial_of(&node.content).filter(|_| node.text == Text::Absent);
                let vectors = node
                    .vectors
                    .iter()
                    .filter(|_| node.numbers == Text::Absent)
                    .filter_map(|vector| canary::vector_serial_of(vector));
                let gone = text
                    .map(|serial| (serial, "the text"))
                    .into_iter()
                    .chain(vectors.map(|serial| (serial, "a vector")));
                for (serial, what) in gone {
                    if found.contains(&serial) && lost_writes && !served.contains(&serial) {
                        judge = true;
                        continue;
                    }
                    if found.contains(&serial) && lost_writes {
                        // A lost write the engine may not have read back yet (an open that resumed
                        // from a snapshot reads nothing before it): asked, it must report the damage.
                        let verified = slot.engine.as_ref().map(|engine| {
                            self.storage.suspend_faults(true);
                            let verified = engine.verify();
                            self.storage.suspend_faults(false);
                            verified
                        });
                        if let Some(Err(error)) =
                            verified.filter(|verified| verified.as_ref().is_err_and(|error| error.is_corruption()))
                        {
                            let during = format!("{during}: verify of {} after a lost write", slot.name);
                            return self.corruption(&error, &during);
                        }
                    }
                    if found.contains(&serial) {
                        let place = places.get(&serial).cloned().unwrap_or_default();
                        return Err(Stop::Violation(format!(
                            "{during}: {what} of {} node {} must be gone, but it is in {place}",
                            slot.name,
                            position + 1
                        )));
                    }
                }
            }
        }
        self.lost_write_to_judge |= judge;
        Ok(())
    }
}
