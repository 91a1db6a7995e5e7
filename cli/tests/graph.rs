//! `cheesedb graph`: the provenance graph as text, DOT and JSON.

use crate::common;

use common::Cli;
use serde_json::json;

#[test]
fn json_has_every_node_and_an_edge_per_parent_of_each_leg() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.json(&["recall", "alice", "3", "--erase"]);
    let graph = cli.json(&["graph", "alice"]);
    assert_eq!(graph["nodes"].as_array().map(Vec::len), Some(6), "recalled nodes stay in the graph");
    assert_eq!(graph["nodes"][4]["alive"], false);
    assert_eq!(graph["nodes"][4]["content"], json!(null));
    assert_eq!(
        graph["edges"],
        json!([
            { "from": 1, "to": 4, "leg": 0 },
            { "from": 2, "to": 4, "leg": 1 },
            { "from": 3, "to": 5, "leg": 0 },
            { "from": 4, "to": 6, "leg": 0 },
            { "from": 5, "to": 6, "leg": 0 },
        ])
    );
}

#[test]
fn text_marks_recalled_nodes_and_shows_legs() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.json(&["recall", "alice", "3"]);
    let text = cli.run(&["graph", "alice"]).ok().to_owned();
    assert!(text.contains("[4] memory \"user lives in Pune\"  <- [1] or [2]"), "{text}");
    assert!(text.contains("[5] memory (text not shown) [recalled]"), "{text}");
    // A recall hides: the graph shows no text of a recalled node, in any form.
    assert!(!text.contains("Pune is rainy") && !text.contains("Pune: rain"), "{text}");
    let dot = cli.run(&["graph", "alice", "--dot"]).ok().to_owned();
    assert!(!dot.contains("Pune is rainy") && !dot.contains("Pune: rain"), "{dot}");
    let json = cli.json(&["graph", "alice"]).to_string();
    assert!(!json.contains("Pune is rainy") && !json.contains("Pune: rain"), "{json}");
}

#[test]
fn dot_is_a_digraph_with_a_joint_for_a_leg_of_several_parents() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.lot("alice", "quote", "she said \"hi\" \\ bye");
    let dot = cli.run(&["graph", "alice", "--dot"]).ok().to_owned();
    assert!(dot.starts_with("digraph cheesedb {") && dot.trim_end().ends_with('}'), "{dot}");
    assert!(dot.contains("n1 -> n4;") && dot.contains("n2 -> n4;"));
    assert!(dot.contains("leg6_0 [shape=point];") && dot.contains("leg6_0 -> n6;"));
    assert!(dot.contains(r#"she said \"hi\" \\ bye"#), "quotes are escaped: {dot}");
}

#[test]
fn an_empty_agent_has_an_empty_graph() {
    let cli = Cli::new();
    cli.create_agent("alice");
    assert_eq!(cli.json(&["graph", "alice"]), json!({ "nodes": [], "edges": [] }));
    assert!(cli.run(&["graph", "alice"]).ok().contains("empty"));
}
