//! Two MCP servers on one store (two app windows) both work and lose no write, and a server
//! answers ping and discovery while a tool call runs.

use crate::common;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::mcp_process::McpProcess;
use common::Cli;
use serde_json::json;

const WRITES_PER_SERVER: usize = 25;

#[test]
fn two_servers_writing_at_once_lose_nothing() {
    let cli = Cli::new();
    cli.create_agent("alice");
    cli.create_agent("bob");
    let results = std::thread::scope(|scope| {
        let workers: Vec<_> = [("alice", "window-a"), ("alice", "window-b"), ("bob", "window-c")]
            .into_iter()
            .map(|(agent, window)| {
                let cli = &cli;
                scope.spawn(move || {
                    let mut server = McpProcess::start(cli, agent);
                    server.initialize();
                    let mut ids = Vec::new();
                    for index in 0..WRITES_PER_SERVER {
                        let text = format!("{window} note {index}");
                        let id = server.call_ok("add_source", json!({ "label": window, "text": text }))["id"].clone();
                        let memory =
                            server.call_ok("remember", json!({ "text": format!("{text} learned"), "legs": [[id]] }));
                        ids.push((id.as_u64().unwrap(), memory["id"].as_u64().unwrap()));
                    }
                    assert_eq!(server.finish(), Some(0));
                    (agent, window, ids)
                })
            })
            .collect();
        workers.into_iter().map(|worker| worker.join().expect("a server thread")).collect::<Vec<_>>()
    });

    let mut alice_ids = BTreeSet::new();
    for (agent, window, ids) in &results {
        for (lot, memory) in ids {
            let node = cli.json(&["get", agent, &lot.to_string()]);
            assert_eq!(node["label"], json!(window));
            let remembered = cli.json(&["get", agent, &memory.to_string()]);
            assert_eq!(remembered["legs"], json!([[lot]]));
            if *agent == "alice" {
                assert!(alice_ids.insert(*lot) && alice_ids.insert(*memory), "ids are never given twice");
            }
        }
    }
    assert_eq!(alice_ids.len(), 4 * WRITES_PER_SERVER);
    let alice = cli.json(&["list", "alice"]);
    assert_eq!(alice["lots"].as_array().map(Vec::len), Some(2 * WRITES_PER_SERVER));
    assert_eq!(alice["memories"].as_array().map(Vec::len), Some(2 * WRITES_PER_SERVER));
    let bob = cli.json(&["list", "bob"]);
    assert_eq!(bob["lots"].as_array().map(Vec::len), Some(WRITES_PER_SERVER));
    cli.json(&["verify", "alice"]);
}

#[test]
fn ping_and_discovery_are_answered_while_a_tool_call_runs() {
    // An embeddings server that takes connections and never answers: a search waits on it
    // until the timeout of embed.conf.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let cli = Cli::new();
    cli.create_agent("alice");
    let config = format!("base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"hash-words\"\ntimeout_seconds = 3\n");
    std::fs::write(cli.folder().join("embed.conf"), config).unwrap();
    let mut server = McpProcess::start(&cli, "alice");
    server.initialize();
    let search = json!({ "name": "search_memories", "arguments": { "query": "rain" } });
    server.send(&json!({ "jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": search }));
    std::thread::sleep(Duration::from_millis(300));

    let asked = Instant::now();
    server.send(&json!({ "jsonrpc": "2.0", "id": "ping", "method": "ping" }));
    assert_eq!(server.receive()["id"], "ping", "the ping is answered before the search");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    server.send(&json!({ "jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": { "_meta": meta } }));
    assert_eq!(server.receive()["id"], "probe", "discovery is answered before the search");
    assert!(asked.elapsed() < Duration::from_secs(2), "{:?}", asked.elapsed());

    let searched = server.receive();
    assert_eq!(searched["id"], "slow");
    assert_eq!(searched["result"]["structuredContent"]["search"], "keyword", "{searched}");
    drop(silent);
}

#[test]
fn a_request_still_running_when_input_ends_is_answered() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let mut server = McpProcess::start(&cli, "alice");
    server.initialize();
    let add = json!({ "name": "add_source", "arguments": { "label": "note", "text": "last words" } });
    server.send(&json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": add }));
    let (answer, status) = server.finish_reading();
    assert_eq!(answer.map(|answer| answer["result"]["structuredContent"].clone()), Some(json!({ "id": 1 })));
    assert_eq!(status, Some(0));
    assert_eq!(cli.json(&["get", "alice", "1"])["content"], "last words");
}
