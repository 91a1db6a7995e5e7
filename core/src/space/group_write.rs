//! [`SpaceEngine::write_group`]: the writes of several members in one durable write, so that
//! members writing at once share a sync as one agent's writers do.

use alloc::string::String;
use alloc::vec::Vec;

use super::SpaceEngine;
use crate::agent_key::AgentKey;
use crate::error::Error;
use crate::id::{Id, Leg};
use crate::role::Role;
use crate::storage::Storage;

/// One member's write to a space, as [`SpaceEngine::write_group`] takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpaceWrite {
    /// [`SpaceEngine::add_lot`].
    Lot {
        /// Its label.
        label: String,
        /// Its content.
        content: Vec<u8>,
    },
    /// [`SpaceEngine::remember`].
    Memory {
        /// Its content.
        content: Vec<u8>,
        /// Its legs, of ids of the space.
        legs: Vec<Leg>,
    },
}

impl<S: Storage> SpaceEngine<S> {
    /// Writes each member's write of `writes` in one durable write. Each is checked on its own
    /// (the member's role, then as [`SpaceEngine::add_lot`] or [`SpaceEngine::remember`] check
    /// it, a memory's parents among the earlier writes of the group counting as alive): one
    /// refused fails alone, and every record written names its member. Returns each write's
    /// outcome, in order; when the durable write fails, so does every write it held.
    pub fn write_group(&mut self, writes: &[(AgentKey, SpaceWrite)]) -> Vec<Result<Id, Error>> {
        let allowed: Vec<Result<(), Error>> =
            writes.iter().map(|(member, _)| self.require(member, Role::Write)).collect();
        let mut outcomes = Vec::with_capacity(writes.len());
        let written = self.log.batch_by_authors(|batch| {
            let mut authors = Vec::with_capacity(writes.len());
            for ((member, write), allowed) in writes.iter().zip(allowed) {
                let outcome = allowed.and_then(|()| match write {
                    SpaceWrite::Lot { label, content } => batch.add_lot(label, content),
                    SpaceWrite::Memory { content, legs } => batch.remember(content, legs),
                });
                if outcome.is_ok() {
                    authors.push(member.number());
                }
                outcomes.push(outcome);
            }
            Ok(((), authors))
        });
        match written {
            Ok(()) => outcomes,
            Err(error) => outcomes.into_iter().map(|outcome| outcome.and(Err(error.clone()))).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Options;
    use crate::ram_storage::RamStorage;
    use crate::store::StoreEngine;
    use alloc::vec;

    #[test]
    fn a_group_names_each_write_s_member_and_refuses_a_write_alone() {
        let mut store = StoreEngine::open(RamStorage::default(), Options::default()).unwrap();
        let keys: Vec<AgentKey> = ["alice", "bob", "carol"]
            .iter()
            .map(|name| {
                let token = store.create_agent(name).unwrap();
                store.authenticate(&token).unwrap()
            })
            .collect();
        let mut space = store.create_space("team", keys[0]).unwrap();
        space.grant(&keys[0], store.grantee("bob").unwrap(), Role::Write).unwrap();
        space.grant(&keys[0], store.grantee("carol").unwrap(), Role::Read).unwrap();
        let lot = |text: &str| SpaceWrite::Lot { label: String::from("web"), content: text.as_bytes().to_vec() };
        let writes = vec![
            (keys[0], lot("by alice")),
            (keys[2], lot("carol may only read")),
            (keys[1], lot("by bob")),
            (
                keys[1],
                SpaceWrite::Memory { content: b"on both".to_vec(), legs: vec![Leg::from([Id::from(1), Id::from(2)])] },
            ),
        ];
        let outcomes = space.write_group(&writes);
        assert_eq!(outcomes[0], Ok(Id::from(1)));
        assert!(matches!(outcomes[1], Err(Error::RoleTooLow { held: Role::Read, needed: Role::Write })));
        assert_eq!((outcomes[2].clone(), outcomes[3].clone()), (Ok(Id::from(2)), Ok(Id::from(3))));
        let authors: Vec<u64> = (1..=3).map(|id| space.author_of(&keys[0], Id::from(id)).unwrap()).collect();
        assert_eq!(authors, [keys[0].number(), keys[1].number(), keys[1].number()]);
        // The authors are in the records: a reopened space reads the same.
        let number = space.number();
        space.close().unwrap();
        let reopened = store.open_space(keys[0], "team").unwrap();
        assert_eq!(reopened.number(), number);
        let authors: Vec<u64> = (1..=3).map(|id| reopened.author_of(&keys[0], Id::from(id)).unwrap()).collect();
        assert_eq!(authors, [keys[0].number(), keys[1].number(), keys[1].number()]);
        assert_eq!(reopened.written_by(&keys[0], keys[1].number()).unwrap(), [Id::from(2), Id::from(3)]);
    }
}
