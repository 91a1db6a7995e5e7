//! What a session's call on a space of its agent does: the member's own handle to the space
//! serves it, so the store bounds it by the member's role as it does in a program.

use crate::protocol::{engine_legs, engine_limit, Response, SpaceCall, SpaceRemoved, WireNode};
use crate::{Agent, Error, Id, SpaceRecall};

use super::answers::{done, fingerprint, found, ids, new_id};
use super::reply::Reply;

/// Serves `call` on `agent`'s handle to space `name`.
pub(super) fn serve(agent: &Agent, name: &str, call: SpaceCall) -> Result<Reply, Error> {
    let space = agent.space(name)?;
    Ok(match call {
        SpaceCall::Open => done(),
        SpaceCall::AddLot { label, content } => new_id(space.add_lot(&label, &content)?),
        SpaceCall::Remember { content, legs: lists } => new_id(space.remember(&content, &engine_legs(&lists))?),
        SpaceCall::Share { ids: asked } => {
            let asked: Vec<Id> = asked.into_iter().map(Id::from).collect();
            ids(space.share_all(&asked)?)
        }
        SpaceCall::Recall { id, mode, removal } => removed(space.recall(Id::from(id), mode.into(), removal.into())?),
        SpaceCall::PreviewRecall { id, mode } => removed(space.preview_recall(Id::from(id), mode.into())?),
        SpaceCall::Get { id } => Reply::One(Response::Node(WireNode::from(&space.get(Id::from(id))?))),
        SpaceCall::Audit { id } => Reply::One(Response::Node(WireNode::from(&space.audit(Id::from(id))?))),
        SpaceCall::Trust { id } => Reply::One(Response::Trust(space.trust(Id::from(id))?.into())),
        SpaceCall::AuthorOf { id } => Reply::One(Response::Name(space.author_of(Id::from(id))?)),
        SpaceCall::WrittenBy { author } => ids(space.written_by(&author)?),
        SpaceCall::Lots => ids(space.alive()?.0),
        SpaceCall::Memories => ids(space.alive()?.1),
        SpaceCall::Search { query, limit: most } => found(&space.search(&query, engine_limit(most))?),
        SpaceCall::Members => Reply::One(Response::Members(space.members()?)),
        SpaceCall::Grant { agent, role } => space.grant(&agent, role).map(|()| done())?,
        SpaceCall::Revoke { agent } => space.revoke(&agent).map(|()| done())?,
        SpaceCall::Verify => fingerprint(space.verify()?),
    })
}

/// A recall's removals: the space's, then each member's.
fn removed(recall: SpaceRecall) -> Reply {
    let numbers = |removed: Vec<Id>| removed.into_iter().map(Id::get).collect();
    let mut parts = vec![SpaceRemoved { member: None, ids: numbers(recall.in_space) }];
    parts.extend(
        recall
            .in_members
            .into_iter()
            .map(|(member, removed)| SpaceRemoved { member: Some(member), ids: numbers(removed) }),
    );
    Reply::SpaceRemoved(parts)
}
