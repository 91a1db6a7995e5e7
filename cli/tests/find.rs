//! `cheesedb find`: a byte search of the data folder with grep's exit status.

use crate::common;

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

/// Every text the store serves through `get` or `audit`, with many sealed segments, snapshots
/// and erasures behind it, is found by `find`.
#[test]
fn every_text_the_store_serves_is_found() {
    let cli = Cli::new();
    let token = {
        let small = cheesedb::Options::default().segment_size_max_bytes(4096).snapshot_after_bytes(512);
        let store = cheesedb::Store::builder(cli.folder()).options(small).open().unwrap();
        let token = store.create_agent("alice").unwrap();
        let agent = store.open_agent(&token).unwrap();
        for round in 0..60u64 {
            let lot = agent.add_lot("page", format!("served-lot-{round:03}-qx").as_bytes()).unwrap();
            agent.remember(format!("served-memory-{round:03}-qx").as_bytes(), &[cheesedb::Leg::from([lot])]).unwrap();
            match round % 3 {
                0 => drop(agent.recall(lot, cheesedb::Mode::Fair, cheesedb::Removal::Untrusted).unwrap()),
                1 => drop(agent.recall(lot, cheesedb::Mode::Strict, cheesedb::Removal::Erase).unwrap()),
                _ => {}
            }
        }
        token.to_string()
    };
    let files = common::files_below(cli.folder());
    assert!(files.iter().filter(|path| path.to_string_lossy().contains("segment-")).count() > 3, "{files:?}");
    assert!(files.iter().any(|path| path.ends_with("snapshot")), "{files:?}");
    let mut served = 0;
    for id in 1..=120u64 {
        let node = cli.json(&["audit", &token, &id.to_string()]);
        let Some(text) = node["content"].as_str() else { continue };
        served += 1;
        let found = cli.run(&["--json", "find", text]);
        assert_eq!(found.status, Some(0), "{id} serves {text:?} yet find says: {}", found.stdout);
    }
    assert_eq!(served, 80, "alive texts and those an Untrusted recall left");
}

/// Whatever the name of a file (the store's snapshot, erase journal, temporary files), find
/// reads it; an entry that is not a file or folder is listed, never followed, and keeps find
/// from answering "not found".
#[test]
fn files_under_any_name_are_searched_and_links_are_reported() {
    let cli = Cli::new();
    let agent_folder = cli.folder().join("agent-0000000000000001");
    std::fs::create_dir_all(&agent_folder).unwrap();
    for name in ["snapshot", "erase-journal", "segment-0000000000000001.log.tmp"] {
        std::fs::write(agent_folder.join(name), format!("xx needle in {name}")).unwrap();
    }
    std::fs::write(cli.folder().join("catalog.tmp"), b"needle").unwrap();
    let found = cli.json(&["find", "needle"]);
    assert_eq!(found["occurrences"], 4, "{found}");
    assert_eq!(found["not_searched"], json!([]));

    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("elsewhere"), b"hidden needle").unwrap();
    std::os::unix::fs::symlink(outside.path().join("elsewhere"), agent_folder.join("segment-0000000000000002.log"))
        .unwrap();
    std::os::unix::fs::symlink(outside.path(), cli.folder().join("agent-0000000000000002")).unwrap();
    let found = cli.json(&["find", "needle"]);
    assert_eq!(found["occurrences"], 4, "links are not followed: {found}");
    assert_eq!(
        found["not_searched"],
        json!(["agent-0000000000000001/segment-0000000000000002.log", "agent-0000000000000002"])
    );
    let missing = cli.run(&["find", "hidden needle"]);
    assert_eq!(missing.status, Some(2), "not found, but a link could hold it: {}", missing.stdout);
    assert!(missing.stdout.contains("not searched") && missing.stdout.contains("agent-0000000000000002"));
}
