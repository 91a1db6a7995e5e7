//! `cheesedb get AGENT ID`: one lot or memory. A recalled one is shown without its text.

use cheesedb::{Id, Node, NodeKind};
use serde_json::{json, Value};

use crate::arguments::AgentAndId;
use crate::commands::Context;
use crate::failure::Failure;
use crate::legs::describe_legs;
use crate::nodes::{describe_tracked, LotWord, SharedParents};
use crate::output::escaped;
use crate::session::open_agent;

/// Prints the node: JSON `{"id", "kind", "label"|"legs" and "tracked_parents", "alive", "content",
/// "content_encoding", "trust"}`,
/// with `content` null for a recalled node.
pub fn run(arguments: AgentAndId, context: &Context) -> Result<(), Failure> {
    if let Some(space) = &arguments.space {
        return crate::commands::space::get(context, &arguments.agent, space, Id::from(arguments.id), false);
    }
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let node = agent.get(Id::from(arguments.id))?;
    let trust = agent.trust(node.id)?;
    let mut value = SharedParents::new(&agent).node_json(&node, LotWord::Lot)?;
    if let Value::Object(fields) = &mut value {
        fields.insert("trust".into(), json!(trust.as_str()));
    }
    let space_name = value.get("space").and_then(Value::as_str).map(String::from);
    context.printer.result(value, || {
        let mut text = describe(&node, "(recalled: not shown; see cheesedb audit)", space_name.as_deref());
        text.push_str(&format!("\ntrust:   {}", trust.as_str()));
        text
    })
}

/// The node as text; `absent` stands where content is missing, and `space_name` names the space
/// of a shared node.
pub fn describe(node: &Node, absent: &str, space_name: Option<&str>) -> String {
    let mut lines = vec![format!("id:      {}", node.id)];
    match &node.kind {
        NodeKind::Lot { label } => {
            lines.push(String::from("kind:    lot"));
            lines.push(format!("label:   {}", escaped(label)));
        }
        NodeKind::Memory { legs } => {
            lines.push(String::from("kind:    memory"));
            lines.push(format!("legs:    {}{}", describe_legs(legs), describe_tracked(node.tracked_parents())));
        }
        NodeKind::Shared { space, id } => {
            let space = space_name.map_or_else(|| format!("number {space}"), escaped);
            lines.push(String::from("kind:    shared"));
            lines.push(format!("space:   {space}, node {id} (its text is the space's)"));
            lines.push(format!("alive:   {}", if node.is_alive() { "yes" } else { "no (recalled)" }));
            return lines.join("\n");
        }
    }
    lines.push(format!("alive:   {}", if node.is_alive() { "yes" } else { "no (recalled)" }));
    match node.content() {
        Some(content) => lines.push(format!("content: {}", escaped(&String::from_utf8_lossy(content)))),
        None => lines.push(format!("content: {absent}")),
    }
    lines.join("\n")
}
