//! `cheesedb find`: a byte search of the data folder with grep's exit status.

mod common;

use common::Cli;
use serde_json::json;

#[test]
fn found_text_exits_zero_and_names_the_files_and_counts() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let found = cli.run(&["find", "Pune"]);
    let text = found.ok();
    assert!(text.contains("segment-") && text.contains(": 5"), "{text}");

    let value = cli.run(&["--json", "find", "Pune"]);
    assert_eq!(value.status, Some(0));
    let value: serde_json::Value = serde_json::from_str(&value.stdout).unwrap();
    assert_eq!(value["found"], true);
    assert_eq!(value["occurrences"], 5);
    assert_eq!(value["files"].as_array().map(Vec::len), Some(1));
    assert!(value["files"][0]["path"].as_str().unwrap().starts_with("agent-"));
}

#[test]
fn missing_text_exits_one_like_grep() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let missing = cli.run(&["find", "snow in Pune"]);
    assert_eq!(missing.status, Some(1));
    assert!(missing.stderr.is_empty());
    let value = cli.run(&["--json", "find", "snow in Pune"]);
    assert_eq!(value.status, Some(1));
    let value: serde_json::Value = serde_json::from_str(&value.stdout).unwrap();
    assert_eq!((value["found"].clone(), value["files"].clone()), (json!(false), json!([])));
}

#[test]
fn errors_exit_two() {
    let cli = Cli::new();
    cli.run(&["find", ""]).fails_with(2);
    let missing_folder = cli.folder().join("nowhere");
    cli.run(&["--dir", missing_folder.to_str().unwrap(), "find", "x"]).fails_with(2);
}

#[test]
fn every_file_is_searched_not_only_the_store() {
    let cli = Cli::new();
    std::fs::create_dir_all(cli.folder().join("deep/inside")).unwrap();
    std::fs::write(cli.folder().join("deep/inside/leftover.tmp"), b"xx needle xx needle").unwrap();
    let value = cli.run(&["--json", "find", "needle"]);
    let value: serde_json::Value = serde_json::from_str(&value.stdout).unwrap();
    assert_eq!(value["files"], json!([{ "path": "deep/inside/leftover.tmp", "occurrences": 2 }]));
}
