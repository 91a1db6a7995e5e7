//! A client that runs the `cheesedb` command for every operation: through the server while it
//! runs, on the store itself while it is down.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::operations::{Operations, Outcome, Read, Remembered};
use crate::common::{Cli, Run};

/// One agent, by its name in the tokens file.
pub struct CommandClient {
    name: String,
    cli: Arc<Cli>,
    agent: String,
    /// The longest a command took.
    pub slowest: Duration,
}

impl CommandClient {
    /// A client running commands in `cli`'s data folder on agent `agent`.
    pub fn new(name: String, cli: Arc<Cli>, agent: String) -> CommandClient {
        CommandClient { name, cli, agent, slowest: Duration::ZERO }
    }

    /// Runs `cheesedb --json ARGUMENTS`; the JSON it printed when it succeeded. A command that
    /// failed could have died anywhere, so its outcome is unknown; a panic fails the test.
    fn run(&mut self, arguments: &[&str]) -> Result<Value, Run> {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(arguments);
        let started = Instant::now();
        let run = self.cli.run(&with_json);
        self.slowest = self.slowest.max(started.elapsed());
        let panicked = run.stderr.contains("panicked") || run.stderr.contains("RUST_BACKTRACE");
        assert!(!panicked, "{}: {arguments:?} panicked: {}", self.name, run.stderr);
        if run.status == Some(0) {
            Ok(run.json())
        } else {
            Err(run)
        }
    }

    fn id_of(value: &Value) -> u64 {
        value["id"].as_u64().unwrap_or_else(|| panic!("an id: {value}"))
    }
}

impl Operations for CommandClient {
    fn add_lot(&mut self, label: &str, text: &str) -> Outcome<u64> {
        let agent = self.agent.clone();
        match self.run(&["lot", &agent, label, text]) {
            Ok(value) => Outcome::Done(Self::id_of(&value)),
            Err(_) => Outcome::Unknown,
        }
    }

    fn remember(&mut self, text: &str, legs: &[Vec<u64>]) -> Outcome<Remembered> {
        let agent = self.agent.clone();
        let legs: Vec<String> =
            legs.iter().map(|leg| leg.iter().map(u64::to_string).collect::<Vec<_>>().join(",")).collect();
        let mut arguments = vec!["remember", &agent, text];
        for leg in &legs {
            arguments.extend(["--leg", leg]);
        }
        match self.run(&arguments) {
            Ok(value) => Outcome::Done(Remembered { id: Self::id_of(&value), tracked: Vec::new() }),
            Err(_) => Outcome::Unknown,
        }
    }

    fn recall(&mut self, id: u64) -> Outcome<Vec<u64>> {
        let agent = self.agent.clone();
        match self.run(&["recall", &agent, &id.to_string()]) {
            Ok(value) => Outcome::Done(ids(&value["removed"])),
            Err(_) => Outcome::Unknown,
        }
    }

    fn get(&mut self, id: u64) -> Outcome<Read> {
        let agent = self.agent.clone();
        match self.run(&["get", &agent, &id.to_string()]) {
            Ok(value) => Outcome::Done(Read {
                alive: value["alive"].as_bool().unwrap_or_else(|| panic!("alive: {value}")),
                content: value["content"].as_str().map(str::to_owned),
            }),
            Err(run) => {
                assert!(!run.stderr.contains("has id"), "{}: acknowledged id {id} unknown: {}", self.name, run.stderr);
                Outcome::Unknown
            }
        }
    }
}

/// The ids of a JSON array.
pub fn ids(value: &Value) -> Vec<u64> {
    value.as_array().unwrap_or_else(|| panic!("a list of ids: {value}")).iter().filter_map(Value::as_u64).collect()
}
