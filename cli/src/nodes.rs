//! Lots and memories as JSON and as text, and the sources a memory was learned from.

use std::collections::{BTreeSet, HashMap};

use cheesedb::{Agent, Error, Id, Leg, Node, NodeKind, Space};
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

/// One node as JSON: `id`, `kind`, `label` (lots), `legs` (memories, each parent an id) or
/// `space` (a number) and `space_id` (shared nodes: [`SharedParents`] names the space), `alive`,
/// `content`
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

/// Shows what an agent's shared nodes stand for: a parent that is a shared node is
/// `{"space": NAME, "id": ID}` (its id in the space), any other parent its own id. Each node and
/// each space name is read once.
#[derive(Debug)]
pub struct SharedParents<'agent> {
    agent: &'agent Agent,
    stands_for: HashMap<u64, Option<(u64, u64)>>,
    space_names: HashMap<u64, String>,
}

impl<'agent> SharedParents<'agent> {
    /// A reader of `agent`'s shared nodes.
    pub fn new(agent: &'agent Agent) -> SharedParents<'agent> {
        SharedParents { agent, stands_for: HashMap::new(), space_names: HashMap::new() }
    }

    /// The name of space `number`.
    pub fn space_name(&mut self, number: u64) -> Result<String, Error> {
        if let Some(name) = self.space_names.get(&number) {
            return Ok(name.clone());
        }
        let name = self.agent.space_name(number)?;
        self.space_names.insert(number, name.clone());
        Ok(name)
    }

    /// The parent `id` as JSON.
    pub fn parent_json(&mut self, id: Id) -> Result<Value, Error> {
        let stands_for = match self.stands_for.get(&id.get()) {
            Some(known) => *known,
            None => {
                let known = match self.agent.get(id)?.kind {
                    NodeKind::Shared { space, id } => Some((space, id.get())),
                    NodeKind::Lot { .. } | NodeKind::Memory { .. } => None,
                };
                self.stands_for.insert(id.get(), known);
                known
            }
        };
        match stands_for {
            Some((space, in_space)) => Ok(json!({ "space": self.space_name(space)?, "id": in_space })),
            None => Ok(json!(id.get())),
        }
    }

    /// Ids as JSON, each as [`SharedParents::parent_json`] shows it.
    pub fn ids_json(&mut self, ids: &[Id]) -> Result<Value, Error> {
        ids.iter().map(|id| self.parent_json(*id)).collect::<Result<Vec<Value>, Error>>().map(Value::from)
    }

    /// Legs as JSON: an array of arrays of parents.
    pub fn legs_json(&mut self, legs: &[Leg]) -> Result<Value, Error> {
        legs.iter().map(|leg| self.ids_json(leg.parents())).collect::<Result<Vec<Value>, Error>>().map(Value::from)
    }

    /// One of the agent's own nodes as JSON, as [`node_json`] shows it, with its shared parents
    /// and, for a shared node, its space by name.
    pub fn node_json(&mut self, node: &Node, lot_word: LotWord) -> Result<Value, Error> {
        let mut value = node_json(node, lot_word);
        match &node.kind {
            NodeKind::Memory { legs } => value["legs"] = self.legs_json(legs)?,
            NodeKind::Shared { space, .. } => value["space"] = json!(self.space_name(*space)?),
            NodeKind::Lot { .. } => {}
        }
        Ok(value)
    }
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
pub struct SourceFinder<'memory> {
    read: Box<dyn Fn(Id) -> Result<Node, Error> + 'memory>,
    parents_of: HashMap<u64, Option<Vec<Id>>>,
}

impl<'memory> SourceFinder<'memory> {
    /// A finder reading from `agent`.
    pub fn new(agent: &'memory Agent) -> SourceFinder<'memory> {
        SourceFinder { read: Box::new(|id| agent.get(id)), parents_of: HashMap::new() }
    }

    /// A finder reading from a member's handle to a space.
    pub fn of_space(space: &'memory Space) -> SourceFinder<'memory> {
        SourceFinder { read: Box::new(|id| space.get(id)), parents_of: HashMap::new() }
    }

    /// The parents of `id` over all its legs; `None` for a lot.
    fn parents(&mut self, id: Id) -> Result<Option<Vec<Id>>, Error> {
        if let Some(parents) = self.parents_of.get(&id.get()) {
            return Ok(parents.clone());
        }
        let parents = match (self.read)(id)?.kind {
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
