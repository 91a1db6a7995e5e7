//! Lots and memories as JSON and as text, and the sources a memory was learned from.

use std::collections::{BTreeSet, HashMap};

use cheesedb::{Agent, Error, Id, Leg, Node, NodeKind};
use serde_json::{json, Map, Value};

use crate::output::content_json;

/// The word for a lot in JSON: `lot` on the command line, `source` for models over MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LotWord {
    /// `"kind": "lot"`.
    Lot,
    /// `"kind": "source"`.
    Source,
}

/// Legs as JSON: an array of arrays of ids.
pub fn legs_json(legs: &[Leg]) -> Value {
    Value::from(
        legs.iter().map(|leg| leg.parents().iter().map(|id| id.get()).collect::<Vec<u64>>()).collect::<Vec<_>>(),
    )
}

/// Ids as JSON: an array of numbers.
pub fn ids_json(ids: &[Id]) -> Value {
    Value::from(ids.iter().map(|id| id.get()).collect::<Vec<u64>>())
}

/// The parents a memory got from read tracking, as text: ` (from reads: 3, 5)`, or nothing.
pub fn describe_tracked(tracked: &[Id]) -> String {
    if tracked.is_empty() {
        return String::new();
    }
    let list = tracked.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    format!(" (from reads: {list})")
}

/// One node as JSON: `id`, `kind`, `label` (lots), `legs` (memories) or `space` and `space_id`
/// (shared nodes), `alive`, `content`
/// (null once erased) and `content_encoding` (`utf-8` or `hex`, when there is content).
pub fn node_json(node: &Node, lot_word: LotWord) -> Value {
    let mut object = Map::new();
    object.insert("id".into(), json!(node.id.get()));
    match &node.kind {
        NodeKind::Lot { label } => {
            let kind = match lot_word {
                LotWord::Lot => "lot",
                LotWord::Source => "source",
            };
            object.insert("kind".into(), json!(kind));
            object.insert("label".into(), json!(label));
        }
        NodeKind::Memory { legs } => {
            object.insert("kind".into(), json!("memory"));
            object.insert("legs".into(), legs_json(legs));
            object.insert("tracked_parents".into(), ids_json(node.tracked_parents()));
        }
        NodeKind::Shared { space, id } => {
            object.insert("kind".into(), json!("shared"));
            object.insert("space".into(), json!(space));
            object.insert("space_id".into(), json!(id.get()));
        }
    }
    object.insert("alive".into(), json!(node.is_alive()));
    match node.content() {
        Some(content) => {
            let (text, encoding) = content_json(content);
            object.insert("content".into(), text);
            object.insert("content_encoding".into(), json!(encoding));
        }
        None => {
            object.insert("content".into(), Value::Null);
        }
    }
    Value::Object(object)
}

/// Every lot and memory of `agent`, alive or recalled, in id order. Ids are sequential from 1
/// and never reused, so the first unknown id ends the list.
pub fn all_nodes(agent: &Agent) -> Result<Vec<Node>, Error> {
    let mut nodes = Vec::new();
    for number in 1.. {
        match agent.get(Id::from(number)) {
            Ok(node) => nodes.push(node),
            Err(Error::UnknownId { .. }) => break,
            Err(error) => return Err(error),
        }
    }
    Ok(nodes)
}

/// Finds the lots each memory was learned from, through every leg and every memory between,
/// reading each node once.
#[derive(Debug)]
pub struct SourceFinder<'agent> {
    agent: &'agent Agent,
    parents_of: HashMap<u64, Option<Vec<Id>>>,
}

impl<'agent> SourceFinder<'agent> {
    /// A finder reading from `agent`.
    pub fn new(agent: &'agent Agent) -> SourceFinder<'agent> {
        SourceFinder { agent, parents_of: HashMap::new() }
    }

    /// The parents of `id` over all its legs; `None` for a lot.
    fn parents(&mut self, id: Id) -> Result<Option<Vec<Id>>, Error> {
        if let Some(parents) = self.parents_of.get(&id.get()) {
            return Ok(parents.clone());
        }
        let parents = match self.agent.get(id)?.kind {
            // A shared node is where the agent's own history ends, as at a lot.
            NodeKind::Lot { .. } | NodeKind::Shared { .. } => None,
            NodeKind::Memory { legs } => Some(legs.iter().flat_map(|leg| leg.parents().iter().copied()).collect()),
        };
        self.parents_of.insert(id.get(), parents.clone());
        Ok(parents)
    }

    /// The lots that `legs` reach, directly or through other memories, ascending.
    pub fn sources(&mut self, legs: &[Leg]) -> Result<Vec<Id>, Error> {
        let mut sources = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut pending: Vec<Id> = legs.iter().flat_map(|leg| leg.parents().iter().copied()).collect();
        while let Some(id) = pending.pop() {
            if !seen.insert(id) {
                continue;
            }
            match self.parents(id)? {
                None => {
                    sources.insert(id);
                }
                Some(parents) => pending.extend(parents),
            }
        }
        Ok(sources.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_found_through_memories() {
        let folder = tempfile::tempdir().unwrap();
        let store = cheesedb::Store::open(folder.path()).unwrap();
        let agent = store.open_agent(&store.create_agent("a").unwrap()).unwrap();
        let a = agent.add_lot("x", b"a").unwrap();
        let b = agent.add_lot("x", b"b").unwrap();
        let c = agent.add_lot("x", b"c").unwrap();
        let m1 = agent.remember(b"m1", &[Leg::from([a]), Leg::from([b])]).unwrap();
        let m2 = agent.remember(b"m2", &[Leg::from([c])]).unwrap();
        let legs = [Leg::from([m1, m2])];
        assert_eq!(SourceFinder::new(&agent).sources(&legs).unwrap(), vec![a, b, c]);
        assert_eq!(all_nodes(&agent).unwrap().len(), 5);
    }

    #[test]
    fn erased_content_is_null() {
        let folder = tempfile::tempdir().unwrap();
        let store = cheesedb::Store::open(folder.path()).unwrap();
        let agent = store.open_agent(&store.create_agent("a").unwrap()).unwrap();
        let a = agent.add_lot("web_page", b"text").unwrap();
        let value = node_json(&agent.get(a).unwrap(), LotWord::Source);
        assert_eq!(
            value,
            json!({"id": 1, "kind": "source", "label": "web_page", "alive": true, "content": "text", "content_encoding": "utf-8"})
        );
        agent.recall(a, cheesedb::Mode::Fair, cheesedb::Removal::Erase).unwrap();
        let value = node_json(&agent.get(a).unwrap(), LotWord::Lot);
        assert_eq!(value["content"], Value::Null);
        assert_eq!(value["alive"], json!(false));
    }
}
