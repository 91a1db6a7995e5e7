//! `cheesedb list AGENT`: the alive lots, and the alive memories with their legs and sources.

use cheesedb::NodeKind;
use serde_json::{json, Value};

use crate::agent_handle::AgentHandle;
use crate::arguments::AgentOnly;
use crate::commands::remember::describe_legs;
use crate::commands::Context;
use crate::failure::Failure;
use crate::nodes::{legs_json, SourceFinder};
use crate::output::{content_json, escaped, preview};
use crate::session::open_agent;

const PREVIEW_CHARACTERS_MAX: usize = 72;

/// Prints `{"lots": [{"id", "label", "content"}], "memories": [{"id", "content", "legs", "sources"}]}`.
pub fn run(arguments: AgentOnly, context: &Context) -> Result<(), Failure> {
    let agent = open_agent(&context.folder, &arguments.agent)?;
    let (lots, lot_lines) = lots(&agent)?;
    let (memories, memory_lines) = memories(&agent)?;
    context.printer.result(json!({ "lots": lots, "memories": memories }), || {
        let mut text = String::from("lots:\n");
        text.push_str(&if lot_lines.is_empty() { String::from("  (none)") } else { lot_lines.join("\n") });
        text.push_str("\nmemories:\n");
        text.push_str(&if memory_lines.is_empty() { String::from("  (none)") } else { memory_lines.join("\n") });
        text
    })
}

fn lots(agent: &AgentHandle) -> Result<(Vec<Value>, Vec<String>), Failure> {
    let mut values = Vec::new();
    let mut lines = Vec::new();
    for id in agent.lots()? {
        let node = agent.get(id)?;
        let NodeKind::Lot { label } = &node.kind else { continue };
        let content = node.content().unwrap_or_default();
        values.push(json!({ "id": id.get(), "label": label, "content": content_json(content).0 }));
        lines.push(format!("  [{id}] {}: {}", escaped(label), preview(content, PREVIEW_CHARACTERS_MAX)));
    }
    Ok((values, lines))
}

fn memories(agent: &AgentHandle) -> Result<(Vec<Value>, Vec<String>), Failure> {
    let mut finder = SourceFinder::new(agent);
    let mut values = Vec::new();
    let mut lines = Vec::new();
    for id in agent.memories()? {
        let node = agent.get(id)?;
        let NodeKind::Memory { legs } = &node.kind else { continue };
        let sources: Vec<u64> = finder.sources(legs)?.iter().map(|id| id.get()).collect();
        let content = node.content().unwrap_or_default();
        values.push(
            json!({ "id": id.get(), "content": content_json(content).0, "legs": legs_json(legs), "sources": sources }),
        );
        let source_list = sources.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        lines.push(format!(
            "  [{id}] {}   <- legs {}; sources {source_list}",
            preview(content, PREVIEW_CHARACTERS_MAX),
            describe_legs(legs)
        ));
    }
    Ok((values, lines))
}
