//! `lot`, `remember`, `get` and `list`, with their JSON shapes.

use crate::common;

use common::Cli;
use serde_json::json;

#[test]
fn lot_takes_its_text_from_the_command_line_a_file_or_standard_input() {
    let cli = Cli::new();
    cli.create_agent("alice");
    assert_eq!(cli.json(&["lot", "alice", "user_message", "I live in Pune"]), json!({ "id": 1 }));

    let file = cli.folder().join("page.html");
    std::fs::write(&file, "<p>lives in Pune</p>").unwrap();
    assert_eq!(cli.json(&["lot", "alice", "web_page", "--file", file.to_str().unwrap()]), json!({ "id": 2 }));

    let piped = cli.run_with_input(&["--json", "lot", "alice", "weather_tool", "-"], b"Pune: rain");
    assert_eq!(piped.json(), json!({ "id": 3 }));

    assert_eq!(cli.json(&["get", "alice", "2"])["content"], "<p>lives in Pune</p>");
    assert_eq!(cli.json(&["get", "alice", "3"])["content"], "Pune: rain");
}

#[test]
fn a_large_source_from_standard_input_is_stored_whole() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let big = "0123456789abcdef".repeat(256 * 1024); // 4 MiB
    let piped = cli.run_with_input(&["--json", "lot", "alice", "document", "-"], big.as_bytes());
    assert_eq!(piped.json(), json!({ "id": 1 }));
    assert_eq!(cli.json(&["get", "alice", "1"])["content"].as_str().map(str::len), Some(big.len()));
}

#[test]
fn remember_takes_legs_and_get_shows_them() {
    let cli = Cli::new();
    let [a, b, c, m1, m2, m3] = cli.seed_story("alice");
    assert_eq!((a, b, c, m1, m2, m3), (1, 2, 3, 4, 5, 6));
    let memory = cli.json(&["get", "alice", "6"]);
    assert_eq!(
        memory,
        json!({ "id": 6, "kind": "memory", "legs": [[4, 5]], "tracked_parents": [], "alive": true, "content": "carry an umbrella", "content_encoding": "utf-8", "trust": "normal" })
    );
    let lot = cli.json(&["get", "alice", "1"]);
    assert_eq!(
        lot,
        json!({ "id": 1, "kind": "lot", "label": "user_message", "alive": true, "content": "I live in Pune", "content_encoding": "utf-8", "trust": "normal" })
    );
    let text = cli.run(&["get", "alice", "4"]).ok().to_owned();
    assert!(text.contains("[1] or [2]") && text.contains("user lives in Pune"), "{text}");
}

#[test]
fn list_shows_alive_lots_and_memories_with_legs_and_sources() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let listed = cli.json(&["list", "alice"]);
    assert_eq!(listed["lots"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        listed["lots"][2],
        json!({ "id": 3, "label": "weather_tool", "content": "Pune: rain", "trust": "normal" })
    );
    assert_eq!(
        listed["memories"][2],
        json!({ "id": 6, "content": "carry an umbrella", "legs": [[4, 5]], "sources": [1, 2, 3], "trust": "normal", "tracked_parents": [] })
    );
    let text = cli.run(&["list", "alice"]).ok().to_owned();
    assert!(text.contains("carry an umbrella") && text.contains("sources 1, 2, 3"), "{text}");
}

#[test]
fn a_memory_without_legs_or_on_a_bad_parent_is_refused_and_nothing_is_written() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let refusals = [
        vec!["remember", "alice", "no legs"],
        vec!["remember", "alice", "unknown parent", "--leg", "99"],
        vec!["remember", "alice", "bad leg", "--leg", "1,x"],
        vec!["remember", "alice", "empty leg", "--leg", ""],
    ];
    for arguments in refusals {
        cli.run(&arguments).fails_with(2);
    }
    cli.json(&["recall", "alice", "3"]);
    let message = cli.run(&["remember", "alice", "dead parent", "--leg", "3"]).fails_with(2).to_owned();
    assert!(message.contains('3') && message.contains("recalled"), "{message}");
    // Nothing was written: the next id is still 7.
    assert_eq!(cli.json(&["lot", "alice", "note", "x"]), json!({ "id": 7 }));
}

#[test]
fn get_of_an_unknown_id_is_an_error() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let message = cli.run(&["get", "alice", "42"]).fails_with(2).to_owned();
    assert!(message.contains("42"), "{message}");
}

#[test]
fn content_that_is_not_text_is_shown_as_hex() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let piped = cli.run_with_input(&["--json", "lot", "alice", "blob", "-"], &[0xff, 0x00, 0x10]);
    assert_eq!(piped.json(), json!({ "id": 1 }));
    let node = cli.json(&["get", "alice", "1"]);
    assert_eq!((node["content"].as_str(), node["content_encoding"].as_str()), (Some("ff0010"), Some("hex")));
}
