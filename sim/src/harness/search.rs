//! The search check: keyword, vector and hybrid searches of one agent, compared with the
//! model's. Run inside every full check (so after every crash and reopen, and at the end of
//! every seed) and as a workload step of its own, so that a search meets an index the engine
//! kept in step with recalls, Erases and compactions, not only one just rebuilt from the log.
//!
//! Keyword results are compared as sets (ranking ties depend on float rounding); every list
//! must be ordered best first and hold no recalled node.

use std::collections::{BTreeMap, BTreeSet};

use cheesedb_core::internal::search::for_each_word;
use cheesedb_core::{AgentEngine, Error, Hit, Id};

use super::world::{Step, Stop, World};
use crate::canary;
use crate::model::{AgentModel, Text};
use crate::storage::SimStorage;

/// How far a vector search's score may be from the model's cosine (computed in f64).
const COSINE_TOLERANCE: f64 = 1e-4;
/// The limit of the hybrid search that must cut its list.
const SHORT_LIMIT: usize = 5;
/// A word no content holds.
const ABSENT_WORD: &str = "nowhere";

/// What a search found wrong: the engine's answer, or damage it reported.
enum Wrong {
    Violation(String),
    Failed(Error),
}

impl From<Error> for Wrong {
    fn from(error: Error) -> Wrong {
        Wrong::Failed(error)
    }
}

/// The alive-node ids of `hits`, checked: no id twice, none recalled, best first.
fn checked_ids(hits: &[Hit], model: &AgentModel, what: &str) -> Result<BTreeSet<u64>, Wrong> {
    let mut ids = BTreeSet::new();
    for hit in hits {
        let id = hit.id.get();
        if model.node(id).is_some_and(|node| !node.alive) {
            return Err(Wrong::Violation(format!("{what} returned recalled node {id}")));
        }
        if !ids.insert(id) {
            return Err(Wrong::Violation(format!("{what} returned node {id} twice")));
        }
    }
    let descending = hits.windows(2).all(|pair| matches!(pair, [first, second] if first.score >= second.score));
    if !descending || hits.iter().any(|hit| hit.score.is_nan()) {
        let scores: Vec<f32> = hits.iter().map(|hit| hit.score).collect();
        return Err(Wrong::Violation(format!("{what} is not ordered best first: scores {scores:?}")));
    }
    Ok(ids)
}

/// Ids whose text the model is unsure of: a search may or may not find them.
fn unsure(model: &AgentModel) -> BTreeSet<u64> {
    model
        .ids()
        .zip(&model.nodes)
        .filter(|(_, node)| node.alive && node.text == Text::Either)
        .map(|(id, _)| id)
        .collect()
}

/// A keyword search for `query` against the model.
fn check_keyword(engine: &mut AgentEngine<SimStorage>, model: &AgentModel, query: &str) -> Result<(), Wrong> {
    let what = format!("search({query:?})");
    let hits = engine.search(query, usize::MAX)?;
    let unsure = unsure(model);
    let got: BTreeSet<u64> = checked_ids(&hits, model, &what)?.difference(&unsure).copied().collect();
    let expected: BTreeSet<u64> = model.keyword_hits(query).difference(&unsure).copied().collect();
    if got != expected {
        return Err(Wrong::Violation(format!(
            "{what} found {:?}, the model expects {:?}",
            got.difference(&expected)
                .map(|id| format!("+{id}"))
                .chain(expected.difference(&got).map(|id| format!("-{id}")))
                .collect::<Vec<_>>(),
            expected
        )));
    }
    let short = engine.search(query, SHORT_LIMIT)?;
    let short_ids = checked_ids(&short, model, &format!("search({query:?}, {SHORT_LIMIT})"))?;
    if short.len() != hits.len().min(SHORT_LIMIT) || !short_ids.is_subset(&checked_ids(&hits, model, &what)?) {
        return Err(Wrong::Violation(format!(
            "search({query:?}, {SHORT_LIMIT}) found {short_ids:?}, not {SHORT_LIMIT} of the {} hits without a limit",
            hits.len()
        )));
    }
    Ok(())
}

/// A vector search for `probe` against the model: every alive vector, scored by its cosine.
fn check_vector(engine: &mut AgentEngine<SimStorage>, model: &AgentModel, probe: &[f32]) -> Result<(), Wrong> {
    let what = format!("search_vector(a vector of {} numbers)", probe.len());
    let hits = engine.search_vector(probe, usize::MAX)?;
    let expected = model.vector_hits(probe);
    let got = checked_ids(&hits, model, &what)?;
    let expected_ids: BTreeSet<u64> = expected.keys().copied().collect();
    if got != expected_ids {
        return Err(Wrong::Violation(format!("{what} found {got:?}, the model expects {expected_ids:?}")));
    }
    for hit in &hits {
        let cosine = expected.get(&hit.id.get()).copied().unwrap_or(f64::NAN);
        if (f64::from(hit.score) - cosine).abs() > COSINE_TOLERANCE || hit.score.is_nan() {
            return Err(Wrong::Violation(format!(
                "{what}: node {} scores {}, its cosine is {cosine}",
                hit.id, hit.score
            )));
        }
    }
    Ok(())
}

/// A hybrid search: without a limit, exactly the nodes either search finds; with one, some of
/// them; never a recalled node.
fn check_hybrid(
    engine: &mut AgentEngine<SimStorage>,
    model: &AgentModel,
    query: &str,
    probe: &[f32],
) -> Result<(), Wrong> {
    let what = format!("search_hybrid({query:?}, a vector of {} numbers)", probe.len());
    let hits = engine.search_hybrid(query, probe, usize::MAX)?;
    let unsure = unsure(model);
    let got: BTreeSet<u64> = checked_ids(&hits, model, &what)?.difference(&unsure).copied().collect();
    let mut expected = model.keyword_hits(query);
    expected.extend(model.vector_hits(probe).keys());
    let expected: BTreeSet<u64> = expected.difference(&unsure).copied().collect();
    if got != expected {
        return Err(Wrong::Violation(format!("{what} found {got:?}, the model expects {expected:?}")));
    }
    let short = engine.search_hybrid(query, probe, SHORT_LIMIT)?;
    let short_ids = checked_ids(&short, model, &format!("{what} with limit {SHORT_LIMIT}"))?;
    if short.len() != hits.len().min(SHORT_LIMIT) {
        return Err(Wrong::Violation(format!(
            "{what} with limit {SHORT_LIMIT} found {short_ids:?} of {} hits",
            hits.len()
        )));
    }
    Ok(())
}

/// `has_vector` of every alive node, and of a recalled and an unknown one.
fn check_has_vector(engine: &mut AgentEngine<SimStorage>, model: &AgentModel) -> Result<(), Wrong> {
    for (id, node) in model.ids().zip(&model.nodes) {
        let got = engine.has_vector(Id::from(id));
        let expected =
            if node.alive { Ok(node.vector.is_some()) } else { Err(Error::AlreadyRecalled { id: Id::from(id) }) };
        if got != expected && !(node.alive && node.numbers == Text::Either) {
            return Err(Wrong::Violation(format!("has_vector({id}) is {got:?}, the model expects {expected:?}")));
        }
    }
    let unknown = model.next_id();
    let got = engine.has_vector(Id::from(unknown));
    if got != Err(Error::UnknownId { id: Id::from(unknown) }) {
        return Err(Wrong::Violation(format!("has_vector of unknown id {unknown} is {got:?}")));
    }
    Ok(())
}

/// The words of the content of node `id` (none for an unknown id).
fn words_of(model: &AgentModel, id: u64) -> Vec<String> {
    let mut words = Vec::new();
    if let Some(node) = model.node(id) {
        for_each_word(&node.content, |word| words.push(word.to_string()));
    }
    words
}

impl World {
    /// The search step: the searches of agent `index`, checked, with faults off.
    pub(crate) fn search(&mut self, index: usize) -> Step {
        self.storage.disarm_crash();
        self.storage.suspend_faults(true);
        let result = self.check_search(index).and_then(|()| self.read_through_search(index));
        self.storage.suspend_faults(false);
        match result {
            // A silent fault the engine cannot see (a write that landed elsewhere) may cost a
            // node's text from the log the index is built from: judged as at a reopen.
            Err(Stop::Violation(message)) => self.excuse_silent_loss(index, message),
            other => other,
        }
    }

    /// Searches as a model would before it writes: for a word of the newest alive node, a few
    /// hits, each noted as read, so the next memory the workload writes depends on them. The
    /// word is taken, not drawn, so the seed's draws stay as they were.
    fn read_through_search(&mut self, index: usize) -> Step {
        let slot = self.slot(index)?;
        let newest = slot.model.nodes.iter().rev().find(|node| node.alive && node.text == Text::Present);
        let Some(word) = newest.and_then(|node| node.words.iter().next().cloned()) else { return Ok(()) };
        let Some(engine) = slot.engine.as_mut() else { return Ok(()) };
        match engine.search(&word, 3) {
            Ok(hits) => {
                for hit in hits {
                    slot.session.note(hit.id.get());
                }
                Ok(())
            }
            Err(error) if error.is_corruption() || matches!(error, Error::Io { .. }) => {
                self.corruption(&error, "searching before a write")
            }
            Err(error) => Err(Stop::Violation(format!("a search before a write failed: {error}"))),
        }
    }

    /// Checks the searches of agent `index` against its model. Faults must be off.
    pub(crate) fn check_search(&mut self, index: usize) -> Step {
        self.settle_vectors_in_doubt(index)?;
        let queries = self.draw_queries(index)?;
        let probes = self.draw_probes(index)?;
        let hybrid = (self.random.index(queries.len().max(1)), self.random.index(probes.len().max(1)));
        let slot = self.slot(index)?;
        let name = slot.name.clone();
        let model = &slot.model;
        let engine =
            slot.engine.as_mut().ok_or_else(|| Stop::Violation(format!("harness error: agent {name} not open")))?;
        let mut searches = 0;
        let mut checked = || -> Result<(), Wrong> {
            for query in &queries {
                check_keyword(engine, model, query)?;
                searches += 2;
            }
            for probe in &probes {
                check_vector(engine, model, probe)?;
                searches += 1;
            }
            if let (Some(query), Some(probe)) = (queries.get(hybrid.0), probes.get(hybrid.1)) {
                check_hybrid(engine, model, query, probe)?;
                searches += 2;
            }
            check_has_vector(engine, model)
        };
        let result = checked();
        self.stats.searches_checked += searches;
        match result {
            Ok(()) => Ok(()),
            Err(Wrong::Violation(message)) => Err(Stop::Violation(format!("agent {name}: {message}"))),
            Err(Wrong::Failed(error)) if error.is_corruption() || matches!(error, Error::Io { .. }) => {
                self.corruption(&error, &format!("searching agent {name}"))
            }
            Err(Wrong::Failed(error)) => Err(Stop::Violation(format!("agent {name}: a search failed: {error}"))),
        }
    }

    /// Alive nodes whose vectors an Erase cut short may have taken (see `reconcile_agent`):
    /// the engine says whether each still has one, and the model follows.
    fn settle_vectors_in_doubt(&mut self, index: usize) -> Step {
        let slot = self.slot(index)?;
        let Some(engine) = slot.engine.as_mut() else { return Ok(()) };
        let mut failed = None;
        for (position, node) in slot.model.nodes.iter_mut().enumerate() {
            if !node.alive || node.numbers != Text::Either || node.vector.is_none() {
                continue;
            }
            match engine.has_vector(Id::from(position as u64 + 1)) {
                Ok(true) => {}
                Ok(false) => node.vector = None,
                Err(error) => {
                    failed = Some(error);
                    break;
                }
            }
        }
        match failed {
            Some(error) => self.corruption(&error, "settling a vector in doubt"),
            None => Ok(()),
        }
    }

    /// Queries of one to three words: words of a recalled node (which must never be found
    /// through them), of an alive node, of the vocabulary (sometimes capitalised), one that no
    /// content holds; and now and then the empty query.
    fn draw_queries(&mut self, index: usize) -> Result<Vec<String>, Stop> {
        let model = self.slot(index)?.model.clone();
        let alive: Vec<u64> = model.ids().filter(|id| model.is_alive(*id)).collect();
        let dead: Vec<u64> = model.ids().filter(|id| !model.is_alive(*id)).collect();
        let mut queries = Vec::new();
        for round in 0..3 {
            let mut words = Vec::new();
            for part in 0..self.random.between(1, 3) {
                let source = if round == 0 && part == 0 { 0 } else { self.random.below(5) };
                let word = match source {
                    0 | 1 => {
                        let pool = if source == 0 && !dead.is_empty() { &dead } else { &alive };
                        let id = pool.get(self.random.index(pool.len())).copied().unwrap_or(1);
                        let words = words_of(&model, id);
                        words.get(self.random.index(words.len())).cloned()
                    }
                    2 | 3 => {
                        let vocabulary = canary::vocabulary();
                        let word = vocabulary.get(self.random.index(vocabulary.len())).copied().unwrap_or("the");
                        Some(if self.random.chance(0.3) { word.to_uppercase() } else { word.to_string() })
                    }
                    _ => Some(ABSENT_WORD.to_string()),
                };
                words.extend(word);
            }
            let separator = if self.random.chance(0.2) { ", " } else { " " };
            queries.push(words.join(separator));
        }
        if self.random.chance(0.1) {
            queries.push(String::new());
        }
        Ok(queries)
    }

    /// Vectors to search for: an alive node's, a recalled node's (of the agent's dimension),
    /// and one of random numbers.
    fn draw_probes(&mut self, index: usize) -> Result<Vec<Vec<f32>>, Stop> {
        let model = self.slot(index)?.model.clone();
        let dimension = self.vector_dimension_for(&model);
        let mut probes = Vec::new();
        let alive: Vec<&Vec<f32>> =
            model.nodes.iter().filter(|node| node.alive).filter_map(|node| node.vector.as_ref()).collect();
        if let Some(vector) = alive.get(self.random.index(alive.len())) {
            probes.push((*vector).clone());
        }
        let dead: Vec<&Vec<f32>> = model
            .nodes
            .iter()
            .filter(|node| !node.alive)
            .filter_map(|node| node.vector.as_ref())
            .filter(|vector| vector.len() == dimension)
            .collect();
        if let Some(vector) = dead.get(self.random.index(dead.len())) {
            probes.push((*vector).clone());
        }
        let random: Vec<f32> =
            (0..dimension).map(|_| self.random.below(1 << 24) as f32 / (1u32 << 22) as f32 - 2.0).collect();
        if random.iter().any(|number| *number != 0.0) {
            probes.push(random);
        }
        Ok(probes)
    }

    /// Whether the engine holds the vectors of `after` rather than those of the model, when an
    /// unacknowledged write set vectors and changed nothing else: each vector that differs is
    /// searched for, and every score must be `after`'s.
    pub(crate) fn vectors_follow(&mut self, index: usize, after: &AgentModel) -> Result<bool, Stop> {
        self.storage.suspend_faults(true);
        let result = self.vectors_follow_with_faults_off(index, after);
        self.storage.suspend_faults(false);
        result
    }

    fn vectors_follow_with_faults_off(&mut self, index: usize, after: &AgentModel) -> Result<bool, Stop> {
        let slot = self.slot(index)?;
        let probes: Vec<Vec<f32>> = after
            .nodes
            .iter()
            .zip(&slot.model.nodes)
            .filter(|(then, now)| then.alive && then.vector != now.vector)
            .filter_map(|(then, _)| then.vector.clone())
            .collect();
        let Some(engine) = slot.engine.as_mut() else { return Ok(false) };
        for probe in &probes {
            let hits = match engine.search_vector(probe, usize::MAX) {
                Ok(hits) => hits,
                Err(Error::InvalidVector { .. }) => return Ok(false),
                Err(error) => return self.corruption(&error, "searching a vector in doubt").map(|()| false),
            };
            let expected: BTreeMap<u64, f64> = after.vector_hits(probe);
            let matches = hits.len() == expected.len()
                && hits.iter().all(|hit| {
                    expected
                        .get(&hit.id.get())
                        .is_some_and(|cosine| (f64::from(hit.score) - cosine).abs() <= COSINE_TOLERANCE)
                });
            if !matches {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
