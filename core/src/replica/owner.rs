//! [`Owner`]: whose replica a folder of a bucket holds.

/// Whose replica a folder holds: an agent's or a space's, by name. An agent and a space may
/// share a name, so the kind is part of the folder's name too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner<'name> {
    /// The agent's or space's name.
    pub name: &'name str,
    /// Whether it is a space.
    pub space: bool,
}

impl<'name> Owner<'name> {
    /// The agent named `name`.
    #[must_use]
    pub fn agent(name: &'name str) -> Owner<'name> {
        Owner { name, space: false }
    }

    /// The space named `name`.
    #[must_use]
    pub fn space(name: &'name str) -> Owner<'name> {
        Owner { name, space: true }
    }
}
