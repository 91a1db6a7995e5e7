//! `cheesedb agent create|list|delete` and the tokens file.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::Cli;
use serde_json::json;

#[test]
fn create_prints_the_token_once_and_saves_it_readable_by_the_owner_only() {
    let cli = Cli::new();
    let created = cli.create_agent("alice");
    let token = created["token"].as_str().expect("a token");
    assert!(token.starts_with("cheesedb-") && token.len() == "cheesedb-".len() + 64);
    assert_eq!(created["name"], "alice");

    let tokens_file = cli.folder().join("tokens");
    let mode = std::fs::metadata(&tokens_file).expect("tokens file").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(std::fs::read_to_string(&tokens_file).unwrap().contains(token));

    // Later commands name the agent; the token is never printed again.
    let listed = cli.run(&["agent", "list"]);
    assert!(listed.ok().contains("alice") && !listed.stdout.contains(token));
}

#[test]
fn create_in_text_form_warns_that_the_token_is_shown_once() {
    let cli = Cli::new();
    let text = cli.run(&["agent", "create", "alice"]).ok().to_owned();
    assert!(text.contains("token: cheesedb-"));
    assert!(text.contains("only this once"));
}

#[test]
fn list_shows_agents_in_creation_order_and_whether_their_token_is_saved() {
    let cli = Cli::new();
    assert_eq!(cli.json(&["agent", "list"]), json!({ "agents": [] }));
    cli.create_agent("bob");
    cli.create_agent("alice");
    let listed = cli.json(&["agent", "list"]);
    assert_eq!(
        listed,
        json!({ "agents": [
            { "name": "bob", "encrypted": false, "token_saved": true },
            { "name": "alice", "encrypted": false, "token_saved": true }
        ] })
    );
}

#[test]
fn a_second_agent_with_the_same_name_is_refused() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let message = cli.run(&["agent", "create", "alice"]).fails_with(2).to_owned();
    assert!(message.contains("alice"), "{message}");
}

#[test]
fn delete_removes_the_agent_its_files_and_its_saved_token() {
    let cli = Cli::new();
    let token = cli.create_agent("alice")["token"].as_str().unwrap().to_owned();
    cli.lot("alice", "note", "secret text");
    assert_eq!(cli.json(&["agent", "delete", "alice"]), json!({ "deleted": "alice" }));
    assert_eq!(cli.json(&["agent", "list"]), json!({ "agents": [] }));
    assert!(!std::fs::read_to_string(cli.folder().join("tokens")).unwrap().contains(&token));
    assert!(cli.run(&["find", "secret text"]).status == Some(1), "the agent's files are gone");
    cli.run(&["get", "alice", "1"]).fails_with(2);
    cli.run(&["agent", "delete", "alice"]).fails_with(2);
}

#[test]
fn delete_names_what_it_left_in_place_and_the_other_agents_keep_working() {
    let cli = Cli::new();
    cli.create_agent("alice");
    cli.create_agent("bob");
    cli.lot("bob", "note", "bob keeps this");
    let folder = cli.folder().join("agent-0000000000000001");
    assert!(folder.is_dir(), "alice's folder is the first agent folder");
    std::fs::write(folder.join("notes.txt"), b"an operator's file").unwrap();
    let deleted = cli.json(&["agent", "delete", "alice"]);
    assert_eq!(deleted["deleted"], "alice");
    let left = deleted["left_behind"].as_array().expect("the stray file is named");
    assert_eq!(left.len(), 1, "{deleted}");
    assert_eq!(left[0]["path"], "agent-0000000000000001/notes.txt");
    assert!(cli.run(&["get", "bob", "1"]).ok().contains("bob keeps this"));
    let text = Cli::new();
    text.create_agent("carol");
    std::fs::write(text.folder().join("agent-0000000000000001").join("stray"), b"x").unwrap();
    let printed = text.run(&["agent", "delete", "carol"]).ok().to_owned();
    assert!(printed.contains("left in place") && printed.contains("stray"), "{printed}");
    assert_eq!(std::fs::read(folder.join("notes.txt")).unwrap(), b"an operator's file");
}

#[test]
fn a_token_can_stand_in_for_the_name() {
    let cli = Cli::new();
    let token = cli.create_agent("alice")["token"].as_str().unwrap().to_owned();
    std::fs::remove_file(cli.folder().join("tokens")).unwrap();
    let message = cli.run(&["lot", "alice", "note", "x"]).fails_with(2).to_owned();
    assert!(message.contains("token"), "{message}");
    assert_eq!(cli.json(&["lot", &token, "note", "x"]), json!({ "id": 1 }));
}

#[test]
fn names_that_are_not_plain_words_work() {
    let cli = Cli::new();
    for name in ["../../etc", "a b", "ünïcödé", "--looks-like-a-flag"] {
        let created = cli.run(&["--json", "agent", "create", "--", name]);
        assert_eq!(created.json()["name"], name);
        assert_eq!(cli.json(&["lot", "--", name, "note", "x"]), json!({ "id": 1 }));
    }
    assert!(!cli.folder().join("../../etc").join("catalog").exists());
}
