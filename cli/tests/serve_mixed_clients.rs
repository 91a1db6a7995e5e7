//! Sixteen clients of three kinds on the same two agents at once, through one memory server
//! that is killed with SIGKILL midway and started again: nothing acknowledged is lost, no id is
//! acknowledged twice, and every agent verifies afterwards.
//!
//! - 10 library clients: threads with a `cheesedb::Client`, connecting again when the server
//!   went away;
//! - 4 command-line clients: threads running `cheesedb --json lot|remember|recall|get`, which go
//!   through the server while it runs and open the store themselves while it is down;
//! - 2 MCP clients: `cheesedb mcp AGENT` processes driven over JSON-RPC (`add_source`,
//!   `remember` with legs, `forget_source`, `get`), read tracking on.
//!
//! Each client writes lots and memories on its own earlier ids, recalls some of them now and
//! then (noting what each recall removed) and reads its ids back, checking every answer against
//! what it was told. A write whose answer never came (a broken connection, a command that
//! failed, a tool call refused) is not counted as acknowledged, and a recall whose answer never
//! came may have removed its target and what rests on it. At the end the server is stopped
//! cleanly, the store opened here, and every acknowledged write looked up.
//!
//! 10,000 operations by default; `CHEESEDB_MIXED_OPERATIONS` asks for more and
//! `CHEESEDB_MIXED_KILLS` for more kills (one per 25,000 operations unless set). The longer
//! run is `.ci/soak.sh` (release build, 200,000 operations unless told otherwise):
//!
//! ```text
//! bash .ci/soak.sh            # or: bash .ci/soak.sh 1000000
//! ```

use crate::common;
mod command_client;
mod ledger;
mod library_client;
mod mcp_client;
mod operations;
mod workload;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cheesedb::{Store, Token};
use command_client::CommandClient;
use common::server_process::ServerProcess;
use common::Cli;
use ledger::{check_agent, Checked, Counts, Ledger};
use library_client::LibraryClient;
use mcp_client::McpClient;
use operations::Operations;
use workload::Progress;

/// The agents every client kind shares.
const AGENTS: usize = 2;
const LIBRARY_CLIENTS: usize = 10;
const COMMAND_CLIENTS: usize = 4;
const MCP_CLIENTS: usize = 2;
/// Each command-line client's share of the operations, per mille: a command is a process.
const COMMAND_CLIENT_PER_MILLE: u64 = 25;
/// Each MCP client's share of the operations, per mille.
const MCP_CLIENT_PER_MILLE: u64 = 50;
const OPERATIONS_DEFAULT: u64 = 10_000;
const OPERATIONS_VARIABLE: &str = "CHEESEDB_MIXED_OPERATIONS";
const KILLS_VARIABLE: &str = "CHEESEDB_MIXED_KILLS";
/// Unless told otherwise, one kill per this many operations (at least one).
const OPERATIONS_PER_KILL: u64 = 25_000;
/// How long the server stays down at least: commands and MCP calls use the store themselves
/// meanwhile. It stays down longer, up to [`DOWNTIME_MAX`], until one of each got an answer.
const DOWNTIME: Duration = Duration::from_millis(300);
const DOWNTIME_MAX: Duration = Duration::from_secs(10);

/// How much work, and how many kills.
struct Plan {
    operations: u64,
    kills: u64,
}

impl Plan {
    fn from_environment() -> Plan {
        let number = |name: &str| {
            std::env::var(name).ok().map(|value| value.parse::<u64>().unwrap_or_else(|_| panic!("{name}={value}")))
        };
        let operations = number(OPERATIONS_VARIABLE).unwrap_or(OPERATIONS_DEFAULT).max(1000);
        let kills = number(KILLS_VARIABLE).unwrap_or((operations / OPERATIONS_PER_KILL).max(1));
        Plan { operations, kills }
    }

    fn command_client_operations(&self) -> u64 {
        self.operations * COMMAND_CLIENT_PER_MILLE / 1000
    }

    fn mcp_client_operations(&self) -> u64 {
        self.operations * MCP_CLIENT_PER_MILLE / 1000
    }

    /// The operations of all the clients of `kind`: the library clients do what the others
    /// leave.
    fn kind_operations(&self, kind: Kind) -> u64 {
        let commands = self.command_client_operations() * count(COMMAND_CLIENTS);
        let mcp_calls = self.mcp_client_operations() * count(MCP_CLIENTS);
        match kind {
            Kind::Library => self.operations - commands - mcp_calls,
            Kind::Command => commands,
            Kind::Mcp => mcp_calls,
        }
    }

    /// Library client `index`'s operations: those of the kind, shared out.
    fn library_client_operations(&self, index: usize) -> u64 {
        let all = self.kind_operations(Kind::Library);
        all / count(LIBRARY_CLIENTS) + u64::from(count(index) < all % count(LIBRARY_CLIENTS))
    }
}

fn count(number: usize) -> u64 {
    u64::try_from(number).unwrap()
}

/// The kinds of client.
#[derive(Clone, Copy)]
enum Kind {
    Library = 0,
    Command = 1,
    Mcp = 2,
}

/// What the clients and the thread that kills the server share.
#[derive(Default)]
struct OutageCounters {
    /// Operations finished, by kind of client.
    finished: [AtomicU64; 3],
    /// Operations acknowledged while the server was down, by kind of client.
    acknowledged_while_down: [AtomicU64; 3],
    /// Whether the server is down.
    server_down: AtomicBool,
}

impl OutageCounters {
    fn finished(&self) -> u64 {
        self.finished.iter().map(|finished| finished.load(Ordering::Relaxed)).sum()
    }
}

/// What a client thread hands back.
struct Finished {
    ledger: Ledger,
    kind: Kind,
    slowest_command: Duration,
    reconnections: u64,
}

/// Runs the workload on `client` in a thread of its own.
fn spawn_client(
    (kind, mut ledger): (Kind, Ledger),
    operations: u64,
    counters: &Arc<OutageCounters>,
    client: impl FnOnce() -> Box<dyn ClientKind> + Send + 'static,
) -> JoinHandle<Finished> {
    let counters = counters.clone();
    std::thread::spawn(move || {
        let mut client = client();
        let seed = count(ledger.agent) * 1_000_003 + u64::from(ledger.client.bytes().map(u32::from).sum::<u32>());
        let progress = Progress {
            finished: &counters.finished[kind as usize],
            acknowledged_while_down: &counters.acknowledged_while_down[kind as usize],
            server_down: &counters.server_down,
        };
        workload::run(client.operations(), &mut ledger, operations, seed, &progress);
        let (slowest_command, reconnections) = client.finish();
        Finished { ledger, kind, slowest_command, reconnections }
    })
}

/// A client of any kind, and how it ends.
trait ClientKind: Send {
    fn operations(&mut self) -> &mut dyn Operations;
    /// Ends the client: the slowest command it ran and the times it connected again.
    fn finish(self: Box<Self>) -> (Duration, u64);
}

impl ClientKind for LibraryClient {
    fn operations(&mut self) -> &mut dyn Operations {
        self
    }
    fn finish(self: Box<Self>) -> (Duration, u64) {
        (Duration::ZERO, self.reconnections.saturating_sub(1))
    }
}

impl ClientKind for CommandClient {
    fn operations(&mut self) -> &mut dyn Operations {
        self
    }
    fn finish(self: Box<Self>) -> (Duration, u64) {
        (self.slowest, 0)
    }
}

impl ClientKind for McpClient {
    fn operations(&mut self) -> &mut dyn Operations {
        self
    }
    fn finish(self: Box<Self>) -> (Duration, u64) {
        McpClient::finish(*self);
        (Duration::ZERO, 0)
    }
}

/// Starts the server again after a kill. Meanwhile a command may hold the store's folder lock,
/// and a server refuses to start then: it is started again until the lock is free.
fn restart(folder: &Path) -> (ServerProcess, u64) {
    ServerProcess::start_when_free(folder)
}

/// Creates the agents with the command, so their names are in the tokens file.
fn create_agents(cli: &Cli) -> Vec<(String, Token)> {
    (0..AGENTS)
        .map(|index| {
            let name = format!("agent-{index}");
            let created = cli.create_agent(&name);
            let token = created["token"].as_str().expect("a token").parse::<Token>().expect("a whole token");
            (name, token)
        })
        .collect()
}

/// Starts every client; client `n` of each kind works on agent `n % AGENTS`.
fn start_clients(
    cli: &Arc<Cli>,
    server: &ServerProcess,
    agents: &[(String, Token)],
    plan: &Plan,
    counters: &Arc<OutageCounters>,
) -> Vec<JoinHandle<Finished>> {
    let mut threads = Vec::new();
    for index in 0..LIBRARY_CLIENTS {
        let name = format!("library client {index}");
        let (socket, token) = (server.socket.clone(), agents[index % AGENTS].1.clone());
        let ledger = (Kind::Library, Ledger::new(name.clone(), index % AGENTS));
        threads.push(spawn_client(ledger, plan.library_client_operations(index), counters, move || {
            Box::new(LibraryClient::new(name, socket, token))
        }));
    }
    for index in 0..COMMAND_CLIENTS {
        let name = format!("command client {index}");
        let (cli, agent) = (cli.clone(), agents[index % AGENTS].0.clone());
        let ledger = (Kind::Command, Ledger::new(name.clone(), index % AGENTS));
        threads.push(spawn_client(ledger, plan.command_client_operations(), counters, move || {
            Box::new(CommandClient::new(name, cli, agent))
        }));
    }
    for index in 0..MCP_CLIENTS {
        let name = format!("MCP client {index}");
        let (cli, agent) = (cli.clone(), agents[index % AGENTS].0.clone());
        let ledger = (Kind::Mcp, Ledger::new(name.clone(), index % AGENTS));
        threads.push(spawn_client(ledger, plan.mcp_client_operations(), counters, move || {
            Box::new(McpClient::start(name, &cli, &agent))
        }));
    }
    threads
}

/// Kills the server with SIGKILL `plan.kills` times, spread over the run: kill `n` comes once
/// the clients of some kind finished `n / (kills + 1)` of their operations, so every kind is
/// still at work. The server is started again after [`DOWNTIME`]. Returns the server running
/// at the end, the kills made and how often a restart found the folder lock held.
fn kill_and_restart(
    mut server: ServerProcess,
    folder: &Path,
    plan: &Plan,
    counters: &OutageCounters,
    threads: &[JoinHandle<Finished>],
) -> (ServerProcess, u64, u64) {
    let quotas = [Kind::Library, Kind::Command, Kind::Mcp].map(|kind| plan.kind_operations(kind));
    let (mut kills, mut refusals) = (0, 0);
    for kill in 1..=plan.kills {
        let reached = || {
            quotas
                .iter()
                .zip(&counters.finished)
                .any(|(quota, finished)| finished.load(Ordering::Relaxed) >= quota * kill / (plan.kills + 1))
        };
        while !reached() {
            if threads.iter().all(JoinHandle::is_finished) {
                return (server, kills, refusals);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        counters.server_down.store(true, Ordering::SeqCst);
        server.kill();
        kills += 1;
        stay_down(counters, &quotas);
        let (restarted, refused) = restart(folder);
        server = restarted;
        counters.server_down.store(false, Ordering::SeqCst);
        refusals += refused;
    }
    (server, kills, refusals)
}

/// Waits [`DOWNTIME`], then until a command and an MCP tool call were answered without the
/// server (unless their clients are done), up to [`DOWNTIME_MAX`].
fn stay_down(counters: &OutageCounters, quotas: &[u64; 3]) {
    let killed = Instant::now();
    let answered_before = counters.acknowledged_while_down.each_ref().map(|count| count.load(Ordering::SeqCst));
    std::thread::sleep(DOWNTIME);
    let waiting = || {
        [Kind::Command, Kind::Mcp].into_iter().any(|kind| {
            let index = kind as usize;
            let still_working = counters.finished[index].load(Ordering::SeqCst) < quotas[index];
            still_working && counters.acknowledged_while_down[index].load(Ordering::SeqCst) == answered_before[index]
        })
    };
    while waiting() && killed.elapsed() < DOWNTIME_MAX {
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn mixed_clients_lose_nothing_across_sigkill() {
    let started = Instant::now();
    let plan = Plan::from_environment();
    let cli = Arc::new(Cli::new());
    let agents = create_agents(&cli);
    let server = ServerProcess::start(cli.folder(), &[]);
    let counters = Arc::new(OutageCounters::default());
    let threads = start_clients(&cli, &server, &agents, &plan, &counters);
    let (server, kills, restart_refusals) = kill_and_restart(server, cli.folder(), &plan, &counters, &threads);
    let results: Vec<Finished> = threads.into_iter().map(|thread| thread.join().expect("a client failed")).collect();
    let workload_seconds = started.elapsed().as_secs_f64();
    server.stop();

    let counts = results.iter().fold(Counts::default(), |sum, result| sum.plus(result.ledger.counts));
    assert_eq!(counts.operations, plan.operations);
    assert_eq!(counters.finished(), plan.operations);
    assert_eq!(kills, plan.kills, "the clients finished before every kill was made");
    let of_kind = |kind: Kind| {
        results.iter().filter(move |result| result.kind as usize == kind as usize).map(|result| result.ledger.counts)
    };
    for kind in [Kind::Library, Kind::Command, Kind::Mcp] {
        assert!(
            of_kind(kind).any(|counts| counts.acknowledged_writes > 0),
            "a kind of client had no write acknowledged"
        );
    }
    // Commands and MCP tool calls used the store themselves while the server was down.
    let while_down = |kind: Kind| counters.acknowledged_while_down[kind as usize].load(Ordering::SeqCst);
    let (commands_while_down, mcp_calls_while_down) = (while_down(Kind::Command), while_down(Kind::Mcp));
    assert!(commands_while_down > 0, "no command was answered while the server was down");
    assert!(mcp_calls_while_down > 0, "no MCP tool call was answered while the server was down");

    let store = Store::open(cli.folder()).unwrap();
    let mut checked = Checked::default();
    for (index, (_name, token)) in agents.iter().enumerate() {
        let agent = store.open_agent(token).unwrap();
        let ledgers: Vec<&Ledger> =
            results.iter().map(|result| &result.ledger).filter(|ledger| ledger.agent == index).collect();
        let found = check_agent(&agent, &ledgers);
        checked.present += found.present;
        checked.recalled += found.recalled;
        checked.uncertain += found.uncertain;
    }

    let slowest_command = results.iter().map(|result| result.slowest_command).max().unwrap_or_default();
    let reconnections: u64 = results.iter().map(|result| result.reconnections).sum();
    assert!(reconnections > 0, "no library client connected again after a kill");
    println!(
        "mixed clients: {} operations, {} acknowledged writes, {} acknowledged recalls, {} reads, {} not acknowledged; \
         {kills} kills ({restart_refusals} restarts refused while a command held the folder), {reconnections} reconnections, \
         {commands_while_down} commands and {mcp_calls_while_down} MCP calls answered while the server was down; \
         slowest command {} ms; after the run: {} present, {} recalled, {} gone with a recall of unknown outcome; \
         {workload_seconds:.1} s of work, {:.1} s in all",
        counts.operations,
        counts.acknowledged_writes,
        counts.acknowledged_recalls,
        counts.reads,
        counts.not_acknowledged,
        slowest_command.as_millis(),
        checked.present,
        checked.recalled,
        checked.uncertain,
        started.elapsed().as_secs_f64()
    );
}
