//! Timing the open of the benchmark's agent, and what it costs in resident memory.
//!
//! The benchmark process has written a million memories and freed much of what it used; the
//! allocator would hand that memory back to the open without the kernel seeing any growth. A
//! fresh process (`cheesedb-bench --open-probe FOLDER`, the token on standard input) measures
//! the open as a user's program sees it. Asked for a first search (`--probe-query QUERY`), it
//! times that too: the search index is built by the first search after an open.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cheesedb::{Agent, Io, Options, Report, Store, StoreBuilder, Token};
use serde_json::{json, Value};

use crate::engine::OpenFigures;
use crate::failure::Failure;

/// How the benchmark opens its store in `folder`: with automatic compaction off, since one
/// that a recall made due would hold the agent for a segment while the next scenario is timed
/// (`--auto-compaction` measures that pause by itself).
pub fn bench_store(folder: &Path, io: Io) -> StoreBuilder {
    Store::builder(folder).io(io).options(Options::default().auto_compact_dead_nodes(0))
}

/// Opens the store in `folder` and the agent of `token`, timing both, then the first search
/// for `first_query` if one is given.
pub fn open_measured(
    folder: &Path,
    io: Io,
    token: &Token,
    first_query: Option<&str>,
) -> Result<(Store, Agent, OpenFigures), Failure> {
    let resident_before = resident_bytes();
    let started = Instant::now();
    let store = bench_store(folder, io).open()?;
    let store_opened = Instant::now();
    let agent = store.open_agent(token)?;
    let agent_opened = Instant::now();
    let resident_after = resident_bytes();
    let mut figures = OpenFigures {
        store_open: store_opened - started,
        agent_open: agent_opened - store_opened,
        structure_heap_bytes: Some(agent.graph_heap_bytes()? as u64),
        resident_growth_bytes: resident_before.zip(resident_after).map(|(before, after)| after.saturating_sub(before)),
        records_replayed: Some(replayed(&agent.report())),
        ..OpenFigures::default()
    };
    if let Some(query) = first_query {
        let started = Instant::now();
        agent.search(query, FIRST_SEARCH_LIMIT)?;
        figures.first_search = Some(started.elapsed());
        let resident_searched = resident_bytes();
        figures.first_search_resident_growth_bytes =
            resident_after.zip(resident_searched).map(|(before, after)| after.saturating_sub(before));
        figures.index_heap_bytes = Some(agent.search_heap_bytes()? as u64);
    }
    Ok((store, agent, figures))
}

/// Hits asked of the first search after an open: the top 10, as the timed searches.
const FIRST_SEARCH_LIMIT: usize = 10;

/// Records the open replayed from the log rather than loaded from a snapshot.
fn replayed(report: &Report) -> u64 {
    report.records.saturating_sub(report.records_from_snapshot)
}

/// The child's side: reads the token from standard input, opens (and searches for
/// `first_query`, if given), prints the figures as JSON.
pub fn run_probe(folder: &Path, io: Io, first_query: Option<&str>) -> Result<(), Failure> {
    let mut token_text = String::new();
    std::io::stdin()
        .read_to_string(&mut token_text)
        .map_err(|error| Failure::new(format!("cannot read the token from standard input: {error}")))?;
    let token: Token =
        token_text.trim().parse().map_err(|_| Failure::new("the token on standard input is not valid"))?;
    let (_store, _agent, figures) = open_measured(folder, io, &token, first_query)?;
    let line = json!({
        "store_open_seconds": figures.store_open.as_secs_f64(),
        "agent_open_seconds": figures.agent_open.as_secs_f64(),
        "structure_heap_bytes": figures.structure_heap_bytes,
        "resident_growth_bytes": figures.resident_growth_bytes,
        "records_replayed": figures.records_replayed,
        "first_search_seconds": figures.first_search.map(|elapsed| elapsed.as_secs_f64()),
        "index_heap_bytes": figures.index_heap_bytes,
        "first_search_resident_growth_bytes": figures.first_search_resident_growth_bytes,
    });
    crate::output::write_stdout(&format!("{line}\n"))
}

/// Runs the probe in a child process made from `executable` and reads its figures.
pub fn measure_in_child(
    executable: &Path,
    folder: &Path,
    io: Io,
    token: &Token,
    first_query: Option<&str>,
) -> Result<OpenFigures, Failure> {
    let cannot = |error: std::io::Error| Failure::new(format!("cannot run the open probe: {error}"));
    let mut command = Command::new(executable);
    command.arg("--io").arg(io.name()).arg("--open-probe").arg(folder);
    if let Some(query) = first_query {
        command.arg("--probe-query").arg(query);
    }
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(cannot)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(token.to_string().as_bytes()).map_err(cannot)?;
    }
    let output = child.wait_with_output().map_err(cannot)?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stderr);
        return Err(Failure::new(format!("the open probe failed: {}", message.trim())));
    }
    let value: Value = serde_json::from_slice(&output.stdout)
        .map_err(|error| Failure::new(format!("the open probe printed something unexpected: {error}")))?;
    let seconds = |key: &str| value[key].as_f64().map(Duration::from_secs_f64);
    let (Some(store_open), Some(agent_open)) = (seconds("store_open_seconds"), seconds("agent_open_seconds")) else {
        return Err(Failure::new("the open probe printed no open times"));
    };
    Ok(OpenFigures {
        store_open,
        agent_open,
        structure_heap_bytes: value["structure_heap_bytes"].as_u64(),
        resident_growth_bytes: value["resident_growth_bytes"].as_u64(),
        records_replayed: value["records_replayed"].as_u64(),
        first_search: seconds("first_search_seconds"),
        index_heap_bytes: value["index_heap_bytes"].as_u64(),
        first_search_resident_growth_bytes: value["first_search_resident_growth_bytes"].as_u64(),
    })
}

/// This process's resident memory, where the system tells it (Linux's /proc).
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kibibytes: u64 = line.trim_start_matches("VmRSS:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kibibytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(resident_bytes().is_some_and(|bytes| bytes > 0));
        }
    }
}
