//! The command line of the benchmark: what to measure, where, and how to print it. `--dir`,
//! `--json` and `--io` mean what they mean for the `cheesedb` command.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// cheesedb measured on a million memories in one agent, optionally against SQLite
///
/// Writes, recall, open, RAM, verify and compaction, then search on a million texts; or, with
/// --server, --encryption or --replication, the memory server, encrypted agents or replication.
#[derive(Debug, Parser)]
#[command(name = "cheesedb-bench", version)]
#[command(after_help = "The data goes to a temporary folder, removed at the end, unless --dir names one.
--compare sqlite needs a build with the sqlite feature:
  cargo build --release -p cheesedb-bench --features sqlite
--server runs the cheesedb command of the same build (CHEESEDB_BIN names another):
  cargo build --release -p cheesedb-cli

Examples:
  cheesedb-bench --quick
  cheesedb-bench --compare sqlite --repeat 3 --json")]
pub struct Arguments {
    /// The folder for the benchmark's data [default: a temporary one, removed at the end]
    #[arg(long, value_name = "FOLDER")]
    pub dir: Option<PathBuf>,

    /// Print the result as one line of JSON, for scripts
    #[arg(long)]
    pub json: bool,

    /// How cheesedb reaches its files: std (ordinary system calls) or uring (io_uring, Linux)
    #[arg(long, value_name = "IO", env = "CHEESEDB_IO", default_value_t = cheesedb::Io::Std)]
    pub io: cheesedb::Io,

    /// A smaller run (100,000 memories) that finishes in about two minutes
    #[arg(long, conflicts_with = "smoke")]
    pub quick: bool,

    /// A tiny run (2,000 memories) that only shows every scenario works
    #[arg(long)]
    pub smoke: bool,

    /// Run every scenario on another engine too, and print the ratios
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub compare: Option<CompareWith>,

    /// Run everything this many times and report the median of each figure
    #[arg(long, value_name = "COUNT", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub repeat: u32,

    /// Run one section only
    #[arg(long, value_enum, value_name = "SECTION")]
    pub only: Option<Section>,

    /// Measure the memory server instead: a get's round trip and durable writes from 8 clients,
    /// beside the same calls in one process
    #[arg(long, conflicts_with_all = ["compare", "only"])]
    pub server: bool,

    /// Measure an encrypted agent instead, beside a plaintext one (and SQLite with --compare
    /// sqlite): every graph scenario, durable writes in paired rounds, open, and Erase
    #[arg(long, conflicts_with_all = ["server", "only"])]
    pub encryption: bool,

    /// Measure replication to the object store URL names (s3://BUCKET/PREFIX, endpoint and
    /// credentials from the AWS_* variables) beside that store's own throughput
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "encryption", "compare", "only"])]
    pub replication: Option<cheesedb::replication::ReplicaLocation>,

    /// Measure a recall in a space shared by 8 members instead, each member's memories built on
    /// the space's (beside the same graph in SQLite with --compare sqlite)
    #[arg(long, conflicts_with_all = ["server", "encryption", "replication", "only"])]
    pub spaces: bool,

    /// Measure recall on a second shape of graph instead: a million nodes with parents drawn
    /// uniformly from all earlier ones, then two subgraphs of consecutive ids, one recalled Fair
    /// and one Strict (beside SQLite with --compare sqlite)
    #[arg(long, conflicts_with_all = ["server", "encryption", "replication", "spaces", "only"])]
    pub uniform_graph: bool,

    /// Measure what the disk allows an Erase of the graph section, without any engine: 10,001
    /// small overwrites at random places of a file the size of its log, then one sync
    #[arg(long, conflicts_with_all = ["server", "encryption", "replication", "spaces", "uniform_graph", "compare", "only"])]
    pub erase_floor: bool,

    /// Measure how long writes wait while compaction runs by itself after a recall, beside the
    /// same writes with none running and a whole compaction by hand
    #[arg(long, conflicts_with_all = ["server", "encryption", "replication", "spaces", "compare", "only"])]
    pub auto_compaction: bool,

    /// Open the benchmark's agent in FOLDER, token on standard input, and print what the open took
    #[arg(long, value_name = "FOLDER", hide = true)]
    pub open_probe: Option<PathBuf>,

    /// With --open-probe: after the open, search for QUERY and print what that took
    #[arg(long, value_name = "QUERY", hide = true, requires = "open_probe")]
    pub probe_query: Option<String>,
}

/// The parts of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Section {
    /// Writes, recalls, open, RAM, verify and compaction on one agent's graph of memories
    Graph,
    /// Keyword search (against SQLite FTS5), open and first search, writes with the index,
    /// vector and hybrid search
    Search,
}

/// Which sections a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sections {
    /// Writes, recalls, open, RAM, verify and compaction.
    pub graph: bool,
    /// Search.
    pub search: bool,
}

impl Sections {
    /// Both sections, or the one of `only`.
    pub fn from_only(only: Option<Section>) -> Sections {
        match only {
            None => Sections { graph: true, search: true },
            Some(Section::Graph) => Sections { graph: true, search: false },
            Some(Section::Search) => Sections { graph: false, search: true },
        }
    }
}

/// Engines to compare with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareWith {
    /// SQLite (bundled), WAL with synchronous=FULL, the same data model
    Sqlite,
}
