//! Every failure is one clear line on standard error and a non-zero exit, never a trace.

use crate::common;

use common::{assert_one_clean_line, Cli};

#[test]
fn usage_errors_are_one_line_with_exit_status_two() {
    let cli = Cli::new();
    for arguments in [
        vec!["frobnicate"],
        vec!["lot", "alice"],
        vec!["get", "alice", "not-a-number"],
        vec!["recall", "alice", "-5"],
        vec!["list"],
        vec!["--no-such-flag"],
        vec!["lot", "alice", "label", "text", "--file", "x"],
    ] {
        let run = cli.run(&arguments);
        run.fails_with(2);
        assert!(run.stderr.starts_with("cheesedb: "), "{arguments:?}: {}", run.stderr);
    }
}

#[test]
fn runtime_errors_name_what_was_wrong() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let cases: [(&[&str], &str); 5] = [
        (&["get", "nobody", "1"], "nobody"),
        (&["get", "alice", "9"], "9"),
        (&["remember", "alice", "x", "--leg", "5"], "5"),
        (&["lot", "alice", "", "text"], "label"),
        (&["lot", "alice", "label", "--file", "/no/such/file"], "/no/such/file"),
    ];
    for (arguments, named) in cases {
        let message = cli.run(arguments).fails_with(2).to_owned();
        assert!(message.contains(named), "{arguments:?}: {message}");
    }
}

#[test]
fn with_json_the_error_line_is_json_too() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let run = cli.run(&["--json", "get", "alice", "9"]);
    run.fails_with(2);
    let error: serde_json::Value = serde_json::from_str(run.stderr.trim()).expect("JSON error");
    assert!(error["error"].as_str().unwrap().contains('9'));
    assert!(run.stdout.is_empty());
}

#[test]
fn a_data_folder_that_is_a_file_is_an_error_not_a_panic() {
    let cli = Cli::new();
    let file = cli.folder().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let run = cli.run(&["--dir", file.to_str().unwrap(), "agent", "list"]);
    run.fails_with(2);
}

#[test]
fn no_home_and_no_data_folder_is_explained() {
    let cli = Cli::new();
    let output = cli.command(&["agent", "list"]).env_remove("CHEESEDB_DIR").env_remove("HOME").output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_one_clean_line(&stderr);
    assert!(stderr.contains("--dir"), "{stderr}");
}

#[test]
fn a_damaged_tokens_file_is_an_error() {
    let cli = Cli::new();
    cli.create_agent("alice");
    std::fs::write(cli.folder().join("tokens"), b"{not json").unwrap();
    let message = cli.run(&["lot", "alice", "note", "x"]).fails_with(2).to_owned();
    assert!(message.contains("tokens"), "{message}");
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    let cli = Cli::new();
    cli.create_agent("alice");
    for index in 0..50 {
        cli.lot("alice", "note", &format!("note {index}"));
    }
    let mut child = cli
        .command(&["list", "alice"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));
}
