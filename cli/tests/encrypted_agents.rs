//! Encrypted agents from the command line: `agent create --encrypted`, `agent encrypt`, the
//! marks of `agent list`, the same through a running memory server, and `cheesedb mcp` serving
//! an encrypted agent. No text of an encrypted agent is ever in a file of the data folder.

use crate::common;

use common::mcp_process::McpProcess;
use common::server_process::ServerProcess;
use common::{files_below, Cli};
use serde_json::json;

/// Whether any file below the data folder holds `needle`.
fn in_any_file(cli: &Cli, needle: &str) -> bool {
    files_below(cli.folder())
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .any(|bytes| bytes.windows(needle.len()).any(|window| window == needle.as_bytes()))
}

#[test]
fn an_agent_created_encrypted_works_and_keeps_no_text_in_the_clear() {
    let cli = Cli::new();
    let created = cli.json(&["agent", "create", "alice", "--encrypted"]);
    assert_eq!((created["name"].clone(), created["encrypted"].clone()), (json!("alice"), json!(true)));
    let text = cli.run(&["agent", "create", "bob", "--encrypted"]).ok().to_owned();
    assert!(text.contains("created encrypted agent \"bob\"") && text.contains("without the token"), "{text}");
    let lot = cli.lot("alice", "secret-label", "canary-one the user lives in Pune");
    let memory = cli.remember("alice", "canary-two the user lives in Pune", &[&lot.to_string()]);
    let got = cli.json(&["get", "alice", &memory.to_string()]);
    assert_eq!(got["content"], "canary-two the user lives in Pune");
    assert_eq!(cli.json(&["get", "alice", &lot.to_string()])["label"], "secret-label");
    assert!(!in_any_file(&cli, "canary") && !in_any_file(&cli, "secret-label"));
    assert_eq!(cli.run(&["find", "canary"]).status, Some(1), "find agrees: nothing");
    cli.json(&["verify", "alice"]);
    cli.json(&["recall", "alice", &lot.to_string(), "--erase"]);
    assert_eq!(cli.json(&["get", "alice", &memory.to_string()])["alive"], false);
    cli.json(&["verify", "alice"]);
}

#[test]
fn list_marks_encrypted_agents() {
    let cli = Cli::new();
    cli.create_agent("plain");
    cli.json(&["agent", "create", "sealed", "--encrypted"]);
    let listed = cli.json(&["agent", "list"]);
    assert_eq!(
        listed,
        json!({ "agents": [
            { "name": "plain", "encrypted": false, "token_saved": true },
            { "name": "sealed", "encrypted": true, "token_saved": true }
        ] })
    );
    let text = cli.run(&["agent", "list"]).ok().to_owned();
    assert_eq!(text.lines().collect::<Vec<_>>(), ["plain", "sealed  (encrypted)"]);
}

#[test]
fn encrypt_converts_an_agent_in_place_and_prints_its_new_fingerprint() {
    let cli = Cli::new();
    let [a, b, _c, m1, m2, m3] = cli.seed_story("alice");
    cli.json(&["recall", "alice", &b.to_string(), "--erase"]);
    let before = cli.json(&["verify", "alice"])["fingerprint"].clone();
    let listed_before = cli.json(&["list", "alice"]);
    assert!(in_any_file(&cli, "umbrella"));

    let converted = cli.json(&["agent", "encrypt", "alice"]);
    assert_eq!(converted["encrypted"], "alice");
    let fingerprint = converted["fingerprint"].as_str().unwrap().to_owned();
    assert_ne!(json!(fingerprint), before, "the history is chained anew");
    assert_eq!(cli.json(&["verify", "alice"])["fingerprint"], json!(fingerprint));
    cli.json(&["verify", "alice", "--expect", &fingerprint]);
    assert_eq!(cli.json(&["list", "alice"]), listed_before);
    for id in [a, m1, m2, m3] {
        cli.json(&["get", "alice", &id.to_string()]);
    }
    assert_eq!(cli.json(&["get", "alice", &m3.to_string()])["content"], "carry an umbrella");
    assert_eq!(cli.json(&["get", "alice", &b.to_string()])["content"], json!(null));
    for text in ["umbrella", "Pune", "user_message"] {
        assert!(!in_any_file(&cli, text), "{text:?} is still in a file");
    }
    assert_eq!(cli.json(&["agent", "list"])["agents"][0]["encrypted"], true);

    let again = cli.run(&["agent", "encrypt", "alice"]).fails_with(2).to_owned();
    assert!(again.contains("encrypted already"), "{again}");
    let unknown = cli.run(&["agent", "encrypt", "nobody"]).fails_with(2).to_owned();
    assert!(unknown.contains("no agent is named"), "{unknown}");

    let text = {
        cli.create_agent("bob");
        cli.run(&["agent", "encrypt", "bob"]).ok().to_owned()
    };
    assert!(text.contains("fingerprints kept before no longer match") && text.contains("new fingerprint: "), "{text}");
}

#[test]
fn a_running_server_creates_lists_and_encrypts() {
    let cli = Cli::new();
    let server = ServerProcess::start(cli.folder(), &[]);
    let created = cli.json(&["agent", "create", "alice", "--encrypted"]);
    assert_eq!(created["encrypted"], true);
    cli.create_agent("bob");
    let lot = cli.lot("bob", "note", "canary-served plain text");
    assert!(in_any_file(&cli, "canary-served"));
    let converted = cli.json(&["agent", "encrypt", "bob"]);
    assert_eq!(cli.json(&["verify", "bob"])["fingerprint"], converted["fingerprint"]);
    assert_eq!(cli.json(&["get", "bob", &lot.to_string()])["content"], "canary-served plain text");
    assert!(!in_any_file(&cli, "canary-served"));
    let listed = cli.json(&["agent", "list"]);
    assert_eq!(listed["agents"][0]["encrypted"], true);
    assert_eq!(listed["agents"][1]["encrypted"], true);

    // An agent a client holds open is in use: the conversion is refused, nothing changes.
    let carol_token: cheesedb::Token = cli.create_agent("carol")["token"].as_str().unwrap().parse().unwrap();
    let client = server.client();
    let held = client.open_agent(&carol_token).unwrap();
    assert!(!held.is_encrypted().unwrap());
    assert!(matches!(client.encrypt_agent(&carol_token), Err(cheesedb::Error::AgentInUse { .. })));
    drop(held);
    server.stop();
}

#[test]
fn mcp_serves_an_encrypted_agent() {
    let cli = Cli::new();
    cli.json(&["agent", "create", "alice", "--encrypted"]);
    let mut server = McpProcess::start(&cli, "alice");
    server.initialize();
    server.call_ok("add_source", json!({ "label": "user_message", "text": "canary-mcp I live in Pune" }));
    server.call_ok("remember", json!({ "text": "canary-mcp user lives in Pune", "legs": [[1]] }));
    let got = server.call_ok("get", json!({ "id": 2 }));
    assert_eq!(got["content"], "canary-mcp user lives in Pune");
    let found = server.call_ok("search_memories", json!({ "query": "Pune" }));
    assert_eq!(found["hits"].as_array().unwrap().len(), 2);
    server.call_ok("forget_source", json!({ "id": 1, "erase": true }));
    assert!(!in_any_file(&cli, "canary-mcp"));
    server.finish();
    assert!(!in_any_file(&cli, "canary-mcp"));
    cli.json(&["verify", "alice"]);
}

#[test]
fn a_client_of_an_older_protocol_hears_the_servers_version_at_the_hello_and_nothing_more() {
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    use cheesedb::protocol::{read_frame_body, read_frame_length, write_frame, Request, Response, PROTOCOL_VERSION};

    // Version 2 carries the encrypted flag of a new agent, which a version 1 peer would misread,
    // and version 3 errors a version 2 peer would not decode: the hello tells them apart before
    // any other request.
    let cli = Cli::new();
    let server = ServerProcess::start(cli.folder(), &[]);
    for older in 1..PROTOCOL_VERSION {
        let mut stream = UnixStream::connect(&server.socket).unwrap();
        let hello = Request::Hello { version: older, client: String::from("an old client") }.encode().unwrap();
        write_frame(&mut stream, &hello).unwrap();
        let length = read_frame_length(&mut stream).unwrap().expect("an answer");
        let mut body = Vec::new();
        read_frame_body(&mut stream, length, &mut body).unwrap();
        assert_eq!(Response::hello_version(&body), Some(PROTOCOL_VERSION));
        assert!(matches!(Response::decode(&body), Ok(Response::Hello { version: PROTOCOL_VERSION, .. })));
        let create = Request::CreateAgent { name: String::from("alice"), encrypted: false }.encode().unwrap();
        let _ = write_frame(&mut stream, &create);
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        assert!(rest.is_empty(), "the server closed the connection after its hello to version {older}");
    }
    assert_eq!(cli.json(&["agent", "list"]), json!({ "agents": [] }), "nothing was created");
    server.stop();
}

/// The key table of the first agent of the data folder.
fn key_table(cli: &Cli) -> std::path::PathBuf {
    cli.folder().join("agent-0000000000000001/keys")
}

/// An encrypted agent "alice" whose lots 1 and 2 hold "rain" under an epoch an Erase (of lot
/// 3) destroyed: a slot of theirs lost now can never be written again from their records.
fn alice_with_two_rainy_lots_under_a_destroyed_epoch(cli: &Cli) {
    cli.json(&["agent", "create", "alice", "--encrypted"]);
    assert_eq!(cli.lot("alice", "web", "rain in Pune"), 1);
    assert_eq!(cli.lot("alice", "tool", "rain tomorrow"), 2);
    assert_eq!(cli.lot("alice", "note", "unrelated"), 3);
    cli.json(&["recall", "alice", "3", "--erase"]);
    assert_eq!(cli.json(&["search", "alice", "rain"])["hits"].as_array().unwrap().len(), 2);
}

#[test]
fn a_search_or_a_list_that_meets_a_missing_key_fails_as_get_does() {
    let cli = Cli::new();
    alice_with_two_rainy_lots_under_a_destroyed_epoch(&cli);
    let mut table = std::fs::read(key_table(&cli)).unwrap();
    // The slot of lot 1, zeroed as an Erase would, although lot 1 is alive.
    table[64..64 + 80].fill(0);
    std::fs::write(key_table(&cli), &table).unwrap();
    let got = cli.run(&["get", "alice", "1"]).fails_with(3).to_owned();
    assert!(got.contains("key missing") && got.contains("keys"), "{got}");
    for arguments in [&["search", "alice", "rain"][..], &["list", "alice"], &["--json", "search", "alice", "rain"]] {
        let refused = cli.run(arguments).fails_with(3).to_owned();
        assert!(refused.contains("key missing") && refused.contains("keys"), "{arguments:?}: {refused}");
    }
    // Cut to its header, the table holds no key at all: every alive lot is missing its key.
    std::fs::write(key_table(&cli), &table[..64]).unwrap();
    let refused = cli.run(&["search", "alice", "rain"]).fails_with(3).to_owned();
    assert!(refused.contains("key missing") && !refused.contains("no lot or memory matches"), "{refused}");
}

#[test]
fn a_key_file_cut_inside_its_header_or_removed_is_damage_naming_the_file() {
    for (file, damage) in [("keys", "cut"), ("keys", "removed"), ("epochs", "cut"), ("epochs", "removed")] {
        let cli = Cli::new();
        alice_with_two_rainy_lots_under_a_destroyed_epoch(&cli);
        let path = cli.folder().join("agent-0000000000000001").join(file);
        match damage {
            "cut" => std::fs::write(&path, &std::fs::read(&path).unwrap()[..30]).unwrap(),
            _ => std::fs::remove_file(&path).unwrap(),
        }
        for arguments in [&["get", "alice", "1"][..], &["search", "alice", "rain"], &["verify", "alice"]] {
            let refused = cli.run(arguments).fails_with(3).to_owned();
            let reason = if damage == "cut" { "key file cut short" } else { "key file missing" };
            assert!(
                refused.contains(reason) && refused.contains(&format!("agent-0000000000000001/{file}")),
                "{file} {damage}, {arguments:?}: {refused}"
            );
        }
    }
}

#[test]
fn a_changed_byte_in_a_destroyed_epoch_slot_is_repaired_and_the_repair_reported() {
    let cli = Cli::new();
    alice_with_two_rainy_lots_under_a_destroyed_epoch(&cli);
    let path = cli.folder().join("agent-0000000000000001/epochs");
    let mut epochs = std::fs::read(&path).unwrap();
    assert_eq!(epochs.len(), 64 + 2 * 88, "the first epoch destroyed, the second in force");
    // A byte of the destroyed key part of the first epoch's slot.
    epochs[64 + 20] ^= 0x04;
    std::fs::write(&path, &epochs).unwrap();
    let run = cli.run(&["--json", "get", "alice", "2"]);
    assert_eq!(run.json()["content"], "rain tomorrow");
    assert!(run.stderr.contains("1 damaged epoch slots of destroyed epochs written again"), "{}", run.stderr);
    let report = cli.json(&["report", "alice"]);
    assert_eq!(
        (report["epoch_slots_destroyed_on_open"].clone(), report["repaired_anything"].clone()),
        (json!(0), json!(false))
    );
    // Damaged again, the report command's own open repairs it, and says so.
    std::fs::write(&path, &epochs).unwrap();
    let report = cli.json(&["report", "alice"]);
    assert_eq!(
        (report["epoch_slots_destroyed_on_open"].clone(), report["repaired_anything"].clone()),
        (json!(1), json!(true))
    );
}
