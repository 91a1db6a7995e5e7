//! `--read-only`: every command that only reads works, every write is refused with one clear
//! line, and no file of the store changes.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{files_below, Cli};

fn contents(folder: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files_below(folder).into_iter().map(|path| (path.clone(), std::fs::read(&path).expect("readable"))).collect()
}

#[test]
fn reads_work_and_writes_are_refused_without_changing_a_byte() {
    let cli = Cli::new();
    let [a, _, c, m1, ..] = cli.seed_story("alice");
    let before = contents(cli.folder());

    let read = cli.json(&["--read-only", "get", "alice", &m1.to_string()]);
    assert_eq!(read["content"], "user lives in Pune");
    assert!(cli.run(&["--read-only", "list", "alice"]).ok().contains("carry an umbrella"));
    cli.run(&["--read-only", "verify", "alice"]).ok();
    cli.run(&["--read-only", "recall", "alice", &c.to_string(), "--dry-run"]).ok();

    let writes: [&[&str]; 5] = [
        &["--read-only", "lot", "alice", "tool", "more"],
        &["--read-only", "remember", "alice", "more", "--leg", &a.to_string()],
        &["--read-only", "recall", "alice", &c.to_string(), "--erase"],
        &["--read-only", "compact", "alice"],
        &["--read-only", "agent", "create", "bob"],
    ];
    for arguments in writes {
        let run = cli.run(arguments);
        assert_ne!(run.status, Some(0), "{arguments:?} must be refused: {}", run.stdout);
        common::assert_one_clean_line(&run.stderr);
        assert!(run.stderr.contains("read-only"), "{arguments:?}: {}", run.stderr);
    }
    assert_eq!(contents(cli.folder()), before, "a read-only command changed the store");
    // The same writes work without the flag.
    cli.lot("alice", "tool", "more");
}
