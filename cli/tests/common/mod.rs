//! Running the built `cheesedb` binary in a data folder of its own.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary under test.
pub const BINARY: &str = env!("CARGO_BIN_EXE_cheesedb");

/// One finished run: exit status and what was printed.
#[derive(Debug)]
pub struct Run {
    /// The exit status (None if killed by a signal).
    pub status: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    fn from(output: Output) -> Run {
        Run {
            status: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Asserts success and returns standard output.
    pub fn ok(&self) -> &str {
        assert_eq!(self.status, Some(0), "expected success; stderr: {}", self.stderr);
        &self.stdout
    }

    /// Asserts success and parses standard output as one JSON value.
    pub fn json(&self) -> Value {
        let stdout = self.ok();
        assert_eq!(stdout.lines().count(), 1, "--json prints one line: {stdout}");
        serde_json::from_str(stdout).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}"))
    }

    /// Asserts an error: the given exit status, one line on standard error, no panic.
    pub fn fails_with(&self, status: i32) -> &str {
        assert_eq!(self.status, Some(status), "stdout: {} stderr: {}", self.stdout, self.stderr);
        assert_one_clean_line(&self.stderr);
        self.stderr.trim_end()
    }
}

/// Asserts that `stderr` is exactly one non-empty line with no panic in it.
pub fn assert_one_clean_line(stderr: &str) {
    assert_eq!(stderr.lines().count(), 1, "errors are one line: {stderr:?}");
    assert!(!stderr.trim().is_empty(), "an error says what was wrong");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "no panic: {stderr}");
}

/// A data folder and a way to run commands in it.
pub struct Cli {
    folder: tempfile::TempDir,
}

impl Cli {
    /// A fresh, empty data folder.
    pub fn new() -> Cli {
        Cli { folder: tempfile::tempdir().expect("temporary folder") }
    }

    /// The data folder.
    pub fn folder(&self) -> &Path {
        self.folder.path()
    }

    /// A command in this data folder (through CHEESEDB_DIR, as a user would set it).
    pub fn command(&self, arguments: &[&str]) -> Command {
        let mut command = Command::new(BINARY);
        command.args(arguments).env("CHEESEDB_DIR", self.folder()).env_remove("RUST_BACKTRACE");
        command
    }

    /// Runs `cheesedb ARGUMENTS` with no input.
    pub fn run(&self, arguments: &[&str]) -> Run {
        let output = self.command(arguments).stdin(Stdio::null()).output().expect("the binary runs");
        Run::from(output)
    }

    /// Runs `cheesedb ARGUMENTS` with `input` on standard input.
    pub fn run_with_input(&self, arguments: &[&str], input: &[u8]) -> Run {
        let mut child = self
            .command(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = input.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let output = child.wait_with_output().expect("the binary ends");
        let _ = writer.join();
        Run::from(output)
    }

    /// Runs with `--json` and parses the result.
    pub fn json(&self, arguments: &[&str]) -> Value {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(arguments);
        self.run(&with_json).json()
    }

    /// Creates agent `name`.
    pub fn create_agent(&self, name: &str) -> Value {
        self.json(&["agent", "create", name])
    }

    /// Adds a lot and returns its id.
    pub fn lot(&self, agent: &str, label: &str, text: &str) -> u64 {
        self.json(&["lot", agent, label, text])["id"].as_u64().expect("an id")
    }

    /// Adds a memory with `legs` (each like "1,2") and returns its id.
    pub fn remember(&self, agent: &str, text: &str, legs: &[&str]) -> u64 {
        let mut arguments = vec!["remember", agent, text];
        for leg in legs {
            arguments.push("--leg");
            arguments.push(leg);
        }
        self.json(&arguments)["id"].as_u64().expect("an id")
    }

    /// The story of the reference: lots A, B, C; M1 = {A} or {B}; M2 = {C}; M3 = {M1, M2}.
    pub fn seed_story(&self, agent: &str) -> [u64; 6] {
        self.create_agent(agent);
        let a = self.lot(agent, "user_message", "I live in Pune");
        let b = self.lot(agent, "web_page", "profile: lives in Pune");
        let c = self.lot(agent, "weather_tool", "Pune: rain");
        let m1 = self.remember(agent, "user lives in Pune", &[&a.to_string(), &b.to_string()]);
        let m2 = self.remember(agent, "Pune is rainy", &[&c.to_string()]);
        let m3 = self.remember(agent, "carry an umbrella", &[&format!("{m1},{m2}")]);
        [a, b, c, m1, m2, m3]
    }
}

/// The files below `folder`.
pub fn files_below(folder: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

pub mod embeddings_server;
pub mod loopback_http;
pub mod lying_proxy;
pub mod mcp_process;
pub mod seaweed;
pub mod server_process;
