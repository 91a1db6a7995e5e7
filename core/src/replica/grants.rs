//! The facts of a head that grant access: the token hash a restored catalog keeps (so that
//! token opens the agent), the agent's number (whose folder and records it gets) and its name.
//! The object store is not trusted with them: a head whose crc was recomputed after its token
//! hash was swapped for another agent's would let that agent's token open this one's data. The
//! chain does not cover these facts (see docs/THREAT_MODEL.md, "The replica head"), so they are
//! checked here against everything else that is known: the other heads of the replica and the
//! agents the target store already holds. Two agents never share a token hash or a number.

use alloc::string::String;
use alloc::vec::Vec;

use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::replica::head::ReplicaHead;

use super::keys::{head_key, Owner, ReplicaPrefix};
use super::local_files::corrupt;

/// What the catalog says of one agent: what a head's grant is checked against. The store
/// lists it (`StoreEngine::replicated_entries`); it lives here so that replicas need not reach up
/// into the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentEntry {
    /// Its number: its folder and every record carry it.
    pub number: u64,
    /// Its name.
    pub name: String,
    /// The hash of its token, as the catalog keeps it.
    pub token_hash: [u8; 32],
    /// Whether it is encrypted.
    pub encrypted: bool,
    /// Whether it is a space (whose token hash is all zeros and grants nothing).
    pub space: bool,
}

impl AgentEntry {
    /// Whose replica it is.
    #[must_use]
    pub fn owner(&self) -> Owner<'_> {
        Owner { name: &self.name, space: self.space }
    }
}

/// Checks that no two of `heads`, and no head and an entry of `held` (the target store's
/// catalog, those of the same name and kind excepted: they are the ones being followed), share a
/// token hash or a number. A space's all-zero token hash grants nothing and is not compared.
///
/// # Errors
///
/// `Error::Corrupt` naming the key of the later head of a pair: its token hash is another
/// agent's ([`CorruptReason::ReplicaHeadGrantsAnotherAgentsToken`]) or its number is
/// ([`CorruptReason::ReplicaHeadClaimsAnotherAgentsNumber`]).
pub fn check_head_grants(prefix: &ReplicaPrefix, heads: &[ReplicaHead], held: &[AgentEntry]) -> Result<(), Error> {
    let mut seen: Vec<(u64, Option<[u8; 32]>)> = held
        .iter()
        .filter(|entry| heads.iter().all(|head| head.owner() != entry.owner()))
        .map(|entry| (entry.number, (!entry.space).then_some(entry.token_hash)))
        .collect();
    for head in heads {
        let refused = |reason| corrupt(&head_key(prefix, head.owner()), 0, reason);
        let grant = (!head.space).then_some(head.token_hash);
        if grant.is_some()
            && seen.iter().any(|(_, token_hash)| *token_hash == grant)
            && !mutant!(RestoreTrustsHeadGrant)
        {
            return Err(refused(CorruptReason::ReplicaHeadGrantsAnotherAgentsToken));
        }
        if seen.iter().any(|(number, _)| *number == head.agent) && !mutant!(RestoreTrustsHeadGrant) {
            return Err(refused(CorruptReason::ReplicaHeadClaimsAnotherAgentsNumber));
        }
        seen.push((head.agent, grant));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::Fingerprint;
    use alloc::vec;

    fn head(name: &str, agent: u64, token_byte: u8) -> ReplicaHead {
        ReplicaHead {
            version: 1,
            agent,
            name: String::from(name),
            token_hash: [token_byte; 32],
            encrypted: false,
            space: false,
            fingerprint: Fingerprint { records: 0, chain: [0; 32] },
            pieces: vec![],
        }
    }

    fn reason(result: Result<(), Error>) -> Option<CorruptReason> {
        match result {
            Err(Error::Corrupt { reason, .. }) => Some(reason),
            _ => None,
        }
    }

    #[test]
    fn a_head_with_another_heads_token_hash_or_number_is_refused() {
        let prefix = ReplicaPrefix::new("p");
        let (carol, dave) = (head("carol", 1, 3), head("dave", 2, 4));
        assert_eq!(check_head_grants(&prefix, &[carol.clone(), dave.clone()], &[]), Ok(()));
        let swapped = ReplicaHead { token_hash: dave.token_hash, ..carol.clone() };
        let refused = check_head_grants(&prefix, &[swapped, dave.clone()], &[]);
        assert_eq!(reason(refused.clone()), Some(CorruptReason::ReplicaHeadGrantsAnotherAgentsToken));
        assert!(matches!(refused, Err(Error::Corrupt { file, .. }) if file == head_key(&prefix, Owner::agent("dave"))));
        let renumbered = ReplicaHead { agent: carol.agent, ..dave };
        let refused = check_head_grants(&prefix, &[carol, renumbered], &[]);
        assert_eq!(reason(refused), Some(CorruptReason::ReplicaHeadClaimsAnotherAgentsNumber));
    }

    #[test]
    fn a_head_with_the_token_hash_of_an_agent_the_store_holds_is_refused() {
        let prefix = ReplicaPrefix::new("");
        let erin =
            AgentEntry { number: 7, name: String::from("erin"), token_hash: [9; 32], encrypted: false, space: false };
        let refused = check_head_grants(&prefix, &[head("carol", 1, 9)], core::slice::from_ref(&erin));
        assert_eq!(reason(refused), Some(CorruptReason::ReplicaHeadGrantsAnotherAgentsToken));
        let refused = check_head_grants(&prefix, &[head("carol", 7, 1)], core::slice::from_ref(&erin));
        assert_eq!(reason(refused), Some(CorruptReason::ReplicaHeadClaimsAnotherAgentsNumber));
        // The agent being followed is the one of the same name: its own entry is no conflict.
        assert_eq!(check_head_grants(&prefix, &[head("erin", 7, 9)], core::slice::from_ref(&erin)), Ok(()));
        // A space of that name is another replica, and its number is still the agent's.
        let space = ReplicaHead { space: true, token_hash: [0; 32], ..head("erin", 7, 0) };
        let refused = check_head_grants(&prefix, &[space], core::slice::from_ref(&erin));
        assert_eq!(reason(refused), Some(CorruptReason::ReplicaHeadClaimsAnotherAgentsNumber));
    }

    #[test]
    fn spaces_share_the_all_zero_token_hash_and_grant_nothing_by_it() {
        let prefix = ReplicaPrefix::new("");
        let space = |name: &str, number: u64| ReplicaHead { space: true, ..head(name, number, 0) };
        let held =
            AgentEntry { number: 9, name: String::from("ops"), token_hash: [0; 32], encrypted: false, space: true };
        assert_eq!(check_head_grants(&prefix, &[space("team", 1), space("crew", 2)], &[held]), Ok(()));
    }
}
