//! The MCP tool `search_memories`: described so a model searches before it answers, read-only,
//! never finding a forgotten source or memory, showing trust, and hybrid when embed.conf names a
//! server, with new sources and memories embedded as they are written and a failed embedding
//! never losing one.

use crate::common;

use std::collections::BTreeSet;

use common::embeddings_server::{config_of_a_server_that_is_down, Behaviour, EmbeddingsServer};
use common::mcp_process::McpProcess;
use common::Cli;
use serde_json::{json, Value};

fn served(embed_conf: Option<&str>) -> (Cli, McpProcess) {
    let cli = Cli::new();
    cli.create_agent("alice");
    if let Some(config) = embed_conf {
        std::fs::write(cli.folder().join("embed.conf"), config).unwrap();
    }
    let mut server = McpProcess::start(&cli, "alice");
    server.initialize();
    (cli, server)
}

fn ids(result: &Value) -> Vec<u64> {
    result["hits"].as_array().unwrap().iter().map(|hit| hit["id"].as_u64().unwrap()).collect()
}

/// Sources 1 to 3 and memories 4 to 6 of the reference story.
fn seed(server: &mut McpProcess) {
    for (label, text) in
        [("user_message", "I live in Pune"), ("web_page", "profile: lives in Pune"), ("weather_tool", "Pune: rain")]
    {
        server.call_ok("add_source", json!({ "label": label, "text": text }));
    }
    server.call_ok("remember", json!({ "text": "user lives in Pune", "legs": [[1], [2]] }));
    server.call_ok("remember", json!({ "text": "Pune is rainy, expect rain", "legs": [[3]] }));
    server.call_ok("remember", json!({ "text": "carry an umbrella in the rain", "legs": [[4, 5]] }));
}

#[test]
fn the_tool_tells_the_model_to_search_first_and_changes_nothing() {
    let (_cli, mut server) = served(None);
    let tools = server.request("tools/list", json!({}))["result"]["tools"].clone();
    let search = tools.as_array().unwrap().iter().find(|tool| tool["name"] == "search_memories").unwrap().clone();
    let description = search["description"].as_str().unwrap();
    assert!(description.contains("BEFORE you answer"), "{description}");
    assert!(!description.to_lowercase().contains("delete it"), "{description}");
    assert_eq!(search["annotations"]["readOnlyHint"], true);
    assert_eq!(search["annotations"]["destructiveHint"], false);
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    assert_eq!(search["inputSchema"]["properties"]["limit"]["default"], 10);
    let instructions = server.request("initialize", json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } }));
    assert!(instructions["result"]["instructions"].as_str().unwrap().contains("search_memories"));
}

#[test]
fn hits_carry_id_score_kind_and_content_and_forgotten_ones_never_come_back() {
    let (_cli, mut server) = served(None);
    seed(&mut server);
    let found = server.call_ok("search_memories", json!({ "query": "rain" }));
    assert_eq!(found["search"], "keyword");
    assert_eq!(found.get("note"), None);
    let mut found_ids = ids(&found);
    found_ids.sort_unstable();
    assert_eq!(found_ids, [3, 5, 6]);
    for hit in found["hits"].as_array().unwrap() {
        let keys: BTreeSet<&str> = hit.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = BTreeSet::from(["id", "score", "kind", "content", "trust"]);
        if hit["kind"] == "memory" {
            expected.insert("tracked_parents");
        }
        assert_eq!(keys, expected, "{hit}");
        assert_eq!(hit["trust"], "normal", "no trust.toml: every label is normal");
        assert!(hit["score"].as_f64().unwrap() > 0.0);
    }
    let source = found["hits"].as_array().unwrap().iter().find(|hit| hit["id"] == 3).unwrap();
    assert_eq!((source["kind"].clone(), source["content"].clone()), (json!("source"), json!("Pune: rain")));
    assert_eq!(ids(&server.call_ok("search_memories", json!({ "query": "rain", "limit": 1 }))).len(), 1);
    assert_eq!(server.call_ok("search_memories", json!({ "query": "snow" }))["hits"], json!([]));

    // Hidden, then erased: neither way brings it back.
    server.call_ok("forget_source", json!({ "id": 3, "erase": false }));
    assert_eq!(server.call_ok("search_memories", json!({ "query": "rain rainy umbrella" }))["hits"], json!([]));
    server.call_ok("forget_source", json!({ "id": 3, "erase": true }));
    assert_eq!(server.call_ok("search_memories", json!({ "query": "rain rainy umbrella" }))["hits"], json!([]));
    assert_eq!(ids(&server.call_ok("search_memories", json!({ "query": "Pune" }))).len(), 3);
}

#[test]
fn with_embeddings_writes_get_vectors_and_the_search_is_hybrid() {
    let embeddings = EmbeddingsServer::start(Behaviour::Vectors);
    let (_cli, mut server) = served(Some(&embeddings.config(None)));
    assert_eq!(
        server.call_ok("add_source", json!({ "label": "weather_tool", "text": "heavy rain tomorrow" })),
        json!({ "id": 1, "vector": true })
    );
    assert_eq!(
        server.call_ok("remember", json!({ "text": "rain is coming", "legs": [[1]] })),
        json!({ "id": 2, "vector": true })
    );
    server.call_ok("add_source", json!({ "label": "user_message", "text": "I cycle to work" }));
    let found = server.call_ok("search_memories", json!({ "query": "downpour" }));
    assert_eq!(found["search"], "hybrid");
    let mut best = ids(&found)[..2].to_vec();
    best.sort_unstable();
    assert_eq!(best, [1, 2], "found by meaning alone: {found}");

    server.call_ok("forget_source", json!({ "id": 1 }));
    let found = server.call_ok("search_memories", json!({ "query": "downpour rain heavy tomorrow coming" }));
    assert_eq!(ids(&found), [3], "{found}");
}

#[test]
fn a_failed_embedding_keeps_the_write_and_the_search_says_it_used_words() {
    let broken = EmbeddingsServer::start(Behaviour::ServerError);
    for config in [config_of_a_server_that_is_down(), broken.config(None)] {
        let (_cli, mut server) = served(Some(&config));
        let added = server.call_ok("add_source", json!({ "label": "weather_tool", "text": "heavy rain tomorrow" }));
        assert_eq!((added["id"].clone(), added["vector"].clone()), (json!(1), json!(false)), "{added}");
        assert!(added["note"].as_str().unwrap().contains("stored without a vector"), "{added}");
        assert!(added["vector_problem"].as_str().is_some(), "{added}");
        assert_eq!(server.call_ok("get", json!({ "id": 1 }))["content"], "heavy rain tomorrow");
        let found = server.call_ok("search_memories", json!({ "query": "rain" }));
        assert_eq!((found["search"].clone(), ids(&found)), (json!("keyword"), vec![1]));
        assert!(found["note"].as_str().unwrap().contains("keywords only"), "{found}");
    }
}
