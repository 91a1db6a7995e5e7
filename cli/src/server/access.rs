//! What the server writes to the access log for each request it served.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use cheesedb::protocol::{Response, WireError};

use super::peer::Peer;
use super::reply::Reply;
use crate::access_log::{AccessEntry, AccessLogs};

/// The entry for `operation` by `peer`, naming `asked` (the ids of the request) and the ids
/// the reply gave; never any content.
pub fn entry(peer: Peer, operation: &str, asked: Vec<u64>, reply: &Reply) -> AccessEntry {
    let mut ids = asked;
    ids.extend(reply_ids(reply));
    ids.sort_unstable();
    ids.dedup();
    let time_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX));
    AccessEntry {
        time_unix_ms,
        pid: peer.pid,
        uid: peer.uid,
        operation: operation.to_owned(),
        ids,
        outcome: outcome(reply),
    }
}

/// The ids a reply names: a new id, the removed ones, the hits.
fn reply_ids(reply: &Reply) -> Vec<u64> {
    match reply {
        Reply::One(Response::Id(id)) => vec![*id],
        Reply::Ids(ids) => ids.clone(),
        Reply::Hits(hits) => hits.iter().map(|hit| hit.id).collect(),
        _ => Vec::new(),
    }
}

/// `ok`, or the kind of error (its variant's name: no name, path or text of the store).
fn outcome(reply: &Reply) -> String {
    match reply {
        Reply::One(Response::Failed(error)) => error_kind(error),
        _ => String::from("ok"),
    }
}

fn error_kind(error: &WireError) -> String {
    let debug = format!("{error:?}");
    let kind = debug.split([' ', '{', '(']).next().unwrap_or("error");
    format!("error: {kind}")
}

/// The access logs as the server writes them.
#[derive(Debug)]
pub struct AccessRecorder {
    logs: AccessLogs,
    /// Agents whose failed log was reported already.
    reported: Mutex<HashSet<String>>,
}

impl AccessRecorder {
    /// Writes to `logs`.
    pub fn new(logs: AccessLogs) -> AccessRecorder {
        AccessRecorder { logs, reported: Mutex::new(HashSet::new()) }
    }

    /// Appends `entry` to the log of `agent_name`. A failure does not undo the request, whose
    /// work is done: it is reported on standard error, once per agent until a later append
    /// succeeds.
    pub fn append(&self, agent_name: &str, entry: &AccessEntry) {
        let outcome = self.logs.append(agent_name, entry);
        let mut reported = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        match outcome {
            Ok(()) => {
                if !reported.is_empty() {
                    reported.remove(agent_name);
                }
            }
            Err(failure) => {
                if reported.insert(agent_name.to_owned()) {
                    eprintln!("cheesedb serve: an access log could not be written: {}", failure.message());
                }
            }
        }
    }

    /// Makes every entry durable: the server calls it when it stops.
    pub fn sync(&self) {
        if let Err(failure) = self.logs.sync() {
            eprintln!("cheesedb serve: the access logs could not be synced: {}", failure.message());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_names_ids_and_the_kind_of_error_only() {
        let peer = Peer { pid: 7, uid: 1000 };
        let failed = Reply::One(Response::Failed(WireError::UnknownAgent { name: String::from("secret") }));
        let entry = entry(peer, "delete_agent", Vec::new(), &failed);
        assert_eq!(entry.outcome, "error: UnknownAgent");
        assert_eq!((entry.pid, entry.uid), (7, 1000));
        let written = entry_for_id();
        assert_eq!(written.ids, vec![1, 2, 9]);
        assert_eq!(written.outcome, "ok");
    }

    fn entry_for_id() -> AccessEntry {
        entry(Peer { pid: 1, uid: 1 }, "remember", vec![2, 1], &Reply::One(Response::Id(9)))
    }
}
