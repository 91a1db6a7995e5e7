//! Ids, legs and the two choices a recall makes.

use alloc::vec::Vec;
use core::fmt;

/// The id of a lot or memory: per agent, sequential from 1, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Id(u64);

impl Id {
    /// The number inside.
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl From<u64> for Id {
    fn from(value: u64) -> Id {
        Id(value)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

/// One way a memory was learned: a set of parents that must ALL be alive for the leg to hold.
///
/// The parents are kept sorted and without repeats.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Leg {
    parents: Vec<Id>,
}

impl Leg {
    /// The parents, ascending.
    #[must_use]
    pub fn parents(&self) -> &[Id] {
        &self.parents
    }

    /// Whether the leg names no parent (such a leg is refused by `remember`).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }
}

impl<const N: usize> From<[Id; N]> for Leg {
    fn from(parents: [Id; N]) -> Leg {
        parents.into_iter().collect()
    }
}

impl FromIterator<Id> for Leg {
    fn from_iter<I: IntoIterator<Item = Id>>(iterator: I) -> Leg {
        let mut parents: Vec<Id> = iterator.into_iter().collect();
        parents.sort_unstable();
        parents.dedup();
        Leg { parents }
    }
}

/// Which memories a recall removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A memory dies when none of its legs still holds; one independent leg keeps it.
    Fair,
    /// A memory dies when the recalled id is anywhere in its history.
    Strict,
}

/// What happens to the text of what a recall removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Removal {
    /// Hidden from the agent at once; the text stays in the files until `compact`.
    Untrusted,
    /// Gone from every file of the store before the call returns.
    Erase,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leg_sorts_and_removes_repeats() {
        let leg = Leg::from([Id::from(3), Id::from(1), Id::from(3)]);
        assert_eq!(leg.parents(), &[Id::from(1), Id::from(3)]);
    }

    #[test]
    fn id_displays_its_number() {
        assert_eq!(alloc::format!("{}", Id::from(42)), "42");
        assert_eq!(Id::from(42).get(), 42);
    }
}
