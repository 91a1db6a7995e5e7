//! Two MCP servers on one store (two app windows) both work and lose no write.

mod common;

use std::collections::BTreeSet;

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
