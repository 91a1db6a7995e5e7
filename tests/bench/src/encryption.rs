//! `cheesedb-bench --encryption`: an encrypted agent beside a plaintext one, and beside SQLite
//! with `--compare sqlite`, on the same seeded data in one process. Every scenario of the graph
//! section runs on all of them, taking turns; then the two cheesedb agents make durable writes
//! in paired rounds, for the ratio of their rates. With `--repeat` each run starts with another
//! engine and the report gives medians.

use crate::cheesedb_side::CheesedbSide;
use crate::engine::Engine;
use crate::failure::Failure;
use crate::figures::{medians, Figures};
use crate::folder::{self, BenchFolder};
use crate::paired_writes::{self, PairedWrites};
use crate::progress::Progress;
use crate::scenarios;
use crate::size::Size;
use crate::{open_sqlite, sqlite_version, Settings, WORKLOAD_SEED};

use cheesedb::Io;

/// The encrypted agent's name in reports and progress lines.
pub const ENCRYPTED_NAME: &str = "encrypted";

/// One run's figures.
#[derive(Debug, Clone)]
pub struct EncryptionRun {
    /// The plaintext agent's.
    pub plaintext: Figures,
    /// The encrypted agent's.
    pub encrypted: Figures,
    /// SQLite's, when compared.
    pub sqlite: Option<Figures>,
    /// The paired durable writes: the plaintext agent first, the encrypted one second.
    pub paired_writes: PairedWrites,
}

/// Everything the encryption benchmark measured, with what is needed to read it.
#[derive(Debug, Clone)]
pub struct EncryptionOutcome {
    /// The size that ran.
    pub size: Size,
    /// How cheesedb reached its files.
    pub io: Io,
    /// The workload's seed.
    pub seed: u64,
    /// The file system under the data folder, where known.
    pub file_system: Option<String>,
    /// The version of SQLite it was compared with, if it was.
    pub sqlite_version: Option<String>,
    /// Each run's figures.
    pub runs: Vec<EncryptionRun>,
    /// The plaintext agent's medians over the runs.
    pub plaintext: Figures,
    /// The encrypted agent's medians over the runs.
    pub encrypted: Figures,
    /// SQLite's medians over the runs, when compared.
    pub sqlite: Option<Figures>,
    /// The paired durable writes' medians over the runs.
    pub paired_writes: Option<PairedWrites>,
}

/// Runs the comparison `settings.repeat` times in `folder` and gathers the medians.
pub fn measure(settings: &Settings, folder: &BenchFolder, progress: Progress) -> Result<EncryptionOutcome, Failure> {
    let mut runs = Vec::with_capacity(settings.repeat as usize);
    for run in 1..=settings.repeat {
        runs.push(measure_once(settings, folder, run, progress)?);
        folder.release_runs()?;
    }
    let pick = |side: fn(&EncryptionRun) -> &Figures| medians(&runs.iter().map(side).cloned().collect::<Vec<_>>());
    let sqlite_runs: Vec<Figures> = runs.iter().filter_map(|run| run.sqlite.clone()).collect();
    Ok(EncryptionOutcome {
        size: settings.size,
        io: settings.io,
        seed: WORKLOAD_SEED,
        file_system: folder::file_system_type(folder.root()),
        sqlite_version: settings.compare_sqlite.then(sqlite_version).flatten(),
        plaintext: pick(|run| &run.plaintext),
        encrypted: pick(|run| &run.encrypted),
        sqlite: (!sqlite_runs.is_empty()).then(|| medians(&sqlite_runs)),
        paired_writes: PairedWrites::medians(&runs.iter().map(|run| run.paired_writes).collect::<Vec<_>>()),
        runs,
    })
}

/// One run: fresh folders, every scenario on every engine, then the paired writes.
fn measure_once(
    settings: &Settings,
    folder: &BenchFolder,
    run: u32,
    progress: Progress,
) -> Result<EncryptionRun, Failure> {
    let io = settings.io;
    let measurement = settings.open_measurement.clone();
    let mut plaintext = CheesedbSide::create(&folder.fresh("cheesedb", run)?, io, measurement.clone())?;
    let mut encrypted =
        CheesedbSide::create_encrypted(ENCRYPTED_NAME, &folder.fresh("cheesedb-encrypted", run)?, io, measurement)?;
    let mut sqlite = match settings.compare_sqlite {
        true => Some(open_sqlite(&folder.fresh("sqlite", run)?)?),
        false => None,
    };
    let mut engines: Vec<&mut dyn Engine> = vec![&mut plaintext, &mut encrypted];
    if let Some(sqlite) = sqlite.as_deref_mut() {
        engines.push(sqlite);
    }
    // Each run starts with another engine, so none always takes the first turn.
    let shift = (run as usize - 1) % engines.len();
    engines.rotate_left(shift);
    let (mut figures, mut workload) =
        scenarios::run_all_keeping_workload(engines, &settings.size, WORKLOAD_SEED, progress)?;
    figures.rotate_right(shift);
    let sqlite_figures = (figures.len() == 3).then(|| figures.remove(2));
    let encrypted_figures = figures.remove(1);
    let plaintext_figures = figures.remove(0);
    let paired_writes =
        paired_writes::measure(&mut plaintext, &mut encrypted, &mut workload, settings.size.single_writes, progress)?;
    Ok(EncryptionRun {
        plaintext: plaintext_figures,
        encrypted: encrypted_figures,
        sqlite: sqlite_figures,
        paired_writes,
    })
}
