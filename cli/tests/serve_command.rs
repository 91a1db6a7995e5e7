//! With a memory server running for the data folder, the command and `cheesedb mcp` go through
//! it (the server holds the store, so opening it themselves would wait for its lock), with the
//! same output; without one, or with a socket left by a killed server, they open the store
//! themselves.

use crate::common;

use std::time::{Duration, Instant};

use common::mcp_process::McpProcess;
use common::server_process::ServerProcess;
use common::Cli;
use serde_json::json;

/// Well below the 10 s a command waits for a store lock: a command that tried to open the
/// store held by the server would take at least that long.
const THROUGH_THE_SERVER_MAX: Duration = Duration::from_secs(5);

/// The operations of the agent's access log, and the process ids that did them.
fn logged(cli: &Cli, agent: &str) -> Vec<(String, u64)> {
    let entries = cli.json(&["log", agent]);
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| (entry["operation"].as_str().unwrap().to_owned(), entry["pid"].as_u64().unwrap()))
        .collect()
}

#[test]
fn every_subcommand_goes_through_a_running_server_with_the_same_output() {
    let cli = Cli::new();
    let server = ServerProcess::start(cli.folder(), &[]);
    let started = Instant::now();
    let [a, b, _c, m1, _m2, m3] = cli.seed_story("alice");
    cli.create_agent("bob");
    assert_eq!(cli.json(&["agent", "list"])["agents"].as_array().map(Vec::len), Some(2));
    let memory = cli.json(&["get", "alice", &m3.to_string()]);
    assert_eq!(memory["content"], "carry an umbrella");
    assert_eq!(memory["trust"], "normal");
    assert_eq!(cli.json(&["list", "alice"])["memories"].as_array().map(Vec::len), Some(3));
    assert_eq!(cli.json(&["search", "alice", "umbrella"])["hits"][0]["id"], m3);
    assert_eq!(cli.json(&["recall", "alice", &a.to_string(), "--dry-run"])["removed"], json!([]));
    let recalled = cli.json(&["recall", "alice", &b.to_string(), "--strict"]);
    assert_eq!(recalled["removed"], json!([m1, m3]), "{recalled}");
    assert!(cli.json(&["verify", "alice"])["fingerprint"].is_string());
    assert_eq!(cli.json(&["compact", "alice"]), json!({ "compacted": true }));
    assert!(cli.json(&["report", "alice"])["records"].as_u64().unwrap() > 0);
    assert!(cli.run(&["graph", "alice", "--dot"]).ok().contains("digraph"));
    assert_eq!(cli.json(&["agent", "delete", "bob"])["deleted"], "bob");
    assert!(started.elapsed() < THROUGH_THE_SERVER_MAX, "took {:?}: a command waited for the lock", started.elapsed());

    // --read-only is kept through the server: reads work, writes are refused before a request.
    assert_eq!(cli.json(&["--read-only", "get", "alice", &a.to_string()])["alive"], true);
    let refused = cli.run(&["--read-only", "lot", "alice", "note", "text"]);
    assert!(refused.fails_with(2).contains("read-only"), "{}", refused.fails_with(2));
    server.stop();

    // Every command above was a client of the server: its log names their processes, none ours.
    let operations = logged(&cli, "alice");
    let names: Vec<&str> = operations.iter().map(|(operation, _)| operation.as_str()).collect();
    for expected in ["add_lot", "remember", "get", "recall", "verify", "compact", "report"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    assert!(operations.iter().all(|(_, pid)| *pid != u64::from(std::process::id())));
    // The store, opened in this process once the server stopped, has what the commands wrote.
    assert_eq!(cli.json(&["get", "alice", &a.to_string()])["content"], "I live in Pune");
}

#[test]
fn mcp_tool_calls_go_through_a_running_server() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let server = ServerProcess::start(cli.folder(), &[]);
    let mut app = McpProcess::start(&cli, "alice");
    app.initialize();
    let source = app.call_ok("add_source", json!({ "label": "web_page", "text": "Pune: rain" }))["id"].clone();
    // A command at the same time: both are clients of one server.
    let lot = cli.lot("alice", "note", "from the shell");
    let read = app.call_ok("get", json!({ "id": lot }));
    assert_eq!(read["content"], "from the shell");
    let memory = app.call_ok("remember", json!({ "text": "it rains in Pune", "legs": [[source]] }));
    // The get above was tracked by the MCP session, so the shell's lot is a parent too.
    assert_eq!(memory["tracked_parents"], json!([lot]), "{memory}");
    app.finish();
    server.stop();
    let operations = logged(&cli, "alice");
    let names: Vec<&str> = operations.iter().map(|(operation, _)| operation.as_str()).collect();
    assert!(names.contains(&"add_lot") && names.contains(&"remember"), "{names:?}");
}

#[test]
fn a_socket_left_by_a_killed_server_is_passed_by_and_the_store_opened_here() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let server = ServerProcess::start(cli.folder(), &[]);
    let socket = server.socket.clone();
    server.kill();
    assert!(socket.exists(), "SIGKILL leaves the socket");
    let started = Instant::now();
    let lot = cli.lot("alice", "note", "written without a server");
    assert!(started.elapsed() < THROUGH_THE_SERVER_MAX);
    assert_eq!(cli.json(&["get", "alice", &lot.to_string()])["content"], "written without a server");
    // And a new server replaces the stale socket and serves what was written meanwhile.
    let server = ServerProcess::start(cli.folder(), &[]);
    assert_eq!(cli.json(&["get", "alice", &lot.to_string()])["content"], "written without a server");
    server.stop();
}
