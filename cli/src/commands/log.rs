//! `cheesedb log AGENT`: the agent's access log, every entry verified.
//!
//! It reads the files only, so it works whether or not a server is running, and never opens
//! the store: the log of a deleted agent can still be read.

use serde_json::{json, Value};

use crate::arguments::AgentName;
use crate::commands::Context;
use crate::failure::Failure;
use crate::output::escaped;
use crate::utc_time::utc_text;
use cheesedb::access_log::{read, Limits, LogBreak, ReadError, VerifiedEntry, VerifiedLog};

/// Prints the verified entries (JSON: an array of objects), or fails naming the file and entry
/// where the chain breaks. Where the server went on in a new file after damage, the entries
/// that verify are printed and the command then fails naming the break.
pub fn run(arguments: AgentName, context: &Context) -> Result<(), Failure> {
    let agent = &arguments.agent;
    if agent.trim().starts_with("cheesedb-") {
        return Err(Failure::new("the access log is found by the agent's name, not its token"));
    }
    let log = read(&context.folder, agent, &Limits::default()).map_err(|error| failure(agent, error))?;
    if let Some(torn) = &log.torn {
        eprintln!(
            "cheesedb: note: {} line {} is incomplete: an append cut short by a crash (or still being written), not an edit; the server cuts it off when it next opens the log",
            escaped(&torn.file),
            torn.line
        );
    }
    let entries: Vec<Value> = log.entries.iter().map(entry_json).collect();
    context.printer.result(Value::Array(entries), || describe(agent, &log))?;
    match log.breaks.first() {
        None => Ok(()),
        Some(first) => Err(Failure::damaged(format!(
            "the access log of agent {agent:?} does not verify: {}{}; the entries shown are those that verify",
            describe_break(first),
            match log.breaks.len() {
                1 => String::new(),
                more => format!(" ({more} breaks in all)"),
            }
        ))),
    }
}

/// A break in a few words: what the server noted, what is found there now.
fn describe_break(found: &LogBreak) -> String {
    let noted = &found.noted;
    let place = match noted.line {
        Some(line) => format!("file {} line {line}", noted.file_number),
        None => format!("file {}", noted.file_number),
    };
    let now = found.found.as_ref().map_or_else(String::new, |damage| format!(" ({damage})"));
    format!("the server found its {place} {} and went on in {}{now}", escaped(&noted.kind), escaped(&found.file))
}

fn failure(agent: &str, error: ReadError) -> Failure {
    match error {
        ReadError::Damaged(damage) => {
            Failure::damaged(format!("the access log of agent {agent:?} does not verify: {damage}"))
        }
        ReadError::Io { file, error } => Failure::new(format!("cannot read the access log {file}: {error}")),
    }
}

fn entry_json(verified: &VerifiedEntry) -> Value {
    let entry = &verified.entry;
    let mut value = json!({
        "number": verified.number,
        "time_unix_ms": entry.time_unix_ms,
        "pid": entry.pid,
        "uid": entry.uid,
        "operation": entry.operation,
        "ids": entry.ids,
        "outcome": entry.outcome,
        "hash": verified.hash,
    });
    if verified.ids_left_out > 0 {
        value["ids_left_out"] = json!(verified.ids_left_out);
    }
    value
}

fn describe(agent: &str, log: &VerifiedLog) -> String {
    if log.entries.is_empty() {
        return format!(
            "no access log entries for agent {} (the memory server writes them: cheesedb serve)",
            escaped(&format!("{agent:?}"))
        );
    }
    log.entries.iter().map(entry_line).collect::<Vec<_>>().join("\n")
}

/// `#12  2026-01-02 03:04:05.678 UTC  pid 41  uid 1000  remember  ids 3,4  ok`
fn entry_line(verified: &VerifiedEntry) -> String {
    let entry = &verified.entry;
    let mut ids = entry.ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    if ids.is_empty() {
        ids.push('-');
    }
    if verified.ids_left_out > 0 {
        ids.push_str(&format!(" (+{} more)", verified.ids_left_out));
    }
    format!(
        "#{}  {}  pid {}  uid {}  {}  ids {}  {}",
        verified.number,
        utc_text(entry.time_unix_ms),
        entry.pid,
        entry.uid,
        escaped(&entry.operation),
        ids,
        escaped(&entry.outcome)
    )
}
