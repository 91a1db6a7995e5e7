//! [`AccessLogs`]: every agent's access log in one data folder, shared by the server's threads.

use std::collections::HashMap;
use std::fmt;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use crate::limits::AGENT_NAME_MAX_BYTES;

use super::damage::LogDamage;
use super::entry::AccessEntry;
use super::folder::{shown_path, AccessFolder};
use super::writer::{AgentLog, WriteError};
use super::Limits;

/// The access logs of one data folder. Appends for one agent are serialized (each agent's log
/// is one chain); appends for different agents go on side by side.
///
/// Only one process may write a data folder's access logs at a time: the memory server, which
/// holds the store's folder lock while it runs.
#[derive(Debug)]
pub struct AccessLogs {
    folder: AccessFolder,
    limits: Limits,
    agents: Mutex<HashMap<String, Arc<Mutex<Option<AgentLog>>>>>,
}

impl AccessLogs {
    /// Opens the access logs of `data_folder`, making its `access` folder if needed. Each
    /// agent's log is opened at its first append.
    ///
    /// # Errors
    /// An [`AccessLogError`] when the data folder cannot be opened or the access folder made, or when a
    /// link or a file stands where the access folder should be.
    pub fn open(data_folder: &Path) -> Result<AccessLogs, AccessLogError> {
        AccessLogs::open_with_limits(data_folder, Limits::default())
    }

    /// [`AccessLogs::open`] rotating at other sizes than the default (tests use small ones).
    ///
    /// # Errors
    /// As [`AccessLogs::open`].
    pub fn open_with_limits(data_folder: &Path, limits: Limits) -> Result<AccessLogs, AccessLogError> {
        let folder = AccessFolder::open(data_folder, true)
            .map_err(|error| AccessLogError::FolderNotOpened { kind: error.kind() })?
            .ok_or(AccessLogError::FolderNotMade)?;
        Ok(AccessLogs { folder, limits: limits.bounded(), agents: Mutex::new(HashMap::new()) })
    }

    /// Appends `entry` to the log of the agent named `agent_name`. The entry reaches the
    /// system at once but the disk only at the next rotation or sync: see [`AccessLogs::sync`].
    ///
    /// # Errors
    /// An [`AccessLogError`] when the log's newest file does not verify (nothing is appended to a
    /// damaged log; `cheesedb log` says where it breaks) or cannot be written. After a failed
    /// write, the next append opens the log again, cutting off any part of the entry that
    /// reached the file.
    pub fn append(&self, agent_name: &str, entry: &AccessEntry) -> Result<(), AccessLogError> {
        // The store refuses longer names; a longer one here would be a caller's mistake, and
        // would break the bound on a header's size.
        if agent_name.is_empty() || agent_name.len() > AGENT_NAME_MAX_BYTES {
            return Err(AccessLogError::NameOutOfRange { bytes: agent_name.len() });
        }
        let agent_log = self.agent_log(agent_name);
        // A thread that panicked mid-append leaves the log to be opened again, as after a failed write.
        let mut guard = agent_log.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            *guard = None;
            guard
        });
        let outcome = match guard.as_mut() {
            Some(open) => open.append(&self.folder, entry),
            None => AgentLog::open(&self.folder, agent_name, self.limits).and_then(|mut opened| {
                let appended = opened.append(&self.folder, entry);
                *guard = Some(opened);
                appended
            }),
        };
        outcome.map_err(|error| {
            *guard = None;
            failure(agent_name, error)
        })
    }

    /// Makes every entry appended so far durable. The server calls it when it stops; dropping
    /// the logs does it too, without a way to report a failure.
    ///
    /// # Errors
    /// An [`AccessLogError`] naming the first file that could not be synced.
    pub fn sync(&self) -> Result<(), AccessLogError> {
        let agent_logs: Vec<(String, Arc<Mutex<Option<AgentLog>>>)> =
            self.agents().iter().map(|(name, log)| (name.clone(), Arc::clone(log))).collect();
        for (name, agent_log) in agent_logs {
            let guard = agent_log.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(open) = guard.as_ref() {
                open.sync().map_err(|error| failure(&name, error))?;
            }
        }
        Ok(())
    }

    fn agents(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Mutex<Option<AgentLog>>>>> {
        // The map only ever gains entries, so it is whole even after a panic elsewhere.
        self.agents.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn agent_log(&self, agent_name: &str) -> Arc<Mutex<Option<AgentLog>>> {
        Arc::clone(self.agents().entry(agent_name.to_owned()).or_default())
    }
}

fn failure(agent_name: &str, error: WriteError) -> AccessLogError {
    let agent = agent_name.to_owned();
    match error {
        WriteError::Io { file, doing, error } => AccessLogError::Io { agent, file, doing, kind: error.kind() },
        WriteError::Damaged(damage) => AccessLogError::Damaged { agent, damage },
    }
}

/// Why the access logs could not be opened or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum AccessLogError {
    /// The data folder could not be opened, or the access folder made in it.
    FolderNotOpened {
        /// What the system said.
        kind: ErrorKind,
    },
    /// A link or a file stands where the access folder should be.
    FolderNotMade,
    /// An agent name out of the store's range was given.
    NameOutOfRange {
        /// Its length.
        bytes: usize,
    },
    /// A file of an agent's log could not be read, written or made.
    Io {
        /// The agent.
        agent: String,
        /// The file, relative to the data folder.
        file: String,
        /// What was being done with it.
        doing: &'static str,
        /// What the system said.
        kind: ErrorKind,
    },
    /// The agent's newest log file does not verify, so nothing more is appended to it.
    Damaged {
        /// The agent.
        agent: String,
        /// Where and how it breaks.
        damage: LogDamage,
    },
}

impl fmt::Display for AccessLogError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessLogError::FolderNotOpened { kind } => write!(
                formatter,
                "cannot open the access log folder {}: {}",
                shown_path(""),
                std::io::Error::from(*kind)
            ),
            AccessLogError::FolderNotMade => {
                write!(formatter, "the access log folder {} could not be made", shown_path(""))
            }
            AccessLogError::NameOutOfRange { bytes } => write!(
                formatter,
                "no access log for a name of {bytes} bytes: agent names have 1 to {AGENT_NAME_MAX_BYTES}"
            ),
            AccessLogError::Io { agent, file, doing, kind } => {
                write!(formatter, "access log of agent {agent:?}: {doing} {file}: {}", std::io::Error::from(*kind))
            }
            AccessLogError::Damaged { agent, damage } => write!(
                formatter,
                "access log of agent {agent:?} does not verify, so nothing more is appended to it: {damage}"
            ),
        }
    }
}

impl std::error::Error for AccessLogError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_log::{read, ACCESS_FOLDER};

    fn entry(number: u64) -> AccessEntry {
        AccessEntry {
            time_unix_ms: 1_700_000_000_000 + number,
            pid: 42,
            uid: 1000,
            operation: String::from("get"),
            ids: vec![number],
            outcome: String::from("ok"),
        }
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn logs_are_shared_between_threads() {
        assert_send_sync::<AccessLogs>();
    }

    #[test]
    fn entries_read_back_in_order_and_survive_reopening() {
        let folder = tempfile::tempdir().unwrap();
        let logs = AccessLogs::open(folder.path()).unwrap();
        for number in 1..=3 {
            logs.append("alice", &entry(number)).unwrap();
        }
        logs.append("bob", &entry(9)).unwrap();
        drop(logs);
        let logs = AccessLogs::open(folder.path()).unwrap();
        logs.append("alice", &entry(4)).unwrap();
        logs.sync().unwrap();
        let log = read(folder.path(), "alice", &Limits::default()).unwrap();
        let numbers: Vec<u64> = log.entries.iter().map(|verified| verified.number).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
        assert_eq!(log.entries[3].entry, entry(4));
        assert_eq!(log.torn, None);
        assert_eq!(read(folder.path(), "bob", &Limits::default()).unwrap().entries.len(), 1);
        assert!(read(folder.path(), "carol", &Limits::default()).unwrap().entries.is_empty());
        let mode = std::fs::metadata(folder.path().join(ACCESS_FOLDER).join("alice.1.log")).unwrap();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777, 0o600);
    }

    #[test]
    fn a_name_no_agent_can_have_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let logs = AccessLogs::open(folder.path()).unwrap();
        assert!(logs.append("", &entry(1)).is_err());
        assert!(logs.append(&"x".repeat(crate::limits::AGENT_NAME_MAX_BYTES + 1), &entry(1)).is_err());
        logs.append(&"x".repeat(crate::limits::AGENT_NAME_MAX_BYTES), &entry(1)).unwrap();
    }

    #[test]
    fn appends_from_many_threads_make_one_chain() {
        let folder = tempfile::tempdir().unwrap();
        let logs =
            AccessLogs::open_with_limits(folder.path(), Limits { rotate_at_bytes: 1, old_files_kept: 100 }).unwrap();
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let logs = &logs;
                scope.spawn(move || {
                    for number in 0..200 {
                        logs.append("alice", &entry(thread * 1000 + number)).unwrap();
                    }
                });
            }
        });
        let log = read(folder.path(), "alice", &Limits { rotate_at_bytes: 1, old_files_kept: 100 }).unwrap();
        assert_eq!(log.entries.len(), 800);
        assert!(log.files.len() > 1, "{:?}", log.files);
    }
}
