//! `cheesedb-bench`: cheesedb measured on a million memories in one agent (writes, recall, open,
//! RAM, verify, compaction), side by side with SQLite when built with the `sqlite` feature; then
//! search on a million texts (keyword against SQLite FTS5, vectors, hybrid). With
//! `--encryption`, an encrypted agent beside a plaintext one instead; `--server`,
//! `--replication`, `--spaces` and `--auto-compaction` measure one part each.
//!
//! Every engine gets the same seeded data and runs the same scenarios in the same process, one
//! after the other; with `--repeat` the runs alternate which engine goes first and the report
//! gives medians. Figures from one machine compare engines; they are not absolute speeds.
//!
//! It is a program of its own, not a subcommand of `cheesedb`, so that the product's dependency
//! tree holds neither SQLite nor the workload's generator. It uses the `cheesedb` library only,
//! and runs the `cheesedb` command as a child where users would (`cheesedb serve`).

mod arguments;
mod auto_compaction;
mod cheesedb_command;
mod cheesedb_search_side;
mod cheesedb_side;
mod encryption;
mod encryption_report;
mod engine;
mod erase_floor;
mod failure;
mod figures;
mod folder;
#[cfg(feature = "sqlite")]
mod fts5_side;
mod open_probe;
mod output;
mod paired_writes;
mod progress;
mod replication;
mod report;
mod scenarios;
mod search_corpus;
mod search_engine;
mod search_scenarios;
mod server_side;
mod size;
mod spaces;
#[cfg(feature = "sqlite")]
mod sqlite_side;
mod uniform_graph;
mod workload;

#[cfg(all(test, feature = "sqlite"))]
mod agreement_tests;
#[cfg(all(test, feature = "sqlite"))]
mod search_agreement_tests;

use std::path::Path;
use std::process::ExitCode;

use cheesedb::Io;
use clap::Parser;

use crate::arguments::{Arguments, CompareWith, Sections};
use crate::cheesedb_search_side::CheesedbSearchSide;
use crate::cheesedb_side::{CheesedbSide, OpenMeasurement};
use crate::engine::Engine;
use crate::failure::{Failure, EXIT_SUCCESS};
use crate::figures::{medians, Figures};
use crate::folder::BenchFolder;
use crate::output::Printer;
use crate::progress::Progress;
use crate::report::Outcome;
use crate::search_engine::SearchEngine;
use crate::search_scenarios::SearchRun;
use crate::size::Size;

/// The workload's seed: every run, and every engine, gets the same data.
const WORKLOAD_SEED: u64 = 0x6368_6565_7365;

/// What one benchmark does.
#[derive(Debug, Clone)]
struct Settings {
    size: Size,
    io: Io,
    compare_sqlite: bool,
    repeat: u32,
    open_measurement: OpenMeasurement,
    sections: Sections,
}

fn main() -> ExitCode {
    let arguments = Arguments::parse();
    let printer = Printer { json: arguments.json };
    match run(arguments, printer) {
        Ok(status) => ExitCode::from(status),
        Err(failure) => report_failure(&failure, printer),
    }
}

/// Prints `failure` as one line on standard error (as JSON with `--json`) and picks the exit
/// status.
fn report_failure(failure: &Failure, printer: Printer) -> ExitCode {
    if !failure.message.is_empty() {
        if printer.json {
            eprintln!("{}", serde_json::json!({ "error": &failure.message }));
        } else {
            // A path the user gave may hold control characters; none reaches the terminal.
            let shown: String = failure.message.chars().filter(|character| !character.is_control()).collect();
            eprintln!("cheesedb-bench: {shown}");
        }
    }
    ExitCode::from(failure.exit_status)
}

/// Runs the benchmark in `--dir` (a temporary folder without it) and prints the outcome.
fn run(arguments: Arguments, printer: Printer) -> Result<u8, Failure> {
    let (folder, io) = (arguments.dir, arguments.io);
    if let Some(probe_folder) = arguments.open_probe {
        open_probe::run_probe(&probe_folder, io, arguments.probe_query.as_deref())?;
        return Ok(EXIT_SUCCESS);
    }
    let size = match (arguments.smoke, arguments.quick) {
        (true, _) => size::SMOKE,
        (false, true) => size::QUICK,
        (false, false) => size::FULL,
    };
    let compare_sqlite = arguments.compare == Some(CompareWith::Sqlite);
    if compare_sqlite && !cfg!(feature = "sqlite") {
        return Err(Failure::new(
            "this cheesedb-bench was built without SQLite; build it with `cargo build --release -p cheesedb-bench --features sqlite`",
        ));
    }
    if cfg!(debug_assertions) {
        eprintln!("cheesedb-bench: this is a debug build; build with --release for figures worth comparing");
    }
    if let Some(location) = &arguments.replication {
        let folder = BenchFolder::new(folder)?;
        let memories = replication::memories_for(arguments.smoke, arguments.quick);
        replication::run(folder.root(), location, memories, printer)?;
        return Ok(EXIT_SUCCESS);
    }
    if arguments.auto_compaction {
        let size = if arguments.smoke || arguments.quick { auto_compaction::SMOKE } else { auto_compaction::FULL };
        let folder = BenchFolder::new(folder)?;
        auto_compaction::run(&folder, size, printer)?;
        return Ok(EXIT_SUCCESS);
    }
    if arguments.spaces {
        let size = if arguments.smoke || arguments.quick { spaces::SMOKE } else { spaces::FULL };
        let folder = BenchFolder::new(folder)?;
        spaces::run(&folder, size, compare_sqlite, arguments.repeat, printer)?;
        return Ok(EXIT_SUCCESS);
    }
    if arguments.erase_floor {
        let cases: &[_] = if arguments.smoke || arguments.quick { &erase_floor::SMOKE } else { &erase_floor::FULL };
        let folder = BenchFolder::new(folder)?;
        erase_floor::run(&folder, cases, arguments.repeat, printer)?;
        return Ok(EXIT_SUCCESS);
    }
    if arguments.uniform_graph {
        let size = if arguments.smoke || arguments.quick { uniform_graph::SMOKE } else { uniform_graph::FULL };
        let folder = BenchFolder::new(folder)?;
        uniform_graph::run(&folder, size, io, compare_sqlite, arguments.repeat, printer)?;
        return Ok(EXIT_SUCCESS);
    }
    if arguments.server {
        let size = match (arguments.smoke, arguments.quick) {
            (true, _) => server_side::SMOKE,
            (false, true) => server_side::QUICK,
            (false, false) => server_side::FULL,
        };
        let folder = BenchFolder::new(folder)?;
        server_side::run(folder.root(), io, size, printer)?;
        return Ok(EXIT_SUCCESS);
    }
    // The probe must be this very program; without it, opens are measured in this process.
    let open_measurement =
        std::env::current_exe().map_or(OpenMeasurement::InThisProcess, OpenMeasurement::InChildProcess);
    let settings = Settings {
        size,
        io,
        compare_sqlite,
        repeat: arguments.repeat,
        open_measurement,
        sections: Sections::from_only(arguments.only),
    };
    let folder = BenchFolder::new(folder)?;
    if arguments.encryption {
        let outcome = encryption::measure(&settings, &folder, Progress::new())?;
        encryption_report::print(&outcome, printer)?;
        return Ok(EXIT_SUCCESS);
    }
    let outcome = measure(&settings, &folder, Progress::new())?;
    report::print(&outcome, printer)?;
    Ok(EXIT_SUCCESS)
}

/// Runs every engine `settings.repeat` times and gathers the medians.
fn measure(settings: &Settings, folder: &BenchFolder, progress: Progress) -> Result<Outcome, Failure> {
    let mut runs = Vec::with_capacity(settings.repeat as usize);
    for run in 1..=settings.repeat {
        // Alternate which engine goes first, so neither always takes the first turn.
        let sqlite_first = run % 2 == 0;
        let mut cheesedb_figures = Figures::new();
        let mut sqlite_figures = settings.compare_sqlite.then(Figures::new);
        if settings.sections.graph {
            let (cheesedb, sqlite) = measure_graph(settings, folder, run, sqlite_first, progress)?;
            cheesedb_figures.extend(cheesedb);
            sqlite_figures.iter_mut().zip(sqlite).for_each(|(figures, sqlite)| figures.extend(sqlite));
            folder.release_runs()?;
        }
        if settings.sections.search {
            let (cheesedb, sqlite) = measure_search(settings, folder, run, sqlite_first, progress)?;
            cheesedb_figures.extend(cheesedb);
            sqlite_figures.iter_mut().zip(sqlite).for_each(|(figures, sqlite)| figures.extend(sqlite));
            folder.release_runs()?;
        }
        runs.push((cheesedb_figures, sqlite_figures));
    }
    let cheesedb = medians(&runs.iter().map(|(cheesedb, _)| cheesedb.clone()).collect::<Vec<_>>());
    let sqlite_runs: Vec<Figures> = runs.iter().filter_map(|(_, sqlite)| sqlite.clone()).collect();
    let sqlite = (!sqlite_runs.is_empty()).then(|| medians(&sqlite_runs));
    Ok(Outcome {
        size: settings.size,
        sections: settings.sections,
        io: settings.io,
        seed: WORKLOAD_SEED,
        file_system: folder::file_system_type(folder.root()),
        sqlite_version: settings.compare_sqlite.then(sqlite_version).flatten(),
        runs,
        cheesedb,
        sqlite,
    })
}

/// One run of the graph section: cheesedb's figures and SQLite's.
fn measure_graph(
    settings: &Settings,
    folder: &BenchFolder,
    run: u32,
    sqlite_first: bool,
    progress: Progress,
) -> Result<(Figures, Option<Figures>), Failure> {
    let mut cheesedb =
        CheesedbSide::create(&folder.fresh("cheesedb", run)?, settings.io, settings.open_measurement.clone())?;
    let mut sqlite = match settings.compare_sqlite {
        true => Some(open_sqlite(&folder.fresh("sqlite", run)?)?),
        false => None,
    };
    let mut engines: Vec<&mut dyn Engine> = vec![&mut cheesedb];
    if let Some(sqlite) = sqlite.as_deref_mut() {
        engines.insert(usize::from(!sqlite_first), sqlite);
    }
    let mut figures = scenarios::run_all(engines, &settings.size, WORKLOAD_SEED, progress)?;
    let sqlite_figures = sqlite.is_some().then(|| figures.remove(usize::from(!sqlite_first)));
    Ok((figures.remove(0), sqlite_figures))
}

/// One run of the search section: cheesedb's figures and SQLite FTS5's.
fn measure_search(
    settings: &Settings,
    folder: &BenchFolder,
    run: u32,
    sqlite_first: bool,
    progress: Progress,
) -> Result<(Figures, Option<Figures>), Failure> {
    let open_measurement = settings.open_measurement.clone();
    let mut cheesedb =
        CheesedbSearchSide::create(&folder.fresh("cheesedb-search", run)?, settings.io, open_measurement.clone())?;
    let mut vectors =
        CheesedbSearchSide::create(&folder.fresh("cheesedb-vectors", run)?, settings.io, open_measurement)?;
    let mut fts5 = match settings.compare_sqlite {
        true => Some(open_fts5(&folder.fresh("sqlite-fts5", run)?)?),
        false => None,
    };
    let search_run = SearchRun {
        cheesedb: &mut cheesedb,
        other: fts5.as_deref_mut().map(|fts5| fts5 as &mut dyn SearchEngine),
        other_first: sqlite_first,
        vectors: &mut vectors,
        size: settings.size.search,
        seed: WORKLOAD_SEED,
    };
    search_scenarios::run_all(search_run, progress)
}

#[cfg(feature = "sqlite")]
fn open_fts5(folder: &Path) -> Result<Box<dyn SearchEngine>, Failure> {
    Ok(Box::new(fts5_side::Fts5Side::create(folder)?))
}

#[cfg(not(feature = "sqlite"))]
fn open_fts5(_folder: &Path) -> Result<Box<dyn SearchEngine>, Failure> {
    Err(Failure::new("this cheesedb-bench was built without SQLite"))
}

#[cfg(feature = "sqlite")]
fn open_sqlite(folder: &Path) -> Result<Box<dyn Engine>, Failure> {
    Ok(Box::new(sqlite_side::SqliteSide::create(folder)?))
}

#[cfg(not(feature = "sqlite"))]
fn open_sqlite(_folder: &Path) -> Result<Box<dyn Engine>, Failure> {
    Err(Failure::new("this cheesedb-bench was built without SQLite"))
}

fn sqlite_version() -> Option<String> {
    #[cfg(feature = "sqlite")]
    return Some(sqlite_side::version().to_owned());
    #[cfg(not(feature = "sqlite"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::Section;
    use crate::figures::{Metric, RecallKind};

    /// The settings of a smoke run in this process, on std files.
    fn smoke_settings(compare_sqlite: bool, only: Option<Section>) -> Settings {
        Settings {
            size: size::SMOKE,
            io: Io::Std,
            compare_sqlite,
            repeat: 1,
            open_measurement: OpenMeasurement::InThisProcess,
            sections: Sections::from_only(only),
        }
    }

    #[test]
    fn a_smoke_run_measures_every_scenario() {
        let folder = BenchFolder::new(None).unwrap();
        let settings = smoke_settings(false, None);
        let outcome = measure(&settings, &folder, Progress::hidden()).unwrap();
        let figures = &outcome.cheesedb;
        for metric in [
            Metric::SingleWritesPerSecond,
            Metric::Batch64MemoriesPerSecond,
            Metric::Batch1024MemoriesPerSecond,
            Metric::EightThreadsWritesPerSecond,
            Metric::AgentOpenSeconds,
            Metric::GraphBytesPerMemory,
            Metric::VerifyBytesPerSecond,
            Metric::CompactSeconds,
            Metric::SearchKeywordMedianSeconds,
            Metric::SearchAgentOpenSeconds,
            Metric::SearchFirstSeconds,
            Metric::SearchTextBytesPerMemory,
            Metric::SearchWritesPerSecondUnsearched,
            Metric::SearchWritesPerSecondSearched,
            Metric::VectorMedianSeconds,
            Metric::HybridMedianSeconds,
        ] {
            assert!(figures.get(&metric).is_some_and(|value| *value > 0.0), "{metric:?} missing");
        }
        let shape = size::SMOKE.shape;
        assert_eq!(figures[&Metric::RecallRemoved(RecallKind::FairErase)], shape.family_memories as f64);
        let strict = (shape.family_memories + shape.family_witnesses) as f64;
        assert_eq!(figures[&Metric::RecallRemoved(RecallKind::StrictUntrusted)], strict);
        assert!(outcome.sqlite.is_none());
        let text = report::to_text(&outcome);
        assert!(text.contains("targets") && text.contains("FTS5"), "{text}");
    }

    #[test]
    fn one_section_runs_alone() {
        let folder = BenchFolder::new(None).unwrap();
        let settings = smoke_settings(false, Some(Section::Search));
        let outcome = measure(&settings, &folder, Progress::hidden()).unwrap();
        assert!(outcome.cheesedb.contains_key(&Metric::SearchKeywordMedianSeconds));
        assert!(!outcome.cheesedb.contains_key(&Metric::SingleWritesPerSecond));
        assert!(report::targets(&outcome).iter().all(|check| !check.goal.contains("recall")));
    }

    #[test]
    fn an_encryption_smoke_run_measures_both_agents() {
        let folder = BenchFolder::new(None).unwrap();
        let settings = smoke_settings(false, None);
        let outcome = encryption::measure(&settings, &folder, Progress::hidden()).unwrap();
        for metric in [Metric::SingleWritesPerSecond, Metric::AgentOpenSeconds, Metric::CompactSeconds] {
            assert!(outcome.plaintext[&metric] > 0.0 && outcome.encrypted[&metric] > 0.0, "{metric:?} missing");
        }
        for kind in RecallKind::ALL {
            let removed = Metric::RecallRemoved(kind);
            assert_eq!(outcome.encrypted[&removed], outcome.plaintext[&removed]);
        }
        let paired = outcome.paired_writes.unwrap();
        assert_eq!(paired.rounds * paired.writes_per_round, size::SMOKE.single_writes);
        assert!(paired.round_ratio_median > 0.0);
        assert!(outcome.sqlite.is_none());
        let text = encryption_report::to_text(&outcome);
        assert!(text.contains("encrypted vs plain") && text.contains("not compared"), "{text}");
    }

    #[cfg(feature = "sqlite")]
    #[test]
    fn an_encryption_comparison_with_sqlite_erases_the_same_memories() {
        let folder = BenchFolder::new(None).unwrap();
        let settings = Settings { repeat: 3, ..smoke_settings(true, Some(Section::Graph)) };
        let outcome = encryption::measure(&settings, &folder, Progress::hidden()).unwrap();
        let sqlite = outcome.sqlite.as_ref().unwrap();
        for kind in RecallKind::ALL {
            assert_eq!(sqlite[&Metric::RecallRemoved(kind)], outcome.encrypted[&Metric::RecallRemoved(kind)]);
        }
        assert_eq!(outcome.runs.len(), 3);
        let value = encryption_report::to_json(&outcome);
        assert!(value["encrypted_advantage_over_sqlite"]["recall_fair_erase_seconds"].is_number(), "{value}");
        assert!(encryption_report::targets(&outcome).iter().all(|check| check.met.is_some()));
    }

    #[cfg(feature = "sqlite")]
    #[test]
    fn a_smoke_comparison_measures_both_engines_on_the_same_work() {
        let folder = BenchFolder::new(None).unwrap();
        let settings = Settings { repeat: 2, ..smoke_settings(true, None) };
        let outcome = measure(&settings, &folder, Progress::hidden()).unwrap();
        let sqlite = outcome.sqlite.as_ref().unwrap();
        for kind in RecallKind::ALL {
            assert_eq!(sqlite[&Metric::RecallRemoved(kind)], outcome.cheesedb[&Metric::RecallRemoved(kind)]);
        }
        assert!(sqlite[&Metric::EightThreadsWritesPerSecond] > 0.0);
        assert_eq!(sqlite[&Metric::SearchHitsCount], outcome.cheesedb[&Metric::SearchHitsCount]);
        assert!(sqlite[&Metric::SearchKeywordMedianSeconds] > 0.0);
        assert!(sqlite[&Metric::SearchFirstSeconds] > 0.0);
        assert_eq!(outcome.runs.len(), 2);
        assert!(report::to_json(&outcome)["cheesedb_advantage"]["single_writes_per_second"].is_number());
    }
}
