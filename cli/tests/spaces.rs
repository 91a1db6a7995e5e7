//! `cheesedb space` and `--space`: members acting in a shared space, shared parents in private
//! memories (`--leg team:3`), and a recall in the space that reaches every member's memory.

use crate::common;

use common::Cli;
use serde_json::json;

#[test]
fn a_recall_with_erase_in_a_space_removes_what_members_built_on_it() {
    let cli = Cli::new();
    for agent in ["alice", "bob", "carol"] {
        cli.create_agent(agent);
    }
    assert_eq!(cli.json(&["space", "create", "team", "alice"]), json!({ "space": "team", "admin": "alice" }));
    cli.json(&["space", "grant", "alice", "team", "bob", "write"]);
    cli.json(&["space", "grant", "alice", "team", "carol", "read"]);
    let listed = cli.json(&["space", "list", "carol"]);
    assert_eq!(listed[0]["space"], "team");
    assert_eq!(listed[0]["members"][2], json!({ "name": "carol", "role": "read" }));

    let lot = cli.json(&["lot", "bob", "web", "poisoned-shared-4c1e the key is in the wiki", "--space", "team"]);
    assert_eq!(lot, json!({ "id": 1, "space": "team", "author": "bob" }));
    let found = cli.json(&["search", "carol", "wiki", "--space", "team"]);
    assert_eq!((found["hits"][0]["id"].clone(), found["hits"][0]["author"].clone()), (json!(1), json!("bob")));
    assert_eq!(cli.run(&["search", "carol", "nothing-like-it", "--space", "team"]).status, Some(1));
    let fetched = cli.json(&["get", "carol", "1", "--space", "team"]);
    assert_eq!((fetched["author"].clone(), fetched["space"].clone()), (json!("bob"), json!("team")));
    let own = cli.lot("carol", "notes", "carol-own-8812 standup at ten");
    let derived = cli.remember("carol", "carol-derived-e0f3 fetch the key", &["team:1"]);
    let either = cli.remember("carol", "either", &[&format!("team:1,{own}"), &own.to_string()]);
    assert_eq!(cli.json(&["get", "carol", &derived.to_string()])["alive"], true);
    // In JSON a shared parent is the space's node, never the member's own id standing for it.
    let shared_parent = json!({ "space": "team", "id": 1 });
    assert_eq!(cli.json(&["get", "carol", &derived.to_string()])["legs"], json!([[shared_parent]]));
    let listed = cli.json(&["list", "carol"]);
    let either_listed = listed["memories"].as_array().unwrap().iter().find(|memory| memory["id"] == either).unwrap();
    assert_eq!(either_listed["legs"], json!([[own, shared_parent], [own]]), "{listed}");
    assert_eq!(either_listed["sources"], json!([own, shared_parent]), "{listed}");
    let stand_in = cli.json(&["get", "carol", &derived_parent(&cli, derived).to_string()]);
    assert_eq!((stand_in["kind"].clone(), stand_in["space"].clone()), (json!("shared"), json!("team")));

    let preview = cli.json(&["recall", "alice", "1", "--space", "team", "--dry-run"]);
    assert_eq!(preview["members"], json!([{ "member": "carol", "removed": [derived] }]));
    let recalled = cli.json(&["recall", "alice", "1", "--space", "team", "--erase"]);
    assert_eq!(recalled["members"], json!([{ "member": "carol", "removed": [derived] }]));
    assert_eq!(cli.json(&["get", "carol", &derived.to_string()])["alive"], false);
    assert_eq!(cli.json(&["get", "carol", &either.to_string()])["alive"], true, "its own leg holds");
    for text in ["poisoned-shared-4c1e", "carol-derived-e0f3"] {
        assert_eq!(cli.run(&["find", text]).status, Some(1), "{text} is erased from every file");
    }
    assert_eq!(cli.run(&["find", "carol-own-8812"]).status, Some(0));
    assert!(cli.json(&["verify", "carol", "--space", "team"])["fingerprint"].is_string());
}

/// The member's own id that the first leg of its memory `memory` names first.
fn derived_parent(cli: &Cli, memory: u64) -> u64 {
    let graph = cli.json(&["graph", "carol"]);
    let edge = graph["edges"].as_array().unwrap().iter().find(|edge| edge["to"] == memory).unwrap().clone();
    edge["from"].as_u64().unwrap()
}

#[test]
fn roles_bound_what_a_member_does_and_a_non_member_learns_nothing() {
    let cli = Cli::new();
    for agent in ["alice", "bob", "mallory"] {
        cli.create_agent(agent);
    }
    cli.json(&["space", "create", "team", "alice"]);
    cli.json(&["space", "grant", "alice", "team", "bob", "read"]);
    let refused = cli.run(&["lot", "bob", "web", "x", "--space", "team"]).fails_with(2).to_string();
    assert!(refused.contains("write"), "{refused}");
    let outsider = cli.run(&["list", "mallory", "--space", "team"]).fails_with(2).to_string();
    let wrong_name = cli.run(&["list", "alice", "--space", "other"]).fails_with(2).to_string();
    assert_eq!(outsider.replace("team", "?"), wrong_name.replace("other", "?"));
    let bad_role = cli.run(&["space", "grant", "alice", "team", "bob", "owner"]).fails_with(2).to_string();
    assert!(bad_role.contains("read, write or admin"), "{bad_role}");
    let cross = cli.run(&["remember", "alice", "m", "--space", "team", "--leg", "other:1"]).fails_with(2).to_string();
    assert!(cross.contains("that space only"), "{cross}");
    cli.json(&["space", "revoke", "alice", "team", "bob"]);
    assert_eq!(cli.json(&["space", "list", "bob"]), json!([]));
}

#[test]
fn over_mcp_a_member_builds_on_a_shared_source_and_the_admin_s_forget_reaches_it() {
    use common::mcp_process::McpProcess;
    let cli = Cli::new();
    for agent in ["alice", "bob"] {
        cli.create_agent(agent);
    }
    cli.json(&["space", "create", "team", "alice"]);
    cli.json(&["space", "grant", "alice", "team", "bob", "read"]);
    let mut alice = McpProcess::start(&cli, "alice");
    alice.initialize();
    let mut bob = McpProcess::start(&cli, "bob");
    bob.initialize();
    let added = alice.call_ok(
        "add_source",
        json!({ "label": "web", "text": "mcp-shared-77d1 the key is in the wiki", "space": "team" }),
    );
    assert_eq!(added, json!({ "id": 1, "space": "team" }));
    let found = bob.call_ok("search_memories", json!({ "query": "wiki key", "space": "team" }));
    assert_eq!((found["hits"][0]["id"].clone(), found["hits"][0]["author"].clone()), (json!(1), json!("alice")));
    let read = bob.call_ok("get", json!({ "id": 1, "space": "team" }));
    assert_eq!((read["author"].clone(), read["trust"].clone()), (json!("alice"), json!("normal")));
    // What bob was shown of the space counts for read tracking: a memory learned after rests on it.
    let own = bob.call_ok("add_source", json!({ "label": "notes", "text": "bob-own-mcp" }))["id"].clone();
    let after_read = bob.call_ok("remember", json!({ "text": "mcp-after-read-5f0e", "legs": [[own]] }));
    assert_eq!(after_read["tracked_parents"], json!([1]), "bob's stand-in for the space's lot: {after_read}");
    let after_read = after_read["id"].as_u64().unwrap();
    let refused = bob.call_refused("add_source", json!({ "label": "web", "text": "x", "space": "team" }));
    assert!(refused.contains("write"), "{refused}");
    let derived = bob.call_ok(
        "remember",
        json!({ "text": "mcp-derived-90c3 fetch the key", "legs": [[{ "space": "team", "id": 1 }]] }),
    );
    let derived = derived["id"].as_u64().unwrap();
    let shared = bob.call_ok("get", json!({ "id": 1 }));
    assert_eq!(shared["kind"], "shared", "bob's first id stands for the space's node: {shared}");
    assert_eq!(shared["space"], "team");
    let built = bob.call_ok("get", json!({ "id": derived }));
    assert_eq!(built["legs"], json!([[{ "space": "team", "id": 1 }]]), "{built}");
    let in_space = alice.call_ok("remember", json!({ "text": "mcp-space-memory", "legs": [[1]], "space": "team" }));
    let page = bob.call_ok("list_memories", json!({ "space": "team" }));
    assert_eq!(page["memories"][0]["id"], in_space["id"], "{page}");
    assert_eq!(
        (page["memories"][0]["author"].clone(), page["memories"][0]["legs"].clone()),
        (json!("alice"), json!([[1]]))
    );
    assert_eq!(page["total"], 1);
    let dry = alice.call_ok("forget_source", json!({ "id": 1, "space": "team", "dry_run": true }));
    assert_eq!(dry["members"], json!({ "bob": [after_read, derived] }));
    let forgotten = alice.call_ok("forget_source", json!({ "id": 1, "space": "team" }));
    assert_eq!(forgotten["members"], json!({ "bob": [after_read, derived] }));
    assert_eq!(bob.call_ok("get", json!({ "id": derived }))["alive"], false);
    for text in ["mcp-shared-77d1", "mcp-derived-90c3", "mcp-after-read-5f0e"] {
        assert_eq!(cli.run(&["find", text]).status, Some(1), "{text} is erased from every file");
    }
    let outsider = bob.call_refused("get", json!({ "id": 1, "space": "other" }));
    assert!(outsider.contains("other"), "{outsider}");
}
