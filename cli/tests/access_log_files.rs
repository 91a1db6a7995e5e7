//! The access log: entries written through the module read back with `cheesedb log`, and every
//! kind of tampering (an edited byte, a dropped or moved entry, a cut file, a missing file) is
//! named; a crash's torn entry is told apart from an edit; rotation bounds the size on disk.

use crate::common;
use cheesedb::access_log;

use std::path::{Path, PathBuf};

use access_log::{read, AccessEntry, AccessLogs, DamageKind, Limits, ReadError, ACCESS_FOLDER};
use common::Cli;

fn entry(number: u64) -> AccessEntry {
    AccessEntry {
        time_unix_ms: 1_700_000_000_000 + number,
        pid: 4242,
        uid: 1000,
        operation: String::from(if number.is_multiple_of(2) { "get" } else { "remember" }),
        ids: vec![number, number + 1],
        outcome: String::from("ok"),
    }
}

fn write_entries(folder: &Path, agent: &str, count: u64, limits: Limits) {
    let logs = AccessLogs::open_with_limits(folder, limits).unwrap();
    for number in 1..=count {
        logs.append(agent, &entry(number)).unwrap();
    }
    logs.sync().unwrap();
}

fn log_file(folder: &Path, name: &str) -> PathBuf {
    folder.join(ACCESS_FOLDER).join(name)
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

fn damage_of(folder: &Path, agent: &str, limits: &Limits) -> access_log::LogDamage {
    match read(folder, agent, limits) {
        Err(ReadError::Damaged(damage)) => damage,
        other => panic!("expected damage, got {other:?}"),
    }
}

const SMALL: Limits = Limits { rotate_at_bytes: 1, old_files_kept: 3 };

#[test]
fn the_command_prints_verified_entries_without_a_store_or_server() {
    let cli = Cli::new();
    write_entries(cli.folder(), "alice", 5, Limits::default());
    let text = cli.run(&["log", "alice"]);
    let shown = text.ok();
    assert_eq!(shown.lines().count(), 5, "{shown}");
    assert!(
        shown
            .lines()
            .next()
            .unwrap()
            .starts_with("#1  2023-11-14 22:13:20.001 UTC  pid 4242  uid 1000  remember  ids 1,2  ok"),
        "{shown}"
    );
    let json = cli.json(&["log", "alice"]);
    let entries = json.as_array().unwrap();
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[1]["operation"], "get");
    assert_eq!(entries[1]["ids"], serde_json::json!([2, 3]));
    assert_eq!(entries[1]["pid"], 4242);
    assert_eq!(entries[1]["outcome"], "ok");
    assert_eq!(entries[4]["number"], 5);
    assert_eq!(entries[4]["hash"].as_str().unwrap().len(), 64);
}

#[test]
fn an_agent_without_a_log_has_no_entries_and_a_token_is_refused() {
    let cli = Cli::new();
    assert_eq!(cli.json(&["log", "nobody"]), serde_json::json!([]));
    assert!(cli.run(&["log", "nobody"]).ok().contains("no access log entries"));
    let refused = cli.run(&["log", &format!("cheesedb-{}", "0".repeat(64))]);
    assert!(refused.fails_with(2).contains("by the agent's name, not its token"));
}

#[test]
fn an_edited_byte_is_named_with_its_file_and_entry() {
    let cli = Cli::new();
    write_entries(cli.folder(), "alice", 5, Limits::default());
    let path = log_file(cli.folder(), "alice.1.log");
    let mut lines = lines_of(&path);
    lines[3] = lines[3].replace("\"pid\":4242", "\"pid\":4243");
    write_lines(&path, &lines);
    let stderr = cli.run(&["log", "alice"]).fails_with(3).to_owned();
    assert!(stderr.contains("access/alice.1.log line 4 (entry 3): edited"), "{stderr}");
    let json_error = cli.run(&["--json", "log", "alice"]);
    assert_eq!(json_error.status, Some(3));
    assert!(json_error.stdout.is_empty());
}

#[test]
fn a_rewritten_entry_with_its_hash_recomputed_breaks_the_next_link() {
    let folder = tempfile::tempdir().unwrap();
    write_entries(folder.path(), "alice", 5, Limits::default());
    let path = log_file(folder.path(), "alice.1.log");
    // Entry 2 rewritten by someone who recomputes its own hash: the third entry still names
    // the old one.
    let log = read(folder.path(), "alice", &Limits::default()).unwrap();
    let mut lines = lines_of(&path);
    let mut record: serde_json::Value = serde_json::from_str(&lines[2]).unwrap();
    record["uid"] = serde_json::json!(0);
    let forged = forged_hash(&record, &log.entries[0].hash);
    record["hash"] = serde_json::json!(forged);
    lines[2] = record.to_string();
    write_lines(&path, &lines);
    let damage = damage_of(folder.path(), "alice", &Limits::default());
    assert_eq!((damage.kind, damage.line, damage.number), (DamageKind::Edited, Some(4), Some(3)), "{damage}");
}

/// The hash an entry with the fields of `record` would have as entry 2 after the first entry
/// of [`write_entries`], whose hash is `previous`: what a forger who knows the format computes.
fn forged_hash(record: &serde_json::Value, previous: &str) -> String {
    let folder = tempfile::tempdir().unwrap();
    let entry = AccessEntry {
        time_unix_ms: record["time_unix_ms"].as_u64().unwrap(),
        pid: u32::try_from(record["pid"].as_u64().unwrap()).unwrap(),
        uid: u32::try_from(record["uid"].as_u64().unwrap()).unwrap(),
        operation: record["operation"].as_str().unwrap().to_owned(),
        ids: record["ids"].as_array().unwrap().iter().map(|id| id.as_u64().unwrap()).collect(),
        outcome: record["outcome"].as_str().unwrap().to_owned(),
    };
    let logs = AccessLogs::open(folder.path()).unwrap();
    logs.append("alice", &self::entry(1)).unwrap();
    logs.append("alice", &entry).unwrap();
    drop(logs);
    let log = read(folder.path(), "alice", &Limits::default()).unwrap();
    assert_eq!(log.entries[0].hash, previous, "the same first entry hashes the same");
    log.entries[1].hash.clone()
}

#[test]
fn a_dropped_entry_is_reported_as_removed() {
    let cli = Cli::new();
    write_entries(cli.folder(), "alice", 6, Limits::default());
    let path = log_file(cli.folder(), "alice.1.log");
    let mut lines = lines_of(&path);
    lines.remove(3);
    write_lines(&path, &lines);
    let stderr = cli.run(&["log", "alice"]).fails_with(3).to_owned();
    assert!(stderr.contains("line 4 (entry 4): removed: entry 3 is missing before it"), "{stderr}");
}

#[test]
fn swapped_entries_are_reported_as_reordered() {
    let folder = tempfile::tempdir().unwrap();
    write_entries(folder.path(), "alice", 6, Limits::default());
    let path = log_file(folder.path(), "alice.1.log");
    let mut lines = lines_of(&path);
    lines.swap(2, 3);
    write_lines(&path, &lines);
    let damage = damage_of(folder.path(), "alice", &Limits::default());
    assert_eq!((damage.kind, damage.line, damage.number), (DamageKind::Reordered, Some(3), Some(3)), "{damage}");
}

#[test]
fn a_torn_last_entry_is_not_an_edit_and_the_writer_goes_on_after_it() {
    let cli = Cli::new();
    write_entries(cli.folder(), "alice", 4, Limits::default());
    let path = log_file(cli.folder(), "alice.1.log");
    let length = std::fs::metadata(&path).unwrap().len();
    // A crash mid-append: the last entry's line feed and more never reached the file.
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(length - 20).unwrap();
    let run = cli.run(&["--json", "log", "alice"]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("line 5 is incomplete: an append cut short by a crash (or still being written), not an edit"),
        "{}",
        run.stderr
    );
    assert_eq!(serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap().as_array().unwrap().len(), 3);

    let logs = AccessLogs::open(cli.folder()).unwrap();
    logs.append("alice", &entry(99)).unwrap();
    drop(logs);
    let log = read(cli.folder(), "alice", &Limits::default()).unwrap();
    assert_eq!(log.torn, None);
    let numbers: Vec<u64> = log.entries.iter().map(|verified| verified.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4], "the torn entry's number is given to the next one");
    assert_eq!(log.entries[3].entry, entry(99));
    assert!(cli.run(&["log", "alice"]).stderr.is_empty());
}

#[test]
fn cutting_a_file_at_a_line_end_is_found_where_a_later_file_continues_it() {
    let folder = tempfile::tempdir().unwrap();
    write_entries(folder.path(), "alice", 300, SMALL);
    let log = read(folder.path(), "alice", &SMALL).unwrap();
    assert!(log.files.len() >= 3, "{:?}", log.files);
    let second = folder.path().join(&log.files[1]);
    let mut lines = lines_of(&second);
    lines.pop();
    write_lines(&second, &lines);
    let damage = damage_of(folder.path(), "alice", &SMALL);
    assert_eq!((damage.kind, damage.file.as_str()), (DamageKind::Removed, log.files[2].as_str()), "{damage}");
    assert!(damage.to_string().contains("entries were removed from that file's end"), "{damage}");

    // Cut inside a line: the file is torn, yet a later file goes on from it.
    let text = std::fs::read(&second).unwrap();
    std::fs::write(&second, &text[..text.len() - 10]).unwrap();
    let damage = damage_of(folder.path(), "alice", &SMALL);
    assert_eq!(damage.kind, DamageKind::Cut, "{damage}");
}

#[test]
fn a_missing_middle_file_or_a_renamed_one_is_found() {
    let folder = tempfile::tempdir().unwrap();
    write_entries(folder.path(), "alice", 300, SMALL);
    let log = read(folder.path(), "alice", &SMALL).unwrap();
    let files: Vec<PathBuf> = log.files.iter().map(|file| folder.path().join(file)).collect();
    let kept = std::fs::read(&files[1]).unwrap();
    std::fs::remove_file(&files[1]).unwrap();
    let damage = damage_of(folder.path(), "alice", &SMALL);
    assert_eq!(damage.kind, DamageKind::Removed, "{damage}");
    assert!(damage.to_string().contains("is missing before it"), "{damage}");

    // The file put back under the missing name of another one.
    std::fs::write(&files[1], &kept).unwrap();
    std::fs::copy(&files[2], &files[1]).unwrap();
    let damage = damage_of(folder.path(), "alice", &SMALL);
    assert_eq!(damage.kind, DamageKind::Misplaced, "{damage}");

    // Removing the oldest files too leaves fewer than rotation ever keeps.
    std::fs::write(&files[1], &kept).unwrap();
    read(folder.path(), "alice", &SMALL).unwrap();
    std::fs::remove_file(&files[0]).unwrap();
    let damage = damage_of(folder.path(), "alice", &SMALL);
    assert_eq!(damage.kind, DamageKind::Removed, "{damage}");
}

#[test]
fn rotating_many_times_keeps_the_chain_and_bounds_the_size() {
    let folder = tempfile::tempdir().unwrap();
    for round in 0..5 {
        // Reopened each round, as a restarted server would.
        let logs = AccessLogs::open_with_limits(folder.path(), SMALL).unwrap();
        for number in 0..1_000 {
            logs.append("alice", &entry(round * 1_000 + number)).unwrap();
        }
    }
    let log = read(folder.path(), "alice", &SMALL).unwrap();
    let files = std::fs::read_dir(folder.path().join(ACCESS_FOLDER)).unwrap().count();
    assert_eq!(files, usize::try_from(SMALL.old_files_kept).unwrap() + 1);
    let total: u64 = log.files.iter().map(|file| std::fs::metadata(folder.path().join(file)).unwrap().len()).sum();
    assert!(total <= SMALL.total_max_bytes(), "{total} bytes on disk");
    let numbers: Vec<u64> = log.entries.iter().map(|verified| verified.number).collect();
    assert_eq!(numbers.last(), Some(&5_000));
    assert!(numbers.windows(2).all(|pair| pair[1] == pair[0] + 1), "consecutive across files");
    assert!(numbers[0] > 1, "the oldest entries were rotated away");
}

#[test]
fn the_real_limits_rotate_at_a_megabyte_and_the_command_verifies_across_files() {
    let cli = Cli::new();
    write_entries(cli.folder(), "alice", 40_000, Limits::default());
    let names: Vec<String> = std::fs::read_dir(cli.folder().join(ACCESS_FOLDER))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    let mut total = 0;
    for name in &names {
        let size = std::fs::metadata(log_file(cli.folder(), name)).unwrap().len();
        assert!(size <= access_log::ROTATE_AT_BYTES, "{name}: {size}");
        total += size;
    }
    assert!(total <= Limits::default().total_max_bytes());
    let entries = cli.json(&["log", "alice"]);
    assert_eq!(entries.as_array().unwrap().last().unwrap()["number"], 40_000);
}

#[test]
fn a_torn_new_file_from_a_crash_during_rotation_is_dropped_by_the_writer() {
    let folder = tempfile::tempdir().unwrap();
    write_entries(folder.path(), "alice", 3, Limits::default());
    std::fs::write(log_file(folder.path(), "alice.2.log"), b"{\"format\":\"chee").unwrap();
    let log = read(folder.path(), "alice", &Limits::default()).unwrap();
    assert_eq!(log.entries.len(), 3);
    assert_eq!(log.torn.as_ref().map(|torn| torn.line), Some(1));
    write_entries(folder.path(), "alice", 1, Limits::default());
    let log = read(folder.path(), "alice", &Limits::default()).unwrap();
    assert_eq!((log.entries.len(), log.torn, log.files.len()), (4, None, 1));
}

#[test]
fn names_of_any_text_map_to_files_inside_the_access_folder() {
    let folder = tempfile::tempdir().unwrap();
    let hostile = "../../etc/passwd\n\u{1b}[31m";
    write_entries(folder.path(), hostile, 2, Limits::default());
    write_entries(folder.path(), "alice", 1, Limits::default());
    assert_eq!(read(folder.path(), hostile, &Limits::default()).unwrap().entries.len(), 2);
    assert_eq!(read(folder.path(), "alice", &Limits::default()).unwrap().entries.len(), 1);
    let names: Vec<String> = std::fs::read_dir(folder.path().join(ACCESS_FOLDER))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|name| !name.contains('/') && !name.starts_with('.')));
}

#[test]
fn a_file_of_another_agent_in_its_place_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    write_entries(folder.path(), "alice", 2, Limits::default());
    write_entries(folder.path(), "bob", 2, Limits::default());
    std::fs::copy(log_file(folder.path(), "bob.1.log"), log_file(folder.path(), "alice.1.log")).unwrap();
    let damage = damage_of(folder.path(), "alice", &Limits::default());
    assert_eq!(damage.kind, DamageKind::Misplaced);
    assert!(damage.to_string().contains("belongs to agent \"bob\""), "{damage}");
    // The writer does not go silent: it goes on in a new file that records the break.
    let logs = AccessLogs::open(folder.path()).unwrap();
    logs.append("alice", &entry(3)).unwrap();
    drop(logs);
    let log = read(folder.path(), "alice", &Limits::default()).unwrap();
    assert_eq!(log.entries.len(), 1, "only the entry written after the break verifies as alice's");
    assert_eq!(log.breaks.len(), 1, "{log:?}");
    assert_eq!(log.breaks[0].file, "access/alice.2.log");
    assert_eq!(log.breaks[0].found.as_ref().map(|damage| damage.kind), Some(DamageKind::Misplaced));
}

#[test]
fn a_garbage_line_does_not_silence_the_log_and_the_break_is_reported() {
    let cli = Cli::new();
    write_entries(cli.folder(), "alice", 5, Limits::default());
    let path = log_file(cli.folder(), "alice.1.log");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("not an entry at all\n");
    std::fs::write(&path, text).unwrap();
    // The server starts again on the damaged log and serves two more requests.
    let logs = AccessLogs::open(cli.folder()).unwrap();
    logs.append("alice", &entry(6)).unwrap();
    logs.append("alice", &entry(7)).unwrap();
    drop(logs);

    let log = read(cli.folder(), "alice", &Limits::default()).unwrap();
    let numbers: Vec<u64> = log.entries.iter().map(|verified| verified.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 7], "the chain goes on from the last entry that verified");
    assert_eq!(log.files, ["access/alice.1.log", "access/alice.2.log"]);
    assert_eq!(log.breaks.len(), 1);
    let found = &log.breaks[0];
    assert_eq!((found.noted.file_number, found.noted.line, found.noted.kind.as_str()), (1, Some(7), "unreadable"));
    assert_eq!(found.found.as_ref().map(|damage| (damage.kind, damage.line)), Some((DamageKind::Unreadable, Some(7))));

    let run = cli.run(&["log", "alice"]);
    assert_eq!(run.status, Some(3), "a log with a break does not verify: {}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 7, "yet every entry that verifies is shown: {}", run.stdout);
    assert!(
        run.stderr.contains("the server found its file 1 line 7 unreadable and went on in access/alice.2.log"),
        "{}",
        run.stderr
    );
    common::assert_one_clean_line(&run.stderr);
}

#[test]
fn a_log_changed_under_a_running_writer_goes_on_in_a_new_file() {
    let folder = tempfile::tempdir().unwrap();
    let logs = AccessLogs::open(folder.path()).unwrap();
    for number in 1..=3 {
        logs.append("alice", &entry(number)).unwrap();
    }
    let path = log_file(folder.path(), "alice.1.log");
    let mut lines = lines_of(&path);
    // The last entry cut off at its line's end: the file alone still verifies.
    lines.pop();
    write_lines(&path, &lines);
    logs.append("alice", &entry(4)).unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(log_file(folder.path(), "alice.2.log")).unwrap();
    std::io::Write::write_all(&mut file, b"{\"number\":99}\n").unwrap();
    logs.append("alice", &entry(5)).unwrap();
    drop(logs);

    let log = read(folder.path(), "alice", &Limits::default()).unwrap();
    let numbers: Vec<u64> = log.entries.iter().map(|verified| verified.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4], "{log:?}");
    assert_eq!(log.entries[2].entry, entry(4), "the entry after the cut follows the last one left");
    assert_eq!(log.entries[3].entry, entry(5));
    let noted: Vec<(u64, Option<u64>, &str)> =
        log.breaks.iter().map(|found| (found.noted.file_number, found.noted.line, found.noted.kind.as_str())).collect();
    assert_eq!(noted, [(1, None, "edited"), (2, Some(3), "unreadable")], "{log:?}");
}

#[test]
fn an_edited_last_entry_of_an_older_file_with_its_hash_recomputed_is_found() {
    let folder = tempfile::tempdir().unwrap();
    write_entries(folder.path(), "alice", 300, SMALL);
    let log = read(folder.path(), "alice", &SMALL).unwrap();
    assert!(log.files.len() >= 3, "{:?}", log.files);
    // The last entry of the second file (not the newest), rewritten by a forger who recomputes
    // its hash: it verifies on its own, and only the join to the next file can tell.
    let older = &log.files[1];
    let last = log.entries.iter().rfind(|verified| &verified.file == older).unwrap().clone();
    let path = folder.path().join(older);
    let mut lines = lines_of(&path);
    let mut record: serde_json::Value = serde_json::from_str(&lines[last.line - 1]).unwrap();
    let mut edited = last.entry.clone();
    edited.uid = 0;
    record["uid"] = serde_json::json!(0);
    record["hash"] = serde_json::json!(replayed_hash(last.number, &edited, SMALL));
    lines[last.line - 1] = record.to_string();
    write_lines(&path, &lines);

    let damage = damage_of(folder.path(), "alice", &SMALL);
    assert_eq!(
        (damage.kind, damage.file.as_str(), damage.line),
        (DamageKind::Edited, log.files[2].as_str(), Some(1)),
        "{damage}"
    );
    assert!(damage.to_string().contains("that file was changed at its end"), "{damage}");
}

/// The hash entry `number` gets when it holds `edited` after the entries of [`write_entries`]
/// before it, within `limits`: the log replayed in a folder of its own, as a forger who knows
/// the format would compute it.
fn replayed_hash(number: u64, edited: &AccessEntry, limits: Limits) -> String {
    let folder = tempfile::tempdir().unwrap();
    let logs = AccessLogs::open_with_limits(folder.path(), limits).unwrap();
    for before in 1..number {
        logs.append("alice", &entry(before)).unwrap();
    }
    logs.append("alice", edited).unwrap();
    drop(logs);
    let log = read(folder.path(), "alice", &limits).unwrap();
    let last = log.entries.last().unwrap();
    assert_eq!(last.number, number);
    last.hash.clone()
}

#[test]
fn a_link_in_place_of_a_log_file_is_never_followed() {
    let cli = Cli::new();
    let outside = cli.folder().join("outside");
    std::fs::write(&outside, b"keep").unwrap();
    std::fs::create_dir(cli.folder().join(ACCESS_FOLDER)).unwrap();
    std::os::unix::fs::symlink(&outside, log_file(cli.folder(), "alice.1.log")).unwrap();
    let logs = AccessLogs::open(cli.folder()).unwrap();
    assert!(logs.append("alice", &entry(1)).is_err());
    assert!(cli.run(&["log", "alice"]).fails_with(2).contains("symbolic link"));
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
}

#[test]
fn deleting_an_agent_keeps_its_access_log_and_says_so() {
    let cli = Cli::new();
    cli.create_agent("alice");
    cli.create_agent("bob");
    write_entries(cli.folder(), "alice", 2, Limits::default());
    let deleted = cli.json(&["agent", "delete", "alice"]);
    assert_eq!(deleted["access_log_kept"], serde_json::json!(["access/alice.1.log"]));
    assert_eq!(cli.json(&["log", "alice"]).as_array().unwrap().len(), 2, "still readable after the delete");
    let text = cli.run(&["agent", "delete", "bob"]);
    assert!(!text.ok().contains("access log"), "an agent never served has no log to mention");
}
