//! Comparing what the engine shows with what the model says.

use cheesedb_core::{AgentEngine, Error, Id, Node, NodeKind};

use crate::model::{AgentModel, ModelKind, Text};
use crate::storage::SimStorage;

/// Whether the engine's visible state is the model's: node count and alive sets.
pub fn shape_matches(engine: &AgentEngine<SimStorage>, model: &AgentModel) -> bool {
    let alive_lots: Vec<u64> = engine.alive_lots().iter().map(|id| id.get()).collect();
    let alive_memories: Vec<u64> = engine.alive_memories().iter().map(|id| id.get()).collect();
    engine.node_count() == model.nodes.len() as u64
        && alive_lots == model.alive_lots()
        && alive_memories == model.alive_memories()
}

/// How a node read back differs from the model.
pub enum Mismatch {
    /// A broken promise.
    Violation(String),
    /// The engine reported damage (corruption, or a storage error reading a known record).
    Corrupt(Error),
}

/// Compares `get(id)` with the model; returns what the model should now believe about the
/// node's text when it was uncertain.
pub fn compare_node(model: &AgentModel, id: u64, result: Result<Node, Error>) -> Result<Option<Text>, Mismatch> {
    let node = match (model.node(id), result) {
        (None, Err(Error::UnknownId { id: unknown })) if unknown.get() == id => return Ok(None),
        (None, other) => {
            return Err(Mismatch::Violation(format!("the model has no node {id}, the engine answered {other:?}")))
        }
        // A read past the end of a damaged file is reported as a storage error: damage too.
        (Some(_), Err(error)) if error.is_corruption() || matches!(error, Error::Io { .. }) => {
            return Err(Mismatch::Corrupt(error))
        }
        (Some(_), Err(error)) => return Err(Mismatch::Violation(format!("reading a known node failed: {error}"))),
        (Some(expected), Ok(node)) => (expected, node),
    };
    let (expected, node) = node;
    let kind_matches = match (&expected.kind, &node.kind) {
        // A sealed label shows exactly while the text does.
        (ModelKind::Lot { label }, NodeKind::Lot { label: got }) => match model.visible_label(expected) {
            Some(visible) => visible == got,
            None => (label == got) == node.content().is_some() && (label == got || got.is_empty()),
        },
        (ModelKind::Memory { legs, tracked }, NodeKind::Memory { legs: got }) => {
            let got: Vec<Vec<u64>> =
                got.iter().map(|leg| leg.parents().iter().map(|parent| parent.get()).collect()).collect();
            let got_tracked: Vec<u64> = node.tracked_parents().iter().map(|id| id.get()).collect();
            *legs == got && *tracked == got_tracked
        }
        _ => false,
    };
    if !kind_matches || node.id != Id::from(id) {
        return Err(Mismatch::Violation(format!(
            "node {id} reads back as {:?} (tracked parents {:?}), the model has {:?}",
            node.kind,
            node.tracked_parents(),
            expected.kind
        )));
    }
    if node.is_alive() != expected.alive {
        return Err(Mismatch::Violation(format!(
            "node {id} alive = {}, the model says {}",
            node.is_alive(),
            expected.alive
        )));
    }
    match (expected.text, node.content()) {
        (Text::Present, Some(content)) | (Text::Either, Some(content)) if content == expected.content.as_slice() => {
            Ok(Some(Text::Present))
        }
        (Text::Absent, None) | (Text::Either, None) => Ok(Some(Text::Absent)),
        (text, content) => Err(Mismatch::Violation(format!(
            "node {id} content is {}, the model says its text is {text:?}",
            match content {
                None => "gone".to_string(),
                Some(bytes) if bytes == expected.content.as_slice() => "present".to_string(),
                Some(bytes) => format!("different ({} bytes)", bytes.len()),
            }
        ))),
    }
}

/// When `before` and `after` differ only in where text and vectors are, the model that accepts
/// either for those nodes; `None` when they differ in anything visible (a vector included).
pub fn merge_uncertain(before: &AgentModel, after: &AgentModel) -> Option<AgentModel> {
    if before.nodes.len() != after.nodes.len() {
        return None;
    }
    let mut merged = before.clone();
    for (node, other) in merged.nodes.iter_mut().zip(&after.nodes) {
        if node.alive != other.alive || node.kind != other.kind || node.vector != other.vector {
            return None;
        }
        if node.text != other.text {
            node.text = Text::Either;
        }
        if node.numbers != other.numbers {
            node.numbers = Text::Either;
        }
        if other.erased && !node.erased {
            node.erase_in_doubt = true;
        }
    }
    Some(merged)
}
