//! What the server writes to the access log for each request it served: the entry.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::protocol::Response;
use crate::Error;

use super::peer::Peer;
use super::reply::Reply;
use crate::access_log::AccessEntry;

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
        Reply::Page { found, .. } => found.iter().map(|hit| hit.id).collect(),
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

fn error_kind(error: &Error) -> String {
    let debug = format!("{error:?}");
    let kind = debug.split([' ', '{', '(']).next().unwrap_or("error");
    format!("error: {kind}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_names_ids_and_the_kind_of_error_only() {
        let peer = Peer { pid: 7, uid: 1000 };
        let failed = Reply::One(Response::Failed(Error::UnknownAgent { name: String::from("secret") }));
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
