//! Read tracking: what a session read since its previous write becomes a parent, in every leg,
//! of the memory it writes next, so a recall of what it read reaches that memory even when the
//! caller did not declare it.

use alloc::vec::Vec;

use super::append::Entry;
use super::AgentEngine;
use crate::error::Error;
use crate::error_facts::{InternalRule, Limit};
use crate::id::{Id, Leg};
use crate::limits::{self, PARENTS_PER_LEG_MAX};
use crate::read_set::ReadSet;
use crate::storage::Storage;

/// A memory's legs with the read set added to each, and which parents tracking added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrackedLegs {
    /// The declared legs, each with every read id added.
    pub(crate) legs: Vec<Leg>,
    /// The read ids that some declared leg did not name: each is now a parent in every leg
    /// because of tracking. Ascending; empty when every read id was declared in every leg.
    pub(crate) tracked: Vec<Id>,
}

/// Adds every id of `reads` to each of `legs`. The declared legs are checked first as
/// `remember` checks them; a leg the read set would take past the limit on parents is refused
/// (never cut short, which would drop a dependency).
pub(crate) fn add_reads(legs: &[Leg], reads: &ReadSet) -> Result<TrackedLegs, Error> {
    if reads.is_empty() {
        // Nothing to add: the legs go on to the checks of `remember`, which answer as it does.
        return Ok(TrackedLegs { legs: legs.to_vec(), tracked: Vec::new() });
    }
    if legs.is_empty() {
        return Err(Error::NoLegs);
    }
    if let Some(leg_index) = legs.iter().position(Leg::is_empty) {
        return Err(Error::EmptyLeg { leg_index });
    }
    limits::check(Limit::ReadSetIds, reads.len(), PARENTS_PER_LEG_MAX)?;
    let mut merged = Vec::with_capacity(legs.len());
    for leg in legs {
        let with_reads: Leg = leg.parents().iter().chain(reads.ids()).copied().collect();
        limits::check(Limit::ParentsPerLegWithReadSet, with_reads.parents().len(), PARENTS_PER_LEG_MAX)?;
        merged.push(with_reads);
    }
    let declared_everywhere = |id: &Id| legs.iter().all(|leg| leg.parents().binary_search(id).is_ok());
    let tracked = reads.ids().iter().copied().filter(|id| !declared_everywhere(id)).collect();
    Ok(TrackedLegs { legs: merged, tracked })
}

impl<S: Storage> AgentEngine<S> {
    /// Adds a memory learned through `legs` and through everything in `reads`: each read id is
    /// added to every leg (an id a leg declared stays in it once), and the record keeps which
    /// parents came from tracking (`Node::tracked_parents`). With an empty read set it is
    /// `remember`. `reads` is left as it is: the caller clears it once the write succeeded.
    ///
    /// # Errors
    ///
    /// - `Error::LimitExceeded` when the read set, or a leg with it added, holds more parents than
    ///   a leg may have; `Error::DeadParent` when a read id was recalled since it was read;
    ///   `Error::UnknownId` for a read id that names no lot or memory. Nothing is written.
    /// - Otherwise as [`AgentEngine::remember`].
    pub fn remember_tracked(&mut self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        self.check_writable()?;
        let with_reads = add_reads(legs, reads)?;
        self.validate_memory(content, &with_reads.legs, 0..0)?;
        self.validate_room(1)?;
        let entry = Entry::Memory { legs: &with_reads.legs, tracked: &with_reads.tracked, content };
        let ids = self.write_entries(&[entry])?;
        ids.first().copied().ok_or(Error::Internal { what: InternalRule::WrittenEntryHasId })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn ids(numbers: &[u64]) -> Vec<Id> {
        numbers.iter().copied().map(Id::from).collect()
    }

    fn leg(numbers: &[u64]) -> Leg {
        ids(numbers).into_iter().collect()
    }

    #[test]
    fn reads_join_every_leg_and_only_undeclared_ones_count_as_tracked() {
        let reads: ReadSet = ids(&[2, 5, 9]).into_iter().collect();
        let merged = add_reads(&[leg(&[1, 2]), leg(&[2, 3, 5])], &reads).unwrap();
        assert_eq!(merged.legs, vec![leg(&[1, 2, 5, 9]), leg(&[2, 3, 5, 9])]);
        assert_eq!(merged.tracked, ids(&[5, 9]), "2 was declared in every leg; 5 only in one");
    }

    #[test]
    fn an_empty_read_set_changes_nothing() {
        let merged = add_reads(&[leg(&[1])], &ReadSet::new()).unwrap();
        assert_eq!(merged, TrackedLegs { legs: vec![leg(&[1])], tracked: vec![] });
    }

    #[test]
    fn declared_legs_are_checked_first() {
        let reads: ReadSet = ids(&[1]).into_iter().collect();
        assert_eq!(add_reads(&[], &reads), Err(Error::NoLegs));
        assert_eq!(add_reads(&[], &ReadSet::new()).map(|merged| merged.legs), Ok(vec![]), "left to `remember`");
        assert_eq!(add_reads(&[leg(&[1]), Leg::default()], &reads), Err(Error::EmptyLeg { leg_index: 1 }));
    }

    #[test]
    fn a_leg_the_reads_take_past_the_limit_is_refused() {
        let reads: ReadSet = (1..=60).map(Id::from).collect();
        let declared = leg(&[100, 101, 102, 103]);
        assert!(add_reads(core::slice::from_ref(&declared), &reads).is_ok(), "64 parents fit");
        let over = leg(&[100, 101, 102, 103, 104]);
        let refused = add_reads(&[over], &reads);
        assert!(matches!(
            refused,
            Err(Error::LimitExceeded { size: 65, limit: 64, what: Limit::ParentsPerLegWithReadSet })
        ));
        let too_many: ReadSet = (1..=100).map(Id::from).collect();
        let refused = add_reads(&[declared], &too_many);
        assert!(matches!(refused, Err(Error::LimitExceeded { size: 65, limit: 64, what: Limit::ReadSetIds })));
    }
}
