//! [`ServedSpace`]: a member's handle to a space of a store a memory server holds, one request
//! per call on the member's own session, so the server bounds each by the member's role.
#![allow(deprecated)] // `ClientAgent` is the session's connection: deprecated to users only.

use cheesedb_core::{Error, Fingerprint, Hit, Id, Leg, Mode, Node, Removal, Role, TrustLevel};

use super::SpaceRecall;
use std::sync::Arc;

use crate::batch_gate::BatchGate;
use crate::client::ClientAgent;
use crate::protocol::{wire_leg, Request, Response, SpaceCall, SpaceRemoved};

/// A member's handle to a space through the member's session on a server.
#[derive(Debug, Clone)]
pub(crate) struct ServedSpace {
    name: String,
    member: ServedMember,
}

/// What a space handle keeps of the member's session: its connection, the gate its writes pass
/// (shared with the member's handles), and whether writes are refused here.
#[derive(Debug, Clone)]
pub(crate) struct ServedMember {
    /// The member's session.
    pub(crate) client: ClientAgent,
    /// The member's batch gate.
    pub(crate) gate: Arc<BatchGate>,
    /// Whether the store was connected read-only.
    pub(crate) read_only: bool,
}

/// Ids from their numbers.
fn ids(numbers: Vec<u64>) -> Vec<Id> {
    numbers.into_iter().map(Id::from).collect()
}

/// The parts of a recall's answer put together: the space's ids, then each member's.
fn gathered(parts: Vec<SpaceRemoved>) -> SpaceRecall {
    let mut recall = SpaceRecall { in_space: Vec::new(), in_members: Vec::new() };
    for part in parts {
        let removed = ids(part.ids);
        match (part.member, recall.in_members.last_mut()) {
            (None, _) => recall.in_space.extend(removed),
            (Some(member), Some((last, list))) if *last == member => list.extend(removed),
            (Some(member), _) => recall.in_members.push((member, removed)),
        }
    }
    recall
}

impl ServedSpace {
    /// The handle of the member `member` to space `name`, once the server says it holds a role.
    pub(crate) fn open(member: ServedMember, name: &str) -> Result<ServedSpace, Error> {
        let space = ServedSpace { name: String::from(name), member };
        space.read(SpaceCall::Open, ClientAgent::call_done)?;
        Ok(space)
    }

    /// The handle to a space just created with `member` as its first admin.
    pub(crate) fn created(member: ServedMember, name: &str) -> Result<ServedSpace, Error> {
        let space = ServedSpace { name: String::from(name), member };
        let request = Request::CreateSpace { name: String::from(name) };
        space.send_write(|client| client.call_done(&request))?;
        Ok(space)
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    fn request(&self, call: SpaceCall) -> Request {
        Request::Space { space: self.name.clone(), call }
    }

    /// Sends a call that writes nothing; `answer` sends it and takes the answer apart.
    fn read<T>(
        &self,
        call: SpaceCall,
        answer: impl FnOnce(&ClientAgent, &Request) -> Result<T, Error>,
    ) -> Result<T, Error> {
        answer(&self.member.client, &self.request(call))
    }

    /// Sends a write once no staged batch of this process holds the member, as the member's
    /// own writes wait; refused on a read-only store, or in a forked process before the gate.
    fn send_write<T>(&self, send: impl FnOnce(&ClientAgent) -> Result<T, Error>) -> Result<T, Error> {
        self.member.client.check_same_process()?;
        if self.member.read_only {
            return Err(Error::ReadOnly);
        }
        self.member.gate.write(|| send(&self.member.client))
    }

    /// Sends a call that writes.
    fn write<T>(
        &self,
        call: SpaceCall,
        answer: impl FnOnce(&ClientAgent, &Request) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let request = self.request(call);
        self.send_write(|client| answer(client, &request))
    }

    pub(crate) fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        let call = SpaceCall::AddLot { label: String::from(label), content: content.to_vec() };
        self.write(call, ClientAgent::call_id)
    }

    pub(crate) fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        let call = SpaceCall::Remember { content: content.to_vec(), legs: legs.iter().map(wire_leg).collect() };
        self.write(call, ClientAgent::call_id)
    }

    pub(crate) fn share(&self, id: Id) -> Result<Id, Error> {
        match self.share_all(&[id])?.as_slice() {
            [shared] => Ok(*shared),
            _ => Err(Error::MalformedMessage { reason: cheesedb_core::MessageProblem::UnexpectedResponse }),
        }
    }

    pub(crate) fn share_all(&self, ids: &[Id]) -> Result<Vec<Id>, Error> {
        self.write(SpaceCall::Share { ids: ids.iter().map(|id| id.get()).collect() }, ClientAgent::call_ids)
    }

    /// Sends a recall or its preview and gathers its parts.
    fn removed(client: &ClientAgent, request: &Request) -> Result<SpaceRecall, Error> {
        let parts = client.call_parts(request, |response| match response {
            Response::SpaceRemoved { removed, more } => Some((vec![removed], more)),
            _ => None,
        })?;
        Ok(gathered(parts))
    }

    pub(crate) fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<SpaceRecall, Error> {
        self.write(SpaceCall::Recall { id: id.get(), mode: mode.into(), removal: removal.into() }, Self::removed)
    }

    pub(crate) fn preview_recall(&self, id: Id, mode: Mode) -> Result<SpaceRecall, Error> {
        self.read(SpaceCall::PreviewRecall { id: id.get(), mode: mode.into() }, Self::removed)
    }

    pub(crate) fn get(&self, id: Id) -> Result<Node, Error> {
        self.read(SpaceCall::Get { id: id.get() }, ClientAgent::call_node)
    }

    pub(crate) fn audit(&self, id: Id) -> Result<Node, Error> {
        self.read(SpaceCall::Audit { id: id.get() }, ClientAgent::call_node)
    }

    pub(crate) fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        self.read(SpaceCall::Trust { id: id.get() }, |client, request| {
            client.call(request, |response| match response {
                Response::Trust(level) => Some(level.into()),
                _ => None,
            })
        })
    }

    pub(crate) fn author_of(&self, id: Id) -> Result<String, Error> {
        self.read(SpaceCall::AuthorOf { id: id.get() }, |client, request| {
            client.call(request, |response| match response {
                Response::Name(name) => Some(name),
                _ => None,
            })
        })
    }

    pub(crate) fn written_by(&self, author: &str) -> Result<Vec<Id>, Error> {
        self.read(SpaceCall::WrittenBy { author: String::from(author) }, ClientAgent::call_ids)
    }

    /// The lots, then the memories, in two requests: a node recalled in between is missing
    /// from the second list only, as if listed before the recall.
    pub(crate) fn alive(&self) -> Result<(Vec<Id>, Vec<Id>), Error> {
        let lots = self.read(SpaceCall::Lots, ClientAgent::call_ids)?;
        let memories = self.read(SpaceCall::Memories, ClientAgent::call_ids)?;
        Ok((lots, memories))
    }

    pub(crate) fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        let limit = u64::try_from(limit).unwrap_or(u64::MAX);
        self.read(SpaceCall::Search { query: String::from(query), limit }, ClientAgent::call_hits)
    }

    pub(crate) fn members(&self) -> Result<Vec<(String, Role)>, Error> {
        self.read(SpaceCall::Members, |client, request| {
            client.call(request, |response| match response {
                Response::Members(members) => Some(members),
                _ => None,
            })
        })
    }

    pub(crate) fn grant(&self, agent: &str, role: Role) -> Result<(), Error> {
        self.write(SpaceCall::Grant { agent: String::from(agent), role }, ClientAgent::call_done)
    }

    pub(crate) fn revoke(&self, agent: &str) -> Result<(), Error> {
        self.write(SpaceCall::Revoke { agent: String::from(agent) }, ClientAgent::call_done)
    }

    pub(crate) fn verify(&self) -> Result<Fingerprint, Error> {
        self.read(SpaceCall::Verify, ClientAgent::call_fingerprint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_of_a_recall_are_put_together_by_member() {
        let part =
            |member: Option<&str>, ids: &[u64]| SpaceRemoved { member: member.map(String::from), ids: ids.to_vec() };
        let parts = vec![
            part(None, &[1, 2]),
            part(None, &[3]),
            part(Some("bob"), &[4]),
            part(Some("bob"), &[5]),
            part(Some("carol"), &[1]),
        ];
        let recall = gathered(parts);
        assert_eq!(recall.in_space, ids(vec![1, 2, 3]));
        assert_eq!(
            recall.in_members,
            vec![(String::from("bob"), ids(vec![4, 5])), (String::from("carol"), ids(vec![1]))]
        );
    }
}
