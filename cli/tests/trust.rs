//! Trust levels from `trust.toml`: `get`, `list` and `search` show each node's, computed from its
//! sources, and `list` and `search` leave low-trust ones out when asked; the same in this process
//! and through a memory server.

use crate::common;

use common::server_process::ServerProcess;
use common::Cli;
use serde_json::Value;

const RULES: &str = "[labels]\nuser_message = \"high\"\nweb_page = \"low\"\n";

/// The trust each node of the seeded story shows through `get`.
fn trust_of_every_node(cli: &Cli, ids: &[u64]) -> Vec<String> {
    ids.iter().map(|id| cli.json(&["get", "alice", &id.to_string()])["trust"].as_str().unwrap().to_owned()).collect()
}

fn ids_listed(listed: &Value, kind: &str) -> Vec<u64> {
    listed[kind].as_array().unwrap().iter().map(|node| node["id"].as_u64().unwrap()).collect()
}

fn check_the_story(cli: &Cli, story: [u64; 6]) {
    let [a, b, c, m1, m2, m3] = story;
    // m1 stands on {a} (high) or {b} (low): its best leg. m3 = {m1, m2}: its weakest parent.
    assert_eq!(trust_of_every_node(cli, &story), ["high", "low", "normal", "high", "normal", "normal"]);
    let listed = cli.json(&["list", "alice", "--exclude-low-trust"]);
    assert_eq!(ids_listed(&listed, "lots"), [a, c]);
    assert_eq!(ids_listed(&listed, "memories"), [m1, m2, m3]);
    assert_eq!(listed["lots"][0]["trust"], "high");
    let everything = cli.json(&["list", "alice"]);
    assert_eq!(ids_listed(&everything, "lots"), [a, b, c]);
    let found: Vec<u64> = cli.json(&["search", "alice", "Pune", "--exclude-low-trust"])["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["id"].as_u64().unwrap())
        .collect();
    assert!(!found.contains(&b) && found.contains(&a), "{found:?}");
    let nothing = cli.run(&["--json", "search", "alice", "profile", "--exclude-low-trust"]);
    assert_eq!(nothing.status, Some(1), "only a low-trust lot matches: no hit, exit status 1");
    assert_eq!(serde_json::from_str::<Value>(&nothing.stdout).unwrap()["hits"], serde_json::json!([]));
    let all = cli.json(&["search", "alice", "profile"]);
    assert_eq!(all["hits"][0]["id"], b);
    assert_eq!(all["hits"][0]["trust"], "low");
    // A recall of the high-trust source leaves m1 standing on the low one: its trust follows.
    cli.json(&["recall", "alice", &a.to_string()]);
    assert_eq!(cli.json(&["get", "alice", &m1.to_string()])["trust"], "low");
    let text = cli.run(&["get", "alice", &m1.to_string()]).ok().to_owned();
    assert!(text.contains("trust:   low"), "{text}");
}

#[test]
fn trust_is_shown_and_low_trust_left_out_in_this_process() {
    let cli = Cli::new();
    std::fs::write(cli.folder().join("trust.toml"), RULES).unwrap();
    let story = cli.seed_story("alice");
    check_the_story(&cli, story);
}

#[test]
fn trust_is_the_same_through_a_memory_server() {
    let cli = Cli::new();
    std::fs::write(cli.folder().join("trust.toml"), RULES).unwrap();
    let server = ServerProcess::start(cli.folder(), &[]);
    let story = cli.seed_story("alice");
    check_the_story(&cli, story);
    server.stop();
}

#[test]
fn a_broken_trust_file_stops_the_command_with_a_line_naming_it() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let lot = cli.lot("alice", "note", "text");
    std::fs::write(cli.folder().join("trust.toml"), "[labels]\nnote = \"sure\"\n").unwrap();
    let failed = cli.run(&["get", "alice", &lot.to_string()]);
    let message = failed.fails_with(2);
    assert!(message.contains("trust.toml") && message.contains("sure"), "{message}");
}
