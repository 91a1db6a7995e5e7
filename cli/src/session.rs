//! Opening the store and an agent for one command or one MCP tool call.
//!
//! The store's folder lock is exclusive, and an MCP server or another command may hold it for
//! a moment: opening waits for it a bounded time instead of failing at once.

use std::path::Path;
use std::sync::OnceLock;
use std::thread::sleep;
use std::time::{Duration, Instant};

use cheesedb::{Agent, Error, Io, Options, Report, Store, Token};

use crate::failure::Failure;
use crate::tokens::{tokens_path, SavedTokens};

/// How long to wait for another open store to let go of the folder.
pub const LOCK_WAIT_MAX: Duration = Duration::from_secs(10);
/// The first pause between attempts; it doubles up to [`LOCK_RETRY_PAUSE_MAX`].
const LOCK_RETRY_PAUSE_FIRST: Duration = Duration::from_millis(2);
const LOCK_RETRY_PAUSE_MAX: Duration = Duration::from_millis(100);

/// How this process reaches the store's files, chosen once from `--io` or `CHEESEDB_IO`.
static CHOSEN_IO: OnceLock<Io> = OnceLock::new();

/// Sets how every store this process opens reaches its files (the first choice stands).
pub fn choose_io(io: Io) {
    let _ = CHOSEN_IO.set(io);
}

/// How this process reaches the store's files.
pub fn chosen_io() -> Io {
    CHOSEN_IO.get().copied().unwrap_or_default()
}

/// Opens the store in `folder`, waiting up to [`LOCK_WAIT_MAX`] while another holds it.
pub fn open_store(folder: &Path) -> Result<Store, Failure> {
    let started = Instant::now();
    let mut pause = LOCK_RETRY_PAUSE_FIRST;
    let io = chosen_io();
    loop {
        match Store::open_with_io(folder, Options::default(), io) {
            Ok(store) => return Ok(store),
            Err(Error::Locked) if started.elapsed() < LOCK_WAIT_MAX => {
                // A little jitter from the clock keeps two waiting processes out of step.
                let jitter = Duration::from_micros(u64::from(started.elapsed().subsec_micros() % 1000));
                sleep(pause + jitter);
                pause = (pause * 2).min(LOCK_RETRY_PAUSE_MAX);
            }
            Err(Error::Locked) => {
                return Err(Failure::new(format!(
                    "the data folder {} stayed in use by another cheesedb process for {} s; try again when it is done",
                    folder.display(),
                    LOCK_WAIT_MAX.as_secs()
                )))
            }
            Err(error @ Error::Io { operation: "starting io_uring for", .. }) => {
                let failure = Failure::from(error).context(&format!("opening {}", folder.display()));
                return Err(Failure::new(format!("{failure}; run with --io std (or CHEESEDB_IO=std) instead")));
            }
            Err(error) => return Err(Failure::from(error).context(&format!("opening {}", folder.display()))),
        }
    }
}

/// The token of the agent that `agent` names: a saved agent name, or a token itself.
pub fn agent_token(folder: &Path, store: &Store, agent: &str) -> Result<Token, Failure> {
    if agent.starts_with("cheesedb-") {
        if let Ok(token) = agent.parse::<Token>() {
            return Ok(token);
        }
    }
    if let Some(token) = SavedTokens::load(folder)?.token(agent)? {
        return Ok(token);
    }
    let known = store.agent_names()?.iter().any(|name| name == agent);
    if known {
        Err(Failure::new(format!(
            "agent {agent:?} exists but its token is not in {}; pass the token in place of the name",
            tokens_path(folder).display()
        )))
    } else {
        Err(Failure::new(format!("no agent is named {agent:?}; create it with: cheesedb agent create {agent}")))
    }
}

/// Opens the store and the agent named `agent` (a name with a saved token, or a token).
pub fn open_agent(folder: &Path, agent: &str) -> Result<(Store, Agent), Failure> {
    let store = open_store(folder)?;
    let token = agent_token(folder, &store, agent)?;
    let handle = store.open_agent(&token).map_err(|error| match error {
        Error::UnknownToken => Failure::new(format!(
            "the token for {agent:?} opens no agent in {} (was the agent deleted?)",
            folder.display()
        )),
        other => Failure::from(other).context(&format!("opening agent {agent:?}")),
    })?;
    note_repairs(agent, &handle.report());
    Ok((store, handle))
}

/// Tells the user, on standard error, when opening the agent repaired what a crash left: the
/// next open will find nothing to report, so this is the one chance to hear of it.
pub fn note_repairs(agent: &str, report: &Report) {
    if !report.repaired_anything() {
        return;
    }
    eprintln!(
        "cheesedb: note: opening agent {agent:?} repaired an interrupted write: {} bytes ({} records) of an unfinished write cut, {} erasures finished, {} temporary files removed, {} unfinished rolls undone, {} erase journals replayed and {} discarded",
        report.dropped_bytes,
        report.dropped_records,
        report.erasures_completed_on_open,
        report.temporary_files_removed,
        report.unfinished_rolls_undone_on_open,
        report.erase_journals_replayed_on_open,
        report.erase_journals_discarded_on_open
    );
}
