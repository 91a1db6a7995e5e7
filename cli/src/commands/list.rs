//! `cheesedb list AGENT`: the alive lots, and the alive memories with their legs and sources.

use cheesedb::{Agent, Id, NodeKind, TrustLevel};
use serde_json::{json, Value};

use crate::arguments::ListArguments;
use crate::commands::Context;
use crate::failure::Failure;
use crate::legs::describe_legs;
use crate::nodes::{describe_tracked, ids_json, SharedParents, SourceFinder};
use crate::output::{content_json, escaped, preview};
use crate::session::open_agent;

const PREVIEW_CHARACTERS_MAX: usize = 72;

/// Prints `{"lots": [{"id", "label", "content", "trust"}], "memories": [{"id", "content", "legs",
/// "sources", "trust", "tracked_parents"}]}`.
pub fn run(arguments: ListArguments, context: &Context) -> Result<(), Failure> {
    if let Some(space) = &arguments.space {
        return crate::commands::space::list_nodes(context, &arguments.agent, space);
    }
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let shown = Shown { agent: &agent, exclude_low_trust: arguments.exclude_low_trust };
    let (lots, lot_lines) = lots(&shown)?;
    let (memories, memory_lines) = memories(&shown)?;
    context.printer.result(json!({ "lots": lots, "memories": memories }), || {
        let mut text = String::from("lots:\n");
        text.push_str(&if lot_lines.is_empty() { String::from("  (none)") } else { lot_lines.join("\n") });
        text.push_str("\nmemories:\n");
        text.push_str(&if memory_lines.is_empty() { String::from("  (none)") } else { memory_lines.join("\n") });
        text
    })
}

/// The agent, and which of its nodes the list leaves out.
struct Shown<'agent> {
    agent: &'agent Agent,
    exclude_low_trust: bool,
}

impl Shown<'_> {
    /// The trust of `id`, or `None` when the list leaves it out.
    fn trust(&self, id: Id) -> Result<Option<TrustLevel>, Failure> {
        let trust = self.agent.trust(id)?;
        Ok(Some(trust).filter(|trust| !(self.exclude_low_trust && *trust == TrustLevel::Low)))
    }
}

fn lots(shown: &Shown<'_>) -> Result<(Vec<Value>, Vec<String>), Failure> {
    let agent = shown.agent;
    let mut values = Vec::new();
    let mut lines = Vec::new();
    for id in agent.lots()? {
        let Some(trust) = shown.trust(id)? else { continue };
        let node = agent.get(id)?;
        let NodeKind::Lot { label } = &node.kind else { continue };
        let content = node.content().unwrap_or_default();
        let trust = trust.as_str();
        values.push(json!({ "id": id.get(), "label": label, "content": content_json(content).0, "trust": trust }));
        lines.push(format!(
            "  [{id}] {}: {}   (trust {trust})",
            escaped(label),
            preview(content, PREVIEW_CHARACTERS_MAX)
        ));
    }
    Ok((values, lines))
}

fn memories(shown: &Shown<'_>) -> Result<(Vec<Value>, Vec<String>), Failure> {
    let agent = shown.agent;
    let mut finder = SourceFinder::new(agent);
    let mut parents = SharedParents::new(agent);
    let mut values = Vec::new();
    let mut lines = Vec::new();
    for id in agent.memories()? {
        let Some(trust) = shown.trust(id)? else { continue };
        let node = agent.get(id)?;
        let NodeKind::Memory { legs } = &node.kind else { continue };
        let source_ids = finder.sources(legs)?;
        let sources: Vec<u64> = source_ids.iter().map(|id| id.get()).collect();
        let content = node.content().unwrap_or_default();
        let trust = trust.as_str();
        let tracked = node.tracked_parents();
        values.push(json!({
            "id": id.get(),
            "content": content_json(content).0,
            "legs": parents.legs_json(legs)?,
            "sources": parents.ids_json(&source_ids)?,
            "trust": trust,
            "tracked_parents": ids_json(tracked),
        }));
        let source_list = sources.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        lines.push(format!(
            "  [{id}] {}   <- legs {}{}; sources {source_list}; trust {trust}",
            preview(content, PREVIEW_CHARACTERS_MAX),
            describe_legs(legs),
            describe_tracked(tracked)
        ));
    }
    Ok((values, lines))
}
