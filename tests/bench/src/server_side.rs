//! `cheesedb-bench --server`: the memory server beside the same calls in one process, on the
//! same data, in one run: the round trip of a `get`, and durable writes from 8 clients against
//! 8 threads sharing one `Agent`.
//!
//! The server is the `cheesedb` command (`cheesedb serve`) in a child process, as users run it:
//! the one `CHEESEDB_BIN` names, else the one built beside this benchmark. The in-process side
//! opens a copy of the same data with the library. Rounds alternate which side goes first, and
//! the report gives each figure's median over the rounds.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use cheesedb::{Agent, Error, Id, Io, Store, Token};
use serde_json::json;

use crate::cheesedb_command;
use crate::failure::Failure;
use crate::figures::{median, percentile};
use crate::output::Printer;

/// Writers at once, on each side.
const WRITERS: usize = 8;
/// The content of every lot: about the size of a short memory.
const CONTENT: &[u8] = b"the user lives in Pune and carries an umbrella from June to September, monsoon months";

/// How much one run measures.
#[derive(Debug, Clone, Copy)]
pub struct ServerBenchSize {
    /// Lots the agent holds before the gets.
    pub lots: u64,
    /// Timed gets on each side.
    pub gets: usize,
    /// Durable writes per writer on each side.
    pub writes_per_writer: usize,
    /// Rounds, each side once per round.
    pub rounds: usize,
}

/// The full run.
pub const FULL: ServerBenchSize = ServerBenchSize { lots: 10_000, gets: 50_000, writes_per_writer: 4_000, rounds: 5 };
/// `--quick`.
pub const QUICK: ServerBenchSize = ServerBenchSize { lots: 10_000, gets: 20_000, writes_per_writer: 300, rounds: 3 };
/// `--smoke`: only shows that it works.
pub const SMOKE: ServerBenchSize = ServerBenchSize { lots: 500, gets: 500, writes_per_writer: 20, rounds: 1 };

/// One side's figures in one round.
#[derive(Debug, Clone, Copy, Default)]
struct SideFigures {
    get_median_us: f64,
    get_p99_us: f64,
    writes_per_second: f64,
}

/// One side under test: what a get and a write are on it.
trait Side: Send + Sync + Clone + 'static {
    fn get(&self, id: Id) -> Result<(), Error>;
    fn add_lot(&self, content: &[u8]) -> Result<Id, Error>;
    /// A handle for another writer (another connection through the server).
    fn another(&self) -> Result<Self, Error>;
}

impl Side for Agent {
    fn get(&self, id: Id) -> Result<(), Error> {
        Agent::get(self, id).map(drop)
    }
    fn add_lot(&self, content: &[u8]) -> Result<Id, Error> {
        Agent::add_lot(self, "note", content)
    }
    fn another(&self) -> Result<Agent, Error> {
        Ok(self.clone())
    }
}

/// An agent served by the server, with the means to open another connection to it.
#[derive(Clone)]
struct Remote {
    client: Store,
    token: Arc<Token>,
    agent: Agent,
}

impl Side for Remote {
    fn get(&self, id: Id) -> Result<(), Error> {
        self.agent.get(id).map(drop)
    }
    fn add_lot(&self, content: &[u8]) -> Result<Id, Error> {
        self.agent.add_lot("note", content)
    }
    fn another(&self) -> Result<Remote, Error> {
        let agent = self.client.open_agent(&self.token)?;
        Ok(Remote { client: self.client.clone(), token: self.token.clone(), agent })
    }
}

fn engine_failure(doing: &str) -> impl Fn(Error) -> Failure + '_ {
    move |error| Failure::from(error).context(doing)
}

/// Fills an agent with `lots` lots, in batches.
fn fill(agent: &Agent, lots: u64) -> Result<(), Failure> {
    let mut left = lots;
    while left > 0 {
        let count = left.min(1024);
        agent
            .batch(|batch| (0..count).try_for_each(|_| batch.add_lot("note", CONTENT).map(drop)))
            .map_err(engine_failure("filling the benchmark's agent"))?;
        left -= count;
    }
    Ok(())
}

/// Times `size.gets` gets of ids spread over the lots; returns the median and the 99th percentile.
fn time_gets(side: &impl Side, size: ServerBenchSize) -> Result<(f64, f64), Failure> {
    let mut random = fastrand::Rng::with_seed(7);
    let warm_up = size.gets / 10;
    let mut timings_us = Vec::with_capacity(size.gets);
    for index in 0..size.gets + warm_up {
        let id = Id::from(random.u64(1..=size.lots));
        let started = Instant::now();
        side.get(id).map_err(engine_failure("a timed get"))?;
        if index >= warm_up {
            timings_us.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok((median(&mut timings_us.clone()), percentile(&mut timings_us, 0.99)))
}

/// `WRITERS` threads, each with its own handle, each writing `size.writes_per_writer` lots,
/// each durable before the next; returns writes per second.
fn time_writes(side: &impl Side, size: ServerBenchSize) -> Result<f64, Failure> {
    let handles: Vec<_> =
        (0..WRITERS).map(|_| side.another()).collect::<Result<_, _>>().map_err(engine_failure("opening writers"))?;
    let started = Instant::now();
    let threads: Vec<_> = handles
        .into_iter()
        .map(|handle| {
            std::thread::spawn(move || -> Result<(), Error> {
                (0..size.writes_per_writer).try_for_each(|_| handle.add_lot(CONTENT).map(drop))
            })
        })
        .collect();
    for thread in threads {
        thread
            .join()
            .map_err(|_| Failure::new("a writer of the benchmark panicked"))?
            .map_err(engine_failure("a timed write"))?;
    }
    let total = (WRITERS * size.writes_per_writer) as f64;
    Ok(total / started.elapsed().as_secs_f64())
}

fn measure(side: &impl Side, size: ServerBenchSize) -> Result<SideFigures, Failure> {
    let (get_median_us, get_p99_us) = time_gets(side, size)?;
    let writes_per_second = time_writes(side, size)?;
    Ok(SideFigures { get_median_us, get_p99_us, writes_per_second })
}

/// A store in `folder` with one filled agent; returns its token.
fn prepare(folder: &Path, io: Io, lots: u64) -> Result<Token, Failure> {
    let store = Store::builder(folder).io(io).open().map_err(engine_failure("opening the benchmark's store"))?;
    let token = store.create_agent("bench").map_err(engine_failure("creating the benchmark's agent"))?;
    let agent = store.open_agent(&token).map_err(engine_failure("opening the benchmark's agent"))?;
    fill(&agent, lots)?;
    agent.close().map_err(engine_failure("closing the benchmark's agent"))?;
    Ok(token)
}

fn in_process(folder: &Path, io: Io, size: ServerBenchSize) -> Result<SideFigures, Failure> {
    let token = prepare(folder, io, size.lots)?;
    let store = Store::builder(folder).io(io).open().map_err(engine_failure("opening the benchmark's store"))?;
    let agent = store.open_agent(&token).map_err(engine_failure("opening the benchmark's agent"))?;
    measure(&agent, size)
}

/// A `cheesedb serve` child process, stopped with SIGTERM when dropped.
struct ServerChild {
    child: Child,
    socket: PathBuf,
}

impl ServerChild {
    fn start(program: &Path, folder: &Path, io: Io) -> Result<ServerChild, Failure> {
        let mut child = Command::new(program)
            .arg("--dir")
            .arg(folder)
            .arg("--io")
            .arg(io.to_string())
            .arg("--json")
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| Failure::new(format!("cannot start cheesedb serve: {error}")))?;
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or_else(|| Failure::new("the server's output is not piped"))?;
        BufReader::new(stdout).read_line(&mut line).map_err(|error| Failure::new(format!("the server: {error}")))?;
        let ready: serde_json::Value =
            serde_json::from_str(&line).map_err(|_| Failure::new("the benchmark's server did not start"))?;
        let socket = PathBuf::from(ready["socket"].as_str().unwrap_or_default());
        Ok(ServerChild { child, socket })
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let stopped = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|pid| rustix::process::kill_process(pid, rustix::process::Signal::TERM).is_ok());
        if !stopped {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn through_server(program: &Path, folder: &Path, io: Io, size: ServerBenchSize) -> Result<SideFigures, Failure> {
    let token = prepare(folder, io, size.lots)?;
    let server = ServerChild::start(program, folder, io)?;
    let client = Store::connect(&server.socket).map_err(engine_failure("connecting to the server"))?;
    let agent = client.open_agent(&token).map_err(engine_failure("opening the agent through the server"))?;
    let remote = Remote { client, token: Arc::new(token), agent };
    let figures = measure(&remote, size)?;
    drop(remote);
    drop(server);
    Ok(figures)
}

/// Runs the comparison in `root` and prints it.
pub fn run(root: &Path, io: Io, size: ServerBenchSize, printer: Printer) -> Result<(), Failure> {
    // Before any round, so that a missing program is said at once, not after the first side.
    let program = cheesedb_command::locate()?;
    let mut local = Vec::new();
    let mut remote = Vec::new();
    for round in 0..size.rounds {
        let folder = |side: &str| root.join(format!("server-bench-{side}-{round}"));
        let (local_folder, remote_folder) = (folder("in-process"), folder("server"));
        for path in [&local_folder, &remote_folder] {
            if path.exists() {
                return Err(Failure::new(format!("{} exists from an earlier run; remove it first", path.display())));
            }
        }
        if round % 2 == 0 {
            local.push(in_process(&local_folder, io, size)?);
            remote.push(through_server(&program, &remote_folder, io, size)?);
        } else {
            remote.push(through_server(&program, &remote_folder, io, size)?);
            local.push(in_process(&local_folder, io, size)?);
        }
        let _ = std::fs::remove_dir_all(&local_folder);
        let _ = std::fs::remove_dir_all(&remote_folder);
    }
    // Each round's two sides met the same machine; their ratio is steadier than a ratio of
    // medians taken apart, on a machine whose load drifts.
    let mut ratios: Vec<f64> = local
        .iter()
        .zip(&remote)
        .map(|(local, remote)| remote.writes_per_second / local.writes_per_second.max(f64::MIN_POSITIVE))
        .collect();
    let write_ratio = median(&mut ratios);
    print(&medians_of(&local), &medians_of(&remote), write_ratio, size, printer)
}

fn medians_of(rounds: &[SideFigures]) -> SideFigures {
    let pick = |field: fn(&SideFigures) -> f64| median(&mut rounds.iter().map(field).collect::<Vec<_>>());
    SideFigures {
        get_median_us: pick(|figures| figures.get_median_us),
        get_p99_us: pick(|figures| figures.get_p99_us),
        writes_per_second: pick(|figures| figures.writes_per_second),
    }
}

/// Prints both sides; `write_ratio` is the median over the rounds of the server's write rate
/// over the one process's.
fn print(
    local: &SideFigures,
    remote: &SideFigures,
    write_ratio: f64,
    size: ServerBenchSize,
    printer: Printer,
) -> Result<(), Failure> {
    let value = json!({
        "lots": size.lots,
        "gets": size.gets,
        "writers": WRITERS,
        "writes_per_writer": size.writes_per_writer,
        "rounds": size.rounds,
        "in_process": {
            "get_median_us": local.get_median_us,
            "get_p99_us": local.get_p99_us,
            "durable_writes_per_second": local.writes_per_second,
        },
        "through_server": {
            "get_median_us": remote.get_median_us,
            "get_p99_us": remote.get_p99_us,
            "durable_writes_per_second": remote.writes_per_second,
        },
        "server_write_ratio": write_ratio,
    });
    printer.result(value, || {
        [
            format!(
                "memory server against one process: {} lots, {} gets, {WRITERS} writers x {} durable writes, median of {} rounds",
                size.lots, size.gets, size.writes_per_writer, size.rounds
            ),
            format!("{:<36}{:>14}{:>16}", "", "in process", "through server"),
            format!("{:<36}{:>14.1}{:>16.1}", "get, median round trip (us)", local.get_median_us, remote.get_median_us),
            format!("{:<36}{:>14.1}{:>16.1}", "get, 99th percentile (us)", local.get_p99_us, remote.get_p99_us),
            format!(
                "{:<36}{:>14.0}{:>16.0}   ({write_ratio:.2}x)",
                "durable writes/s, 8 writers", local.writes_per_second, remote.writes_per_second
            ),
        ]
        .join("\n")
    })
}
