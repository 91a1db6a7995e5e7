//! The trace of a simulation: a running hash of every event (to prove that a seed replays the
//! same run), the last events (to explain a failure), and the checker of the durability rules.
//!
//! The checker watches each call into the engine as a window of storage events. When the call
//! succeeds (the engine acknowledges it), every file the call wrote must have been synced after
//! its last write, every folder whose names it changed must have been synced after its last
//! change (or removed durably), and no storage operation in the window may have failed: an
//! error the engine did not pass on is a swallowed fault.

use std::collections::{BTreeSet, VecDeque};
use std::fmt;

/// How many recent events a trace keeps to explain a failure.
const RECENT_EVENTS_MAX: usize = 160;

/// One storage operation or harness step, as the trace records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What happened (`write`, `sync`, `rename`, `begin`, `acknowledge`, …).
    pub operation: &'static str,
    /// The file or folder, or the engine call.
    pub subject: String,
    /// An offset, length or count, when the operation has one.
    pub number: u64,
    /// `ok`, or why it failed.
    pub outcome: &'static str,
}

impl fmt::Display for Event {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} {} {} -> {}", self.operation, self.subject, self.number, self.outcome)
    }
}

/// FNV-1a, 64 bits: tiny, stable and good enough to tell two traces apart.
#[derive(Debug, Clone, Copy)]
pub struct TraceHash(u64);

impl Default for TraceHash {
    fn default() -> TraceHash {
        TraceHash(0xcbf2_9ce4_8422_2325)
    }
}

impl TraceHash {
    /// Mixes `bytes` in.
    pub fn add(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn value(&self) -> u64 {
        self.0
    }
}

/// What the checker remembers about the call in progress.
#[derive(Debug, Clone, Default)]
struct Window {
    open: bool,
    call: String,
    unsynced_files: BTreeSet<usize>,
    unsynced_folders: BTreeSet<String>,
    removed_folders: BTreeSet<String>,
    /// Each failed operation: its kind, its subject and a description.
    failures: Vec<(String, String, String)>,
    /// Whether the last name change was of a cache file (see [`is_cache_path`]).
    last_name_change_was_cache: bool,
}

/// Whether `path` is a cache the engine may fail to write without failing the call: the graph
/// snapshot (and its temporary file). Open checks a snapshot against the log and ignores one
/// that does not match, so a lost or torn snapshot costs only a longer open.
pub fn is_cache_path(path: &str) -> bool {
    path.split(" -> ").all(|part| part.rsplit('/').next().is_some_and(|name| name.starts_with("snapshot")))
}

/// Whether `path` is an encrypted agent's key table, whose new slots the engine may leave
/// unsynced when it acknowledges a write: each record it syncs carries its node's secret under
/// the epoch key in force, and open writes a lost slot again from it (the key table is synced
/// before any epoch key is destroyed). For the same reason a failed sync of it may be survived
/// where it only prepared a snapshot, which is then not written (the pending slots stay pending
/// for the next sync). A failed write of it still fails the call, and that an Erase's
/// destruction of slots is durable is checked from the durable image (see `harness/sealed.rs`).
pub fn is_written_ahead_path(path: &str) -> bool {
    path.rsplit('/').next() == Some("keys")
}

/// The trace of one simulated disk.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Print every event to standard error as it happens (for replaying one seed by hand).
    echo: bool,
    hash: TraceHash,
    events: u64,
    recent: VecDeque<Event>,
    window: Window,
}

impl Trace {
    /// A trace that prints every event to standard error when `echo` is set.
    pub fn echoing(echo: bool) -> Trace {
        Trace { echo, ..Trace::default() }
    }

    /// Prints every later event to standard error when `echo` is set.
    pub fn set_echo(&mut self, echo: bool) {
        self.echo = echo;
    }

    /// Whether every event is printed to standard error.
    pub fn is_echoing(&self) -> bool {
        self.echo
    }

    /// Records an event.
    pub fn record(&mut self, event: Event) {
        self.hash.add(event.operation.as_bytes());
        self.hash.add(event.subject.as_bytes());
        self.hash.add(&event.number.to_le_bytes());
        self.hash.add(event.outcome.as_bytes());
        self.events += 1;
        if self.echo {
            eprintln!("{event}");
        }
        if self.recent.len() == RECENT_EVENTS_MAX {
            self.recent.pop_front();
        }
        self.recent.push_back(event);
    }

    /// The hash of every event so far.
    pub fn hash(&self) -> u64 {
        self.hash.value()
    }

    /// How many events so far.
    pub fn event_count(&self) -> u64 {
        self.events
    }

    /// The last events, oldest first, one a line.
    pub fn recent(&self) -> String {
        self.recent.iter().map(|event| format!("  {event}\n")).collect()
    }

    /// A call into the engine starts.
    pub fn begin_call(&mut self, call: &str) {
        self.window = Window { open: true, call: call.to_string(), ..Window::default() };
        self.record(Event { operation: "begin", subject: call.to_string(), number: 0, outcome: "ok" });
    }

    /// Bytes or the length of `inode` (at `path`) changed.
    pub(crate) fn file_changed(&mut self, inode: usize, path: &str) {
        if self.window.open && !is_cache_path(path) && !is_written_ahead_path(path) {
            self.window.unsynced_files.insert(inode);
        }
    }

    /// `inode` was synced.
    pub(crate) fn file_synced(&mut self, inode: usize) {
        self.window.unsynced_files.remove(&inode);
    }

    /// The name `path` in `folder` was created, renamed or removed.
    pub(crate) fn name_changed(&mut self, folder: &str, path: &str) {
        let cache = is_cache_path(path);
        self.window.last_name_change_was_cache = cache;
        if self.window.open && !cache {
            self.window.unsynced_folders.insert(folder.to_string());
        }
    }

    /// The folder `path` was removed (its removal is durable once its parent is synced).
    pub(crate) fn folder_removed(&mut self, path: &str) {
        if self.window.open {
            self.window.removed_folders.insert(path.to_string());
        }
    }

    /// `folder` was synced.
    pub(crate) fn folder_synced(&mut self, folder: &str) {
        self.window.unsynced_folders.remove(folder);
        let gone: Vec<String> = self
            .window
            .removed_folders
            .iter()
            .filter(|removed| crate::paths::parent_of(removed) == folder)
            .cloned()
            .collect();
        for removed in gone {
            // A folder removed durably takes its unsynced name changes with it.
            self.window.unsynced_folders.remove(&removed);
            self.window.removed_folders.remove(&removed);
        }
    }

    /// A storage operation on `subject` failed.
    pub(crate) fn failed(&mut self, operation: &str, subject: &str, what: String) {
        // A failed folder sync right after a cache file's rename belongs to the cache too.
        let cache = is_cache_path(subject)
            || (operation == "sync-folder" && self.window.last_name_change_was_cache)
            || (operation == "sync" && is_written_ahead_path(subject));
        if self.window.open && !cache {
            self.window.failures.push((operation.to_string(), subject.to_string(), what));
        }
    }

    /// A read of `subject` succeeded: an earlier failed read of it in this call was survived
    /// (the engine read it again), not swallowed.
    pub(crate) fn read_succeeded(&mut self, subject: &str) {
        self.window.failures.retain(|(operation, failed, _)| operation != "read" || failed != subject);
    }

    /// The engine acknowledged the call; returns what the checker found wrong, if anything.
    pub fn acknowledge(&mut self) -> Result<(), String> {
        self.record(Event { operation: "acknowledge", subject: self.window.call.clone(), number: 0, outcome: "ok" });
        let window = core::mem::take(&mut self.window);
        if !window.open {
            return Ok(());
        }
        if let Some((_, _, failure)) = window.failures.first() {
            return Err(format!(
                "{} was acknowledged although a storage operation failed during it ({failure}): a swallowed fault",
                window.call
            ));
        }
        if !window.unsynced_files.is_empty() {
            return Err(format!(
                "{} was acknowledged before the sync covering its writes (files {:?} unsynced)",
                window.call, window.unsynced_files
            ));
        }
        if !window.unsynced_folders.is_empty() {
            return Err(format!("{} was acknowledged before a folder sync covering its creates, renames and removes (folders {:?} unsynced)", window.call, window.unsynced_folders));
        }
        Ok(())
    }

    /// The engine refused the call or failed it.
    pub fn refuse(&mut self, why: &str) {
        self.record(Event { operation: "refuse", subject: self.window.call.clone(), number: 0, outcome: "error" });
        self.hash.add(why.as_bytes());
        self.window = Window::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_acknowledgement_after_write_and_sync_passes() {
        let mut trace = Trace::default();
        trace.begin_call("add_lot");
        trace.file_changed(3, "f");
        trace.file_synced(3);
        assert_eq!(trace.acknowledge(), Ok(()));
    }

    #[test]
    fn an_acknowledgement_before_the_sync_is_caught() {
        let mut trace = Trace::default();
        trace.begin_call("add_lot");
        trace.file_changed(3, "f");
        assert!(trace.acknowledge().is_err());
    }

    #[test]
    fn a_rename_needs_its_folder_synced() {
        let mut trace = Trace::default();
        trace.begin_call("compact");
        trace.name_changed("agent", "agent/f");
        assert!(trace.acknowledge().is_err());
        trace.begin_call("compact");
        trace.name_changed("agent", "agent/f");
        trace.folder_synced("agent");
        assert_eq!(trace.acknowledge(), Ok(()));
    }

    #[test]
    fn a_durably_removed_folder_needs_no_sync_of_its_own() {
        let mut trace = Trace::default();
        trace.begin_call("delete_agent");
        trace.name_changed("agent", "agent/f");
        trace.name_changed("", "agent");
        trace.folder_removed("agent");
        trace.folder_synced("");
        assert_eq!(trace.acknowledge(), Ok(()));
    }

    #[test]
    fn a_failure_inside_an_acknowledged_call_is_a_swallowed_fault() {
        let mut trace = Trace::default();
        trace.begin_call("remember");
        trace.failed("sync", "f", "sync failed".to_string());
        assert!(trace.acknowledge().is_err());
    }

    #[test]
    fn a_failed_snapshot_is_not_a_swallowed_fault() {
        let mut trace = Trace::default();
        trace.begin_call("add_lot");
        trace.file_changed(4, "agent/snapshot.tmp");
        trace.name_changed("agent", "agent/snapshot.tmp -> agent/snapshot");
        trace.failed("sync-folder", "agent", "sync failed".to_string());
        assert_eq!(trace.acknowledge(), Ok(()));
        assert!(is_cache_path("agent/snapshot") && !is_cache_path("agent/segment-1.log"));
    }

    #[test]
    fn new_key_slots_may_wait_for_a_sync_but_a_failed_write_of_them_fails_the_call() {
        let mut trace = Trace::default();
        trace.begin_call("add_lot");
        trace.file_changed(5, "agent/keys");
        trace.file_changed(3, "agent/segment-1.log");
        trace.file_synced(3);
        assert_eq!(trace.acknowledge(), Ok(()));
        trace.begin_call("add_lot");
        trace.failed("write", "agent/keys", "write failed".to_string());
        assert!(trace.acknowledge().is_err());
        trace.begin_call("add_lot");
        trace.failed("sync", "agent/keys", "sync failed".to_string());
        assert_eq!(trace.acknowledge(), Ok(()));
        assert!(!is_written_ahead_path("agent/epochs") && !is_written_ahead_path("agent/keys.log"));
    }

    #[test]
    fn a_read_error_survived_by_reading_again_is_not_swallowed() {
        let mut trace = Trace::default();
        trace.begin_call("open agent");
        trace.failed("read", "segment", "read error".to_string());
        trace.read_succeeded("segment");
        assert_eq!(trace.acknowledge(), Ok(()));
    }

    #[test]
    fn the_hash_depends_on_every_event() {
        let mut first = Trace::default();
        let mut second = Trace::default();
        first.begin_call("a");
        second.begin_call("b");
        assert_ne!(first.hash(), second.hash());
    }
}
