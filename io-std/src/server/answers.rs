//! The replies that more than one kind of request gives, made from the library's answers.

use crate::protocol::{Response, WireHit};
use crate::{Fingerprint, Hit, Id};

use super::reply::Reply;

pub(super) fn ids(ids: Vec<Id>) -> Reply {
    Reply::Ids(ids.into_iter().map(Id::get).collect())
}

pub(super) fn fingerprint(fingerprint: Fingerprint) -> Reply {
    Reply::One(Response::Fingerprint { records: fingerprint.records, chain: fingerprint.chain })
}

pub(super) fn done() -> Reply {
    Reply::One(Response::Done)
}

pub(super) fn new_id(id: Id) -> Reply {
    Reply::One(Response::Id(id.get()))
}

/// The hits of a search (the agent notes them as read when it tracks reads).
pub(super) fn found(found: &[Hit]) -> Reply {
    Reply::Hits(found.iter().map(WireHit::from).collect())
}
