//! Stored text, labels, names and paths never drive the terminal, and no error repeats a token.

use crate::common;

use common::Cli;
use serde_json::json;

/// An escape sequence that retitles a terminal, a carriage return that hides what came before
/// on the line, a right-to-left override and a C1 control.
const HOSTILE: &str = "evil\u{1b}]0;owned\u{7}\rfake\u{202e}txt\u{9b}2J";

fn assert_inert(output: &str, what: &str) {
    for forbidden in ['\u{1b}', '\r', '\u{7}', '\u{202e}', '\u{9b}'] {
        assert!(!output.contains(forbidden), "{what} printed {forbidden:?}: {output:?}");
    }
}

#[test]
fn every_text_output_escapes_control_characters_and_json_stays_exact() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let lot = cli.lot("alice", HOSTILE, HOSTILE);
    cli.remember("alice", HOSTILE, &[&lot.to_string()]);
    let recalled = cli.lot("alice", HOSTILE, "recalled");
    cli.run(&["recall", "alice", &recalled.to_string()]).ok();
    let agent_create = cli.run(&["agent", "create", HOSTILE]);
    assert_inert(&agent_create.stdout, "agent create");
    let runs: [&[&str]; 14] = [
        &["get", "alice", "1"],
        &["get", "alice", "2"],
        &["audit", "alice", "3"],
        &["list", "alice"],
        &["graph", "alice"],
        &["graph", "alice", "--dot"],
        &["find", "owned"],
        &["find", HOSTILE],
        &["report", "alice"],
        &["agent", "list"],
        &["recall", "alice", "1", "--dry-run"],
        &["search", "alice", "owned fake"],
        &["search", "alice", HOSTILE],
        &["search", "alice", "nothing\u{1b}]0;matches\u{7}"],
    ];
    for arguments in runs {
        let run = cli.run(arguments);
        assert_inert(&run.stdout, &format!("{arguments:?}"));
        assert_inert(&run.stderr, &format!("{arguments:?} on standard error"));
    }
    for arguments in
        [&["get", HOSTILE, "1"][..], &["agent", "delete", HOSTILE, "--json"][..], &["lot", HOSTILE, "x", "y"][..]]
    {
        let run = cli.run(arguments);
        assert_inert(&run.stderr, &format!("{arguments:?} on standard error"));
    }
    let shown = cli.run(&["get", "alice", "1"]).ok().to_owned();
    assert!(shown.contains("evil\\u{1b}]0;owned\\u{7}\\rfake\\u{202e}txt\\u{9b}2J"), "{shown}");
    let found = cli.run(&["search", "alice", "owned"]).ok().to_owned();
    assert!(found.contains("evil\\u{1b}]0;owned\\u{7}\\rfake\\u{202e}txt\\u{9b}2J"), "{found}");
    assert_eq!(cli.json(&["search", "alice", "owned"])["hits"][0]["content"], json!(HOSTILE));
    let node = cli.json(&["get", "alice", "1"]);
    assert_eq!((node["label"].clone(), node["content"].clone()), (json!(HOSTILE), json!(HOSTILE)));
}

#[test]
fn errors_never_repeat_a_token_or_most_of_one() {
    let cli = Cli::new();
    let token = cli.create_agent("alice")["token"].as_str().unwrap().to_owned();
    let digits = token.strip_prefix("cheesedb-").unwrap().to_owned();
    let typo = format!("cheesedb-{}g{}", &digits[..30], &digits[31..]);
    let cut = format!("cheesedb-{}", &digits[..40]);
    let no_prefix = digits.clone();
    let foreign = format!("cheesedb-{}", "ab".repeat(32));
    let cases: Vec<Vec<&str>> = vec![
        vec!["get", &typo, "1"],
        vec!["get", &cut, "1"],
        vec!["get", &no_prefix, "1"],
        vec!["get", &foreign, "1"],
        vec!["get", "alice", "1", &token],
        vec!["get", "alice", &token],
        vec!["agent", "delete", &token],
        vec!["--json", "get", &typo, "1"],
        vec!["mcp", &foreign],
    ];
    for arguments in cases {
        let run = cli.run(&arguments);
        assert_ne!(run.status, Some(0), "{arguments:?}");
        for secret in [&digits, &"ab".repeat(32)] {
            for window in secret.as_bytes().chunks(24) {
                let part = std::str::from_utf8(window).unwrap();
                assert!(!run.stderr.contains(part), "{arguments:?} repeated part of a token: {}", run.stderr);
            }
        }
    }
}

#[test]
fn a_name_that_reads_as_a_token_is_refused() {
    let cli = Cli::new();
    let run = cli.run(&["agent", "create", "cheesedb-alice"]);
    assert!(run.fails_with(2).contains("must not start with \"cheesedb-\""), "{}", run.stderr);
}

#[test]
fn a_token_file_with_swapped_entries_is_caught_before_any_read_or_write() {
    let cli = Cli::new();
    let alice = cli.create_agent("alice")["token"].as_str().unwrap().to_owned();
    let bob = cli.create_agent("bob")["token"].as_str().unwrap().to_owned();
    cli.lot("alice", "note", "alice's secret");
    let tokens = cli.folder().join("tokens");
    let swapped = serde_json::to_string(&json!({ "alice": bob, "bob": alice })).unwrap();
    std::fs::write(&tokens, swapped).unwrap();
    for arguments in [
        &["get", "alice", "1"][..],
        &["lot", "bob", "note", "mixed up"][..],
        &["list", "bob"][..],
        &["mcp", "alice"][..],
    ] {
        let run = cli.run(arguments);
        let message = run.fails_with(2);
        assert!(message.contains("opens agent \"bob\"") || message.contains("opens agent \"alice\""), "{message}");
        assert!(!message.contains(&alice[9..30]) && !message.contains(&bob[9..30]), "{message}");
    }
    // Nothing was written to either agent, and a token passed directly still works.
    assert_eq!(cli.json(&["list", &alice])["lots"].as_array().map(Vec::len), Some(1));
    assert_eq!(cli.json(&["list", &bob])["lots"].as_array().map(Vec::len), Some(0));
}
