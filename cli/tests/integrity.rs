//! `verify`, `verify --expect`, `compact` and `report`.

use crate::common;

use common::{files_below, Cli};
use serde_json::json;

fn segment(cli: &Cli) -> std::path::PathBuf {
    files_below(cli.folder())
        .into_iter()
        .find(|path| path.extension().is_some_and(|extension| extension == "log"))
        .expect("a segment file")
}

#[test]
fn verify_prints_a_fingerprint_that_later_histories_extend() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let kept = cli.json(&["verify", "alice"])["fingerprint"].as_str().unwrap().to_owned();
    assert!(kept.starts_with("6-"), "{kept}");
    cli.lot("alice", "note", "more");
    let later = cli.json(&["verify", "alice", "--expect", &kept]);
    assert_eq!(later["extends"], json!(kept));
    assert!(later["fingerprint"].as_str().unwrap().starts_with("7-"));
}

#[test]
fn a_fingerprint_the_history_does_not_pass_through_fails() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let forged = format!("3-{}", "0".repeat(64));
    let message = cli.run(&["verify", "alice", "--expect", &forged]).fails_with(3).to_owned();
    assert!(message.contains("verification failed"), "{message}");
    cli.run(&["verify", "alice", "--expect", "not-a-fingerprint"]).fails_with(2);
}

#[test]
fn a_damaged_file_is_reported_as_damage_in_one_line() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let path = segment(&cli);
    let mut bytes = std::fs::read(&path).unwrap();
    // Flip a bit inside a stored text, so the damage is in committed data.
    let inside = bytes.windows(10).position(|window| window == b"Pune: rain").expect("the text is stored") + 3;
    bytes[inside] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let run = cli.run(&["verify", "alice"]);
    assert!(matches!(run.status, Some(2) | Some(3)), "{run:?}");
    common::assert_one_clean_line(&run.stderr);
    assert!(run.stderr.contains("corrupt") || run.stderr.contains("damage"), "{}", run.stderr);
}

#[test]
fn report_has_every_field_and_compact_succeeds() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let report = cli.json(&["report", "alice"]);
    for field in [
        "segments",
        "records",
        "records_from_snapshot",
        "snapshot_ignored",
        "dropped_bytes",
        "dropped_records",
        "erasures_completed_on_open",
        "temporary_files_removed",
        "segments_started_on_open",
        "unfinished_rolls_undone_on_open",
        "erase_journals_replayed_on_open",
        "erase_journals_discarded_on_open",
        "key_slots_restored_on_open",
        "key_slots_cut_on_open",
        "epoch_slots_cut_on_open",
        "epoch_slots_destroyed_on_open",
        "epoch_rotations_finished_on_open",
        "dead_text_nodes",
        "segments_compacted",
        "repaired_anything",
    ] {
        assert!(report.get(field).is_some(), "report has {field}: {report}");
    }
    assert_eq!(report["records"], 6);
    assert_eq!(report["repaired_anything"], false);
    assert_eq!(cli.json(&["compact", "alice"]), json!({ "compacted": true }));
    assert!(cli.run(&["report", "alice"]).ok().contains("nothing to repair"));
}

#[test]
fn report_counts_the_text_a_recall_left_until_compact_takes_it_out() {
    let cli = Cli::new();
    let [_, _, c, ..] = cli.seed_story("alice");
    cli.run(&["recall", "alice", &c.to_string()]).ok();
    let report = cli.json(&["report", "alice"]);
    // The weather lot and the two memories on it; far below the threshold that starts a
    // compaction by itself.
    assert_eq!((report["dead_text_nodes"].clone(), report["segments_compacted"].clone()), (json!(3), json!(0)));
    assert!(cli.run(&["report", "alice"]).ok().contains("recalled, text still kept:  3"));
    cli.json(&["compact", "alice"]);
    assert_eq!(cli.json(&["report", "alice"])["dead_text_nodes"], 0);
}

#[test]
fn a_torn_tail_is_cut_and_reported() {
    let cli = Cli::new();
    cli.seed_story("alice");
    let path = segment(&cli);
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut file, &[0xAB; 37]).unwrap();
    drop(file);
    let report = cli.json(&["report", "alice"]);
    assert_eq!(report["records"], 6, "{report}");
}

/// The folder of the first agent of the data folder.
fn agent_folder(cli: &Cli) -> std::path::PathBuf {
    cli.folder().join("agent-0000000000000001")
}

#[test]
fn a_damaged_snapshot_is_noted_by_the_command_that_did_not_use_it() {
    let cli = Cli::new();
    let [a, ..] = cli.seed_story("alice");
    // An Erase leaves a snapshot behind at close.
    cli.json(&["recall", "alice", &a.to_string(), "--erase"]);
    let snapshot = agent_folder(&cli).join("snapshot");
    let mut bytes = std::fs::read(&snapshot).expect("a snapshot after the Erase");
    // A byte of the agent number in its header.
    bytes[20] ^= 0x01;
    std::fs::write(&snapshot, &bytes).unwrap();
    let run = cli.run(&["--json", "get", "alice", "2"]);
    run.json();
    assert!(run.stderr.contains("did not use its snapshot (snapshot header checksum mismatch)"), "{}", run.stderr);
    // The snapshot stays as it is until the next one replaces it: each open says so again.
    let report = cli.run(&["--json", "report", "alice"]);
    assert_eq!(report.json()["snapshot_ignored"], json!("snapshot header checksum mismatch"));
    assert!(report.stderr.contains("did not use its snapshot"), "{}", report.stderr);
}

#[test]
fn a_folder_or_link_where_the_snapshot_or_a_temporary_file_goes_is_left_and_never_blocks() {
    let cli = Cli::new();
    let [a, b, ..] = cli.seed_story("alice");
    let folder = agent_folder(&cli);
    std::fs::create_dir(folder.join("snapshot")).unwrap();
    std::fs::write(folder.join("snapshot").join("mine"), b"keep").unwrap();
    std::fs::create_dir(folder.join("snapshot.tmp")).unwrap();
    std::os::unix::fs::symlink("/nonexistent", folder.join("segment-0000000000000001.log.tmp")).unwrap();
    let run = cli.run(&["--json", "get", "alice", &b.to_string()]);
    assert_eq!(run.json()["content"], "profile: lives in Pune");
    assert!(run.stderr.contains("snapshot is not a plain file"), "{}", run.stderr);
    let report = cli.json(&["report", "alice"]);
    assert_eq!(
        report["snapshot_ignored"],
        json!("snapshot is not a plain file (a folder, a link or another entry), so left alone")
    );
    assert_eq!(report["temporary_files_removed"], 0);
    // Writes, an Erase (which drops the snapshot first) and a compaction all work around it.
    cli.lot("alice", "note", "later");
    cli.json(&["recall", "alice", &a.to_string(), "--erase"]);
    assert_eq!(cli.json(&["compact", "alice"]), json!({ "compacted": true }));
    cli.json(&["verify", "alice"]);
    assert_eq!(std::fs::read(folder.join("snapshot").join("mine")).unwrap(), b"keep");
    assert!(folder.join("snapshot.tmp").is_dir());
    assert!(folder.join("segment-0000000000000001.log.tmp").symlink_metadata().unwrap().file_type().is_symlink());
}
