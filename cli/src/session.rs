//! Reaching the store and an agent for one command or one MCP tool call.
//!
//! When a memory server (`cheesedb serve`) runs for the data folder, every command goes
//! through it. Otherwise the command opens the store itself; its folder lock is exclusive, and
//! an MCP server or another command may hold it for a moment: opening waits for it a bounded
//! time instead of failing at once, and takes the server's way in when one starts meanwhile.

use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use cheesedb::SOCKET_FILE;
use cheesedb::{Agent, Error, Io, Options, Report, Store, Token, TrustRules};

use crate::failure::Failure;
use crate::output::escaped;
use crate::tokens::{tokens_path, SavedTokens};
use crate::trust_rules;

/// How long to wait for another open store to let go of the folder.
pub const LOCK_WAIT_MAX: Duration = Duration::from_secs(10);
/// The first pause between attempts; it doubles up to [`LOCK_RETRY_PAUSE_MAX`].
const LOCK_RETRY_PAUSE_FIRST: Duration = Duration::from_millis(2);
const LOCK_RETRY_PAUSE_MAX: Duration = Duration::from_millis(100);

/// How a command reaches the store's files, and whether it only reads: chosen once, from
/// `--io` (or `CHEESEDB_IO`) and `--read-only`, and passed to whatever opens a store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Access {
    /// The I/O backend for a store opened in this process (a server uses its own).
    pub io: Io,
    /// Whether every write is refused, whether the store is opened here or served.
    pub read_only: bool,
}

/// Reaches the store of `folder`: through its memory server when one is running there (its
/// trust rules are the server's), else by opening it in this process, judging trust by
/// `trust_rules`, or by the folder's `trust.toml` when none are given. While another process
/// holds the folder, it waits up to [`LOCK_WAIT_MAX`] and looks for a server again at every
/// attempt: the holder may be a server that has just started, and would keep the folder for
/// good.
pub fn reach_store(folder: &Path, access: Access, trust_rules: Option<&TrustRules>) -> Result<Store, Failure> {
    let mut rules = trust_rules.cloned();
    wait_for_folder(folder, || {
        if let Some(store) = running_server(folder, access)? {
            return Ok(Some(store));
        }
        let rules = match &rules {
            Some(rules) => rules.clone(),
            None => rules.insert(trust_rules::load(folder)?).clone(),
        };
        open_store_once(folder, access, rules)
    })
}

/// Opens the store in `folder` once; `None` while another process holds it.
fn open_store_once(folder: &Path, access: Access, trust_rules: TrustRules) -> Result<Option<Store>, Failure> {
    let builder = Store::builder(folder).options(Options::default()).io(access.io).read_only(access.read_only);
    match builder.trust_rules(trust_rules).open() {
        Ok(store) => Ok(Some(store)),
        Err(Error::Locked) => Ok(None),
        Err(error) => Err(Failure::from(error).context(&format!("opening {}", folder.display()))),
    }
}

/// Repeats `attempt` while it finds `folder` in use (`None`), up to [`LOCK_WAIT_MAX`], with
/// pauses that double up to [`LOCK_RETRY_PAUSE_MAX`].
fn wait_for_folder<T>(folder: &Path, mut attempt: impl FnMut() -> Result<Option<T>, Failure>) -> Result<T, Failure> {
    let started = Instant::now();
    let mut pause = LOCK_RETRY_PAUSE_FIRST;
    loop {
        if let Some(reached) = attempt()? {
            return Ok(reached);
        }
        if started.elapsed() >= LOCK_WAIT_MAX {
            return Err(Failure::new(format!(
                "the data folder {} stayed in use by another cheesedb process for {} s; try again when it is done",
                folder.display(),
                LOCK_WAIT_MAX.as_secs()
            )));
        }
        // A little jitter from the clock keeps two waiting processes out of step.
        let jitter = Duration::from_micros(u64::from(started.elapsed().subsec_micros() % 1000));
        sleep(pause + jitter);
        pause = (pause * 2).min(LOCK_RETRY_PAUSE_MAX);
    }
}

/// The store of the memory server serving `folder`, when one answers on its socket. A socket
/// left by a server that was killed answers nothing: the store is then opened here.
fn running_server(folder: &Path, access: Access) -> Result<Option<Store>, Failure> {
    match Store::builder(folder.join(SOCKET_FILE)).read_only(access.read_only).connect() {
        Ok(store) => Ok(Some(store)),
        Err(Error::ServerUnavailable { .. }) => Ok(None),
        Err(error) => Err(Failure::from(error).context("reaching the memory server of this folder")),
    }
}

/// Where the token of an agent argument came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// The argument was the token itself.
    Given,
    /// The argument was a name, looked up in the tokens file.
    TokensFile,
}

/// Whether an agent argument is meant as a token: agent names may not start as tokens do.
fn looks_like_token(agent: &str) -> bool {
    agent.trim().starts_with("cheesedb-")
}

/// How an agent argument is named in messages: a token is never repeated.
pub fn describe_agent(agent: &str) -> String {
    if looks_like_token(agent) {
        String::from("the agent of the given token")
    } else {
        format!("agent {agent:?}")
    }
}

/// The token of the agent that `agent` names: a saved agent name, or a token itself.
pub fn agent_token(folder: &Path, store: &Store, agent: &str) -> Result<(Token, TokenSource), Failure> {
    if looks_like_token(agent) {
        // Never echo it: a token with a typo is still most of a secret.
        return agent.parse::<Token>().map(|token| (token, TokenSource::Given)).map_err(|_| {
            Failure::new("the agent argument starts like a token (cheesedb-...) but is not a whole one: 64 hex digits must follow")
        });
    }
    if let Some(token) = SavedTokens::load(folder)?.token(agent)? {
        return Ok((token, TokenSource::TokensFile));
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

/// Opens the agent that `agent` names in `store`. A token taken from the tokens file must open
/// the agent of that name: a file with entries swapped or copied would otherwise serve another
/// agent's memory under this name.
pub fn open_named_agent(folder: &Path, store: &Store, agent: &str) -> Result<(Token, Agent), Failure> {
    let (token, source) = agent_token(folder, store, agent)?;
    let handle = store.open_agent(&token).map_err(|error| match error {
        Error::UnknownToken => Failure::new(format!(
            "the token for {} opens no agent in {} (was the agent deleted?)",
            describe_agent(agent),
            folder.display()
        )),
        other => Failure::from(other).context(&format!("opening {}", describe_agent(agent))),
    })?;
    if source == TokenSource::TokensFile {
        let opened = handle.name()?;
        if opened.as_bytes() != agent.as_bytes() {
            return Err(Failure::new(format!(
                "the token saved for agent {agent:?} in {} opens agent {opened:?} instead; the file was edited or mixed up: put back the token shown when {agent:?} was created, or pass that token in place of the name",
                tokens_path(folder).display()
            )));
        }
    }
    Ok((token, handle))
}

/// Reaches the agent named `agent` (a name with a saved token, or a token) in `folder`, through
/// the folder's memory server when one runs.
pub fn open_agent(folder: &Path, access: Access, agent: &str) -> Result<Agent, Failure> {
    let store = reach_store(folder, access, None)?;
    let (_token, handle) = open_named_agent(folder, &store, agent)?;
    if !handle.is_served() {
        note_repairs(agent, &handle.report());
    }
    Ok(handle)
}

/// Tells the user, on standard error, when opening the agent repaired what a crash left or did
/// not use a file it found (a damaged snapshot): the next open will find nothing to report, so
/// this is the one chance to hear of it.
pub fn note_repairs(agent: &str, report: &Report) {
    let agent = escaped(&describe_agent(agent));
    if let Some(reason) = report.snapshot_ignored {
        eprintln!(
            "cheesedb: note: opening {agent} did not use its snapshot ({}): the whole log was replayed instead",
            escaped(reason.describe())
        );
    }
    if !report.repaired_anything() {
        return;
    }
    eprintln!("cheesedb: note: opening {agent} repaired what an interrupted write or damage left: {}", repairs(report));
}

/// Every repair of `report` that happened, with its count, in a sentence.
fn repairs(report: &Report) -> String {
    let counts = [
        (report.dropped_bytes, "bytes of an unfinished write cut"),
        (report.dropped_records, "records of an unfinished write cut"),
        (report.erasures_completed_on_open, "erasures finished"),
        (report.temporary_files_removed, "temporary files removed"),
        (report.segments_started_on_open, "segments started"),
        (report.unfinished_rolls_undone_on_open, "unfinished rolls undone"),
        (report.erase_journals_replayed_on_open, "erase journals replayed"),
        (report.erase_journals_discarded_on_open, "erase journals discarded"),
        (report.key_slots_restored_on_open, "key slots written again from the log"),
        (report.epoch_slots_cut_on_open, "torn epoch slots cut"),
        (report.epoch_slots_destroyed_on_open, "damaged epoch slots of destroyed epochs written again as destroyed"),
        (report.epoch_rotations_finished_on_open, "epoch rotations of an interrupted Erase finished"),
    ];
    let done: Vec<String> =
        counts.iter().filter(|(count, _)| *count > 0).map(|(count, what)| format!("{count} {what}")).collect();
    done.join(", ")
}
