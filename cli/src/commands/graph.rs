//! `cheesedb graph AGENT [--dot]`: every lot and memory, alive or recalled, and the legs that
//! join them, as text, as Graphviz DOT, or as JSON.

use cheesedb::{Agent, Node, NodeKind};
use serde_json::{json, Value};

use crate::arguments::GraphArguments;
use crate::commands::Context;
use crate::failure::Failure;
use crate::legs::describe_legs;
use crate::nodes::{all_nodes, LotWord, SharedParents};
use crate::output::{escaped, preview, write_stdout};
use crate::session::open_agent;

const LABEL_CHARACTERS_MAX: usize = 48;

/// Prints the graph. JSON: `{"nodes": [node...], "edges": [{"from", "to", "leg"}]}`, where an
/// edge runs from a parent to the memory whose leg number `leg` (from 0) names it (a shared
/// parent is a node of the agent too: the edge starts there, the node's legs name the space's).
pub fn run(arguments: GraphArguments, context: &Context) -> Result<(), Failure> {
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let nodes = all_nodes(&agent)?;
    if arguments.dot && !context.printer.is_json() {
        return write_stdout(&dot(&nodes));
    }
    context.printer.result(graph_json(&agent, &nodes)?, || text(&nodes))
}

fn graph_json(agent: &Agent, nodes: &[Node]) -> Result<Value, cheesedb::Error> {
    let mut edges = Vec::new();
    for node in nodes {
        if let NodeKind::Memory { legs } = &node.kind {
            for (leg_index, leg) in legs.iter().enumerate() {
                for parent in leg.parents() {
                    edges.push(json!({ "from": parent.get(), "to": node.id.get(), "leg": leg_index }));
                }
            }
        }
    }
    let mut parents = SharedParents::new(agent);
    let nodes = nodes.iter().map(|node| parents.node_json(node, LotWord::Lot)).collect::<Result<Vec<Value>, _>>()?;
    Ok(json!({ "nodes": nodes, "edges": edges }))
}

fn content_preview(node: &Node) -> String {
    match node.content() {
        Some(content) => format!("\"{}\"", preview(content, LABEL_CHARACTERS_MAX)),
        None if node.is_alive() => String::from("(text erased)"),
        None => String::from("(text not shown)"),
    }
}

fn text(nodes: &[Node]) -> String {
    if nodes.is_empty() {
        return String::from("(empty: no lots or memories yet)");
    }
    let lines: Vec<String> = nodes
        .iter()
        .map(|node| {
            let state = if node.is_alive() { "" } else { " [recalled]" };
            match &node.kind {
                NodeKind::Lot { label } => {
                    format!("[{}] lot {} {}{state}", node.id, escaped(label), content_preview(node))
                }
                NodeKind::Memory { legs } => {
                    format!("[{}] memory {}{state}  <- {}", node.id, content_preview(node), describe_legs(legs))
                }
                NodeKind::Shared { space, id } => format!("[{}] shared: node {id} of space {space}{state}", node.id),
            }
        })
        .collect();
    lines.join("\n")
}

/// Escapes text for a double-quoted DOT string.
fn dot_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// DOT: lots as folders, memories as boxes, recalled nodes dashed and grey. A leg with several
/// parents goes through a small point, so "all of these" reads apart from "any of these legs".
fn dot(nodes: &[Node]) -> String {
    let mut lines = vec![
        String::from("digraph cheesedb {"),
        String::from("  rankdir=LR;"),
        String::from("  node [fontname=\"Helvetica\"];"),
    ];
    for node in nodes {
        let id = node.id;
        let style = if node.is_alive() { "" } else { ", style=dashed, color=gray50, fontcolor=gray50" };
        let (shape, heading) = match &node.kind {
            NodeKind::Lot { label } => ("folder", format!("{id}: {}", escaped(label))),
            NodeKind::Memory { .. } => ("box", format!("{id}")),
            NodeKind::Shared { space, id: shared } => ("folder", format!("{id}: node {shared} of space {space}")),
        };
        let label = dot_escape(&format!("{heading}\n{}", content_preview(node))).replace('\n', "\\n");
        lines.push(format!("  n{id} [shape={shape}, label=\"{label}\"{style}];"));
        let NodeKind::Memory { legs } = &node.kind else { continue };
        for (leg_index, leg) in legs.iter().enumerate() {
            match leg.parents() {
                [parent] => lines.push(format!("  n{parent} -> n{id};")),
                parents => {
                    let joint = format!("leg{id}_{leg_index}");
                    lines.push(format!("  {joint} [shape=point];"));
                    for parent in parents {
                        lines.push(format!("  n{parent} -> {joint} [arrowhead=none];"));
                    }
                    lines.push(format!("  {joint} -> n{id};"));
                }
            }
        }
    }
    lines.push(String::from("}"));
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_strings_are_escaped() {
        assert_eq!(dot_escape(r#"say "hi" \ bye"#), r#"say \"hi\" \\ bye"#);
    }
}
