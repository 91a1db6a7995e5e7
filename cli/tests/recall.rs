//! `cheesedb recall` in its modes, and what it leaves on disk.

use crate::common;

use common::Cli;
use serde_json::json;

#[test]
fn a_fair_recall_removes_exactly_what_depended_on_the_source() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let recalled = cli.json(&["recall", "alice", "3"]);
    assert_eq!(recalled, json!({ "recalled": 3, "removed": [5, 6], "dry_run": false, "repeated": false }));
    assert_eq!(cli.json(&["get", "alice", "4"])["alive"], true);
    assert_eq!(cli.json(&["get", "alice", "6"])["alive"], false);
    let memories: Vec<u64> = cli.json(&["list", "alice"])["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect();
    assert_eq!(memories, vec![4]);
}

#[test]
fn a_strict_recall_removes_everything_the_source_touched() {
    let cli = Cli::new();
    cli.seed_story("alice");
    assert_eq!(cli.json(&["recall", "alice", "1", "--strict"])["removed"], json!([4, 6]));
}

#[test]
fn a_dry_run_writes_nothing() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let before = cli.json(&["verify", "alice"]);
    let preview = cli.json(&["recall", "alice", "3", "--dry-run", "--erase"]);
    assert_eq!(preview, json!({ "recalled": 3, "removed": [5, 6], "dry_run": true, "repeated": false }));
    assert_eq!(cli.json(&["verify", "alice"]), before);
    assert_eq!(cli.json(&["get", "alice", "3"])["alive"], true);
    assert!(cli.run(&["find", "Pune: rain"]).status == Some(0));
}

#[test]
fn untrusted_keeps_the_text_on_disk_until_compact_and_erase_removes_it_at_once() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.json(&["recall", "alice", "3"]);
    assert_eq!(cli.json(&["get", "alice", "3"])["alive"], false);
    assert_eq!(cli.run(&["find", "Pune: rain"]).status, Some(0), "Untrusted only hides");
    assert_eq!(cli.json(&["compact", "alice"]), json!({ "compacted": true }));
    assert_eq!(cli.run(&["find", "Pune: rain"]).status, Some(1), "compaction removed it");

    let erased = Cli::new();
    erased.seed_story("alice");
    assert_eq!(erased.json(&["recall", "alice", "3", "--erase"])["removed"], json!([5, 6]));
    for text in ["Pune: rain", "Pune is rainy", "carry an umbrella"] {
        assert_eq!(erased.run(&["find", text]).status, Some(1), "{text} is erased");
    }
    assert_eq!(erased.run(&["find", "user lives in Pune"]).status, Some(0), "alive memories keep their text");
    assert_eq!(erased.json(&["get", "alice", "5"])["content"], json!(null));
}

#[test]
fn hide_now_erase_later_works() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.json(&["recall", "alice", "3"]);
    let text = cli.run(&["recall", "alice", "3", "--erase"]).ok().to_owned();
    assert!(text.contains("recalled before") && text.contains("is erased from every file"), "{text}");
    assert_eq!(cli.run(&["find", "rain"]).status, Some(1));
}

#[test]
fn recalling_twice_without_erase_or_an_unknown_id_is_an_error() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.json(&["recall", "alice", "3"]);
    assert!(cli.run(&["recall", "alice", "3"]).fails_with(2).contains("already recalled"));
    cli.run(&["recall", "alice", "77"]).fails_with(2);
}

#[test]
fn strict_erase_after_a_fair_recall_applies_strict_and_erase_and_its_dry_run_agrees() {
    let cli = Cli::new();
    cli.seed_story("alice");
    assert_eq!(cli.json(&["recall", "alice", "1"])["removed"], json!([]));
    assert!(cli.run(&["recall", "alice", "1"]).fails_with(2).contains("already recalled"));
    assert!(cli.run(&["recall", "alice", "1", "--dry-run"]).fails_with(2).contains("already recalled"));
    let preview = cli.json(&["recall", "alice", "1", "--strict", "--erase", "--dry-run"]);
    assert_eq!(preview, json!({ "recalled": 1, "removed": [4, 6], "dry_run": true, "repeated": true }));
    let strict_preview = cli.json(&["recall", "alice", "1", "--strict", "--dry-run"]);
    assert_eq!(strict_preview["removed"], json!([4, 6]));
    let recalled = cli.json(&["recall", "alice", "1", "--strict", "--erase"]);
    assert_eq!(recalled, json!({ "recalled": 1, "removed": [4, 6], "dry_run": false, "repeated": true }));
    assert_eq!(cli.json(&["get", "alice", "4"])["alive"], false);
    for text in ["I live in Pune", "user lives in Pune", "carry an umbrella"] {
        assert_eq!(cli.run(&["find", text]).status, Some(1), "{text} is erased");
    }
    assert_eq!(cli.run(&["find", "Pune is rainy"]).status, Some(0), "an alive memory keeps its text");
    // Everything that Erase covers is erased already: again, it would change nothing.
    let head = cli.json(&["verify", "alice"])["fingerprint"].clone();
    for arguments in [&["recall", "alice", "1", "--erase", "--dry-run"][..], &["recall", "alice", "1", "--erase"]] {
        let refused = cli.run(arguments).fails_with(2).to_owned();
        assert!(refused.contains("already recalled and erased"), "{arguments:?}: {refused}");
    }
    assert_eq!(cli.json(&["verify", "alice"])["fingerprint"], head, "a refused Erase wrote a record");
}

#[test]
fn a_repeated_erase_is_refused_and_writes_nothing() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.json(&["recall", "alice", "3", "--erase"]);
    let head = cli.json(&["verify", "alice"])["fingerprint"].clone();
    for _ in 0..2 {
        let refused = cli.run(&["recall", "alice", "3", "--erase"]).fails_with(2).to_owned();
        assert!(refused.contains("already recalled and erased"), "{refused}");
    }
    assert_eq!(cli.json(&["verify", "alice"])["fingerprint"], head, "a refused Erase wrote a record");
}

#[test]
fn get_hides_a_recalled_text_and_audit_shows_it_until_compaction() {
    let cli = Cli::new();
    cli.seed_story("alice");
    cli.json(&["recall", "alice", "3"]);
    let node = cli.json(&["get", "alice", "3"]);
    assert_eq!((node["alive"].clone(), node["content"].clone()), (json!(false), json!(null)));
    let text = cli.run(&["get", "alice", "5"]).ok().to_owned();
    assert!(!text.contains("Pune is rainy") && text.contains("not shown"), "{text}");
    let listed = cli.run(&["list", "alice"]).ok().to_owned();
    assert!(!listed.contains("rain"), "{listed}");
    assert_eq!(cli.json(&["audit", "alice", "3"])["content"], json!("Pune: rain"));
    let audited = cli.run(&["audit", "alice", "5"]).ok().to_owned();
    assert!(audited.contains("content: Pune is rainy"), "{audited}");
    cli.json(&["compact", "alice"]);
    assert_eq!(cli.json(&["audit", "alice", "3"])["content"], json!(null));
}
