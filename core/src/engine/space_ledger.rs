//! What a space's log says beyond its graph: who its members are, with their roles, and which
//! member wrote each lot and memory. Replayed from the log with the graph, and kept in step
//! with it by every write, so a role is checked against the history exactly as it was written.

use alloc::vec::Vec;

use crate::codec::record::{Body, Record};
use crate::corrupt_reason::CorruptReason;
use crate::graph::RecallPlan;
use crate::id::{Mode, Removal};
use crate::role::Role;

/// How a space's node was recalled: what each member applies to what it built on the node.
/// Of several recalls of one node, the widest counts (Strict over Fair, Erase over Untrusted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HowRecalled {
    /// Fair or Strict.
    pub(crate) mode: Mode,
    /// Untrusted or Erase.
    pub(crate) removal: Removal,
}

impl HowRecalled {
    /// The byte the ledger keeps: 1, plus 1 for Strict, plus 2 for Erase (0 is never recalled).
    fn code(self) -> u8 {
        1 + u8::from(self.mode == Mode::Strict) + 2 * u8::from(self.removal == Removal::Erase)
    }

    /// What [`HowRecalled::code`] gave; `None` for 0.
    fn from_code(code: u8) -> Option<HowRecalled> {
        let bits = code.checked_sub(1)?;
        let mode = if bits & 1 != 0 { Mode::Strict } else { Mode::Fair };
        let removal = if bits & 2 != 0 { Removal::Erase } else { Removal::Untrusted };
        Some(HowRecalled { mode, removal })
    }

    /// The wider of `self` and `other` in each of mode and removal.
    fn widened(self, other: HowRecalled) -> HowRecalled {
        let mode = if self.mode == Mode::Strict || other.mode == Mode::Strict { Mode::Strict } else { Mode::Fair };
        let removal = if self.removal == Removal::Erase || other.removal == Removal::Erase {
            Removal::Erase
        } else {
            Removal::Untrusted
        };
        HowRecalled { mode, removal }
    }
}

/// The members and authors of one space.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SpaceLedger {
    /// Each agent ever named by a member record, in the order first named, with its role now
    /// ([`Role::None`] once revoked: kept, since what it wrote still names it).
    members: Vec<(u64, Role)>,
    /// The author of each node, by id (the first node's at index 0).
    authors: Vec<u64>,
    /// How each node was recalled.
    recalled: RecalledNodes,
}

/// How each node of a space was recalled, by id (the first node's at index 0), as
/// [`HowRecalled::code`] gives it: 0 for a node never recalled. A byte a node, so a member
/// applying a recall looks up each of its shared nodes at once; as long as the highest id
/// recalled. A copy of it is all a member needs of the space to apply its recalls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RecalledNodes {
    codes: Vec<u8>,
}

impl RecalledNodes {
    /// How node `id` was recalled; `None` while it is alive.
    pub(crate) fn how_recalled(&self, id: u64) -> Option<HowRecalled> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        HowRecalled::from_code(*self.codes.get(index)?)
    }

    fn widen(&mut self, id: u64, how: HowRecalled) {
        let Some(index) = id.checked_sub(1).and_then(|index| usize::try_from(index).ok()) else { return };
        if self.codes.len() <= index {
            self.codes.resize(index + 1, 0);
        }
        if let Some(code) = self.codes.get_mut(index) {
            let widened = HowRecalled::from_code(*code).map_or(how, |before| before.widened(how));
            *code = widened.code();
        }
    }
}

impl SpaceLedger {
    /// A ledger with no member and no node.
    pub(crate) const EMPTY: SpaceLedger =
        SpaceLedger { members: Vec::new(), authors: Vec::new(), recalled: RecalledNodes { codes: Vec::new() } };

    /// The role agent `agent` holds now: [`Role::None`] for an agent never granted one.
    pub(crate) fn role_of(&self, agent: u64) -> Role {
        self.members.iter().find(|(member, _)| *member == agent).map_or(Role::None, |(_, role)| *role)
    }

    /// The members holding a role now, with it, in the order they were first granted one.
    pub(crate) fn members(&self) -> impl Iterator<Item = (u64, Role)> + '_ {
        self.members.iter().copied().filter(|(_, role)| *role != Role::None)
    }

    /// How many agents hold a role now.
    pub(crate) fn member_count(&self) -> usize {
        self.members().count()
    }

    /// The member that wrote node `id`.
    pub(crate) fn author_of(&self, id: u64) -> Option<u64> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        self.authors.get(index).copied()
    }

    /// The ids of the nodes `agent` wrote, ascending.
    pub(crate) fn written_by(&self, agent: u64) -> impl Iterator<Item = u64> + '_ {
        (1u64..).zip(&self.authors).filter(move |(_, author)| **author == agent).map(|(id, _)| id)
    }

    /// Every agent ever granted a role, revoked ones too: a recall reaches what each built on
    /// the space while it could read it.
    pub(crate) fn everyone_granted(&self) -> impl Iterator<Item = u64> + '_ {
        self.members.iter().map(|(agent, _)| *agent)
    }

    /// How each node was recalled.
    pub(crate) fn recalled(&self) -> &RecalledNodes {
        &self.recalled
    }

    /// Takes in a recall just applied to the space's graph: every node it kills or erases,
    /// and for a Strict one every node with the recalled one in its history (`history`).
    pub(crate) fn note_recall(&mut self, plan: &RecallPlan, mode: Mode, removal: Removal, history: &[u64]) {
        let how = HowRecalled { mode, removal };
        for id in plan.recalled.iter().chain(&plan.removed) {
            self.recalled.widen(*id, how);
        }
        for id in &plan.erase {
            self.recalled.widen(*id, HowRecalled { mode: Mode::Fair, removal: Removal::Erase });
        }
        // A node already dead with the recalled one in its history is reached by a Strict recall
        // too, with its removal: what a member built on it before it died goes with it, and
        // with Erase its text (a member applying an earlier Untrusted recall of it first must
        // not leave that text for this one to miss).
        for id in history {
            self.recalled.widen(*id, HowRecalled { mode: Mode::Strict, removal });
        }
    }

    /// Checks that `record`, the next committed one of the space, was written by a member whose
    /// role allowed it, and takes in what it says about members and authors.
    pub(crate) fn apply(&mut self, record: &Record<'_>) -> Result<(), CorruptReason> {
        if !record.is_chained() {
            return Ok(());
        }
        if matches!(record.body, Body::Shared { .. }) {
            return Err(CorruptReason::SharedNodeInASpace);
        }
        let author = record.author.ok_or(CorruptReason::SpaceRecordWithoutAuthor)?;
        let creation = self.members.is_empty()
            && matches!(record.body, Body::Member { agent, role: Role::Admin } if agent == author);
        if !creation && self.role_of(author) < role_needed(&record.body) {
            return Err(CorruptReason::AuthorWithoutTheRole);
        }
        match record.body {
            Body::Member { agent, role } => self.set_role(agent, role),
            Body::Lot { .. } | Body::Memory { .. } => self.note_author(author),
            Body::Recall { .. }
            | Body::RecallAll { .. }
            | Body::Vector { .. }
            | Body::Commit { .. }
            | Body::Seal { .. }
            | Body::Shared { .. } => {}
        }
        Ok(())
    }

    /// Notes that the node just added was written by `author`.
    pub(crate) fn note_author(&mut self, author: u64) {
        self.authors.push(author);
    }

    /// Gives `agent` the role `role` (revokes it with [`Role::None`]).
    pub(crate) fn set_role(&mut self, agent: u64, role: Role) {
        match self.members.iter_mut().find(|(member, _)| *member == agent) {
            Some(entry) => entry.1 = role,
            None => self.members.push((agent, role)),
        }
    }
}

/// The role a record needs its author to hold.
fn role_needed(body: &Body<'_>) -> Role {
    match body {
        Body::Lot { .. } | Body::Memory { .. } | Body::Vector { .. } => Role::Write,
        Body::Recall { .. } | Body::RecallAll { .. } | Body::Member { .. } => Role::Admin,
        // Refused in a space before its role is asked.
        Body::Commit { .. } | Body::Seal { .. } | Body::Shared { .. } => Role::None,
    }
}

/// Checks that a record of an agent's own log is not one of a space's.
pub(crate) fn check_agent_record(record: &Record<'_>) -> Result<(), CorruptReason> {
    if record.author.is_some() || matches!(record.body, Body::Member { .. }) {
        return Err(CorruptReason::SpaceRecordInAnAgentLog);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::record::Identity;
    use crate::id::{Mode, Removal};

    fn record(author: Option<u64>, body: Body<'static>) -> Record<'static> {
        Record { identity: Identity { agent: 9, segment: 1, sequence: 1 }, body, author }
    }

    fn member(author: u64, agent: u64, role: Role) -> Record<'static> {
        record(Some(author), Body::Member { agent, role })
    }

    fn recall(author: u64) -> Record<'static> {
        record(Some(author), Body::Recall { id: 1, mode: Mode::Fair, removal: Removal::Untrusted })
    }

    #[test]
    fn the_first_record_makes_its_author_admin_and_roles_then_bound_each_change() {
        let mut ledger = SpaceLedger::default();
        assert_eq!(ledger.apply(&member(1, 2, Role::Admin)), Err(CorruptReason::AuthorWithoutTheRole));
        ledger.apply(&member(1, 1, Role::Admin)).unwrap();
        ledger.apply(&member(1, 2, Role::Write)).unwrap();
        assert_eq!(ledger.apply(&member(2, 3, Role::Read)), Err(CorruptReason::AuthorWithoutTheRole));
        assert_eq!(ledger.apply(&recall(2)), Err(CorruptReason::AuthorWithoutTheRole));
        ledger.apply(&recall(1)).unwrap();
        ledger.apply(&member(1, 2, Role::None)).unwrap();
        assert_eq!(ledger.role_of(2), Role::None);
        assert_eq!(ledger.members().collect::<Vec<_>>(), [(1, Role::Admin)]);
        assert_eq!(ledger.member_count(), 1);
    }

    #[test]
    fn a_change_without_an_author_is_damage_in_a_space_and_an_author_is_damage_in_an_agent() {
        let mut ledger = SpaceLedger::default();
        let unsigned = record(None, Body::Recall { id: 1, mode: Mode::Fair, removal: Removal::Erase });
        assert_eq!(ledger.apply(&unsigned), Err(CorruptReason::SpaceRecordWithoutAuthor));
        assert_eq!(check_agent_record(&recall(1)), Err(CorruptReason::SpaceRecordInAnAgentLog));
        assert_eq!(check_agent_record(&member(1, 1, Role::Admin)), Err(CorruptReason::SpaceRecordInAnAgentLog));
        assert_eq!(check_agent_record(&unsigned), Ok(()));
    }
}
