//! A full disk is one plain line and its own exit status, and the data folder works again once
//! space is freed. Runs on a small tmpfs where this machine lets the test mount one.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::Command;

use common::{assert_one_clean_line, BINARY};

/// The exit status of a full disk.
const EXIT_NO_SPACE: i32 = 5;
/// How many lots the test tries before it gives up waiting for the disk to fill.
const WRITES_MAX: usize = 5_000;

/// A tmpfs of 4 MiB on a temporary folder; unmounted when dropped.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount() -> Result<SmallDisk, String> {
        let folder = tempfile::tempdir().map_err(|error| error.to_string())?;
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs"])
            .arg(folder.path())
            .output()
            .map_err(|error| format!("cannot run mount: {error}"))?;
        if !output.status.success() {
            return Err(format!("mount refused: {}", String::from_utf8_lossy(&output.stderr).trim()));
        }
        Ok(SmallDisk(folder))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

fn cheesedb(folder: &Path, arguments: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(BINARY)
        .args(arguments)
        .env("CHEESEDB_DIR", folder)
        .env_remove("CHEESEDB_IO")
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_full_disk_is_one_plain_line_and_the_folder_works_once_space_is_freed() {
    let disk = match SmallDisk::mount() {
        Ok(disk) => disk,
        Err(reason) => {
            println!("skipped: no tmpfs to fill ({reason})");
            return;
        }
    };
    let folder = disk.0.path().join("data");
    assert_eq!(cheesedb(&folder, &["agent", "create", "alice"]).0, Some(0));
    assert_eq!(cheesedb(&folder, &["lot", "alice", "note", "before the disk filled"]).0, Some(0));

    let filler = disk.0.path().join("filler");
    let mut filling = std::fs::File::create(&filler).unwrap();
    while filling.write_all(&[0x55u8; 4096]).is_ok() {}
    drop(filling);

    let content = "a fact worth keeping ".repeat(500);
    let mut stored = 1;
    let stderr = loop {
        let (status, _, stderr) = cheesedb(&folder, &["lot", "alice", "note", &content]);
        match status {
            Some(0) => stored += 1,
            Some(EXIT_NO_SPACE) => break stderr,
            other => panic!("a full disk exits with {EXIT_NO_SPACE}, not {other:?}: {stderr}"),
        }
        assert!(stored < WRITES_MAX, "the disk never filled");
    };
    assert_one_clean_line(&stderr);
    let expected = format!(
        "cheesedb: the disk holding {} is full: free some space, then run the command again; nothing acknowledged was lost",
        folder.display()
    );
    assert!(stderr.starts_with(&expected), "{stderr}");

    std::fs::remove_file(&filler).unwrap();
    let (status, stdout, stderr) = cheesedb(&folder, &["--json", "lot", "alice", "note", "after space was freed"]);
    assert_eq!(status, Some(0), "{stderr}");
    let added: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(added["id"], serde_json::json!(stored + 1), "the refused lot took no id");
    let (status, stdout, _) = cheesedb(&folder, &["--json", "get", "alice", "1"]);
    assert_eq!(status, Some(0));
    assert!(stdout.contains("before the disk filled"), "{stdout}");
    let (status, stdout, _) = cheesedb(&folder, &["--json", "get", "alice", &stored.to_string()]);
    assert_eq!(status, Some(0), "the last acknowledged lot is kept");
    assert!(stdout.contains("a fact worth keeping"), "{stdout}");
}
