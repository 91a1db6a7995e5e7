//! `--io` and `CHEESEDB_IO`: the same commands through io_uring, and a clear error for a name
//! that is no backend.

use crate::common;

use common::{assert_one_clean_line, Cli};

#[cfg(target_os = "linux")]
#[test]
fn commands_work_through_io_uring_on_the_same_data() {
    let cli = Cli::new();
    let [.., weather, _, rainy, umbrella] = cli.seed_story("alice");
    let recalled = cli.json(&["--io", "uring", "recall", "alice", &weather.to_string(), "--erase"]);
    assert_eq!(recalled["removed"], serde_json::json!([rainy, umbrella]));
    let mut command = cli.command(&["--json", "get", "alice", &rainy.to_string()]);
    let output = command.env("CHEESEDB_IO", "uring").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let node: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((node["alive"].clone(), node["content"].clone()), (serde_json::json!(false), serde_json::Value::Null));
    // And back through std: the files are the same either way.
    assert_eq!(cli.json(&["--io", "std", "get", "alice", "1"])["alive"], true);
}

#[test]
fn an_unknown_backend_is_one_clear_line() {
    let cli = Cli::new();
    let run = cli.run(&["--io", "floppy", "agent", "list"]);
    let stderr = run.fails_with(2);
    assert_one_clean_line(stderr);
    assert!(stderr.contains("floppy") && stderr.contains("uring"), "{stderr}");
}

/// io_uring refused by the kernel (strace makes `io_uring_setup` fail with ENOSYS) is one line
/// that gives the kernel's reason and suggests the std backend, with the ordinary error status.
#[cfg(target_os = "linux")]
#[test]
fn a_refused_io_uring_says_why_and_suggests_std() {
    let cli = Cli::new();
    let traced = std::process::Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "trace=io_uring_setup",
            "-e",
            "inject=io_uring_setup:error=ENOSYS",
        ])
        .arg(common::BINARY)
        .args(["--io", "uring", "agent", "list"])
        .env("CHEESEDB_DIR", cli.folder())
        .env_remove("CHEESEDB_IO")
        .output();
    let output = match traced {
        Ok(output) if !String::from_utf8_lossy(&output.stderr).contains("strace:") => output,
        Ok(output) => {
            println!("skipped: strace cannot trace here ({})", String::from_utf8_lossy(&output.stderr).trim());
            return;
        }
        Err(error) => {
            println!("skipped: no strace ({error})");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_one_clean_line(&stderr);
    assert!(
        stderr.contains("the uring storage backend cannot be used here") && stderr.contains("(ENOSYS)"),
        "{stderr}"
    );
    assert!(stderr.trim_end().ends_with("run with --io std (or CHEESEDB_IO=std) instead"), "{stderr}");
}
