//! What a member may do in a space. Roles are ordered: each one may do all that the one below
//! it may, so a check asks only whether a member's role reaches the one a call needs.

/// A member's role in a space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Role {
    /// No role: the agent is not a member (never granted, or revoked).
    None,
    /// Reads the space: get, list, search, audit, verify.
    Read,
    /// Also adds lots and memories to it.
    Write,
    /// Also recalls what is in it, and grants and revokes roles.
    Admin,
}

impl Role {
    /// The byte a member record stores for the role.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Role::None => 0,
            Role::Read => 1,
            Role::Write => 2,
            Role::Admin => 3,
        }
    }

    /// The role a member record's byte stores, or `None` for a byte no role has.
    #[must_use]
    pub fn from_code(code: u8) -> Option<Role> {
        match code {
            0 => Some(Role::None),
            1 => Some(Role::Read),
            2 => Some(Role::Write),
            3 => Some(Role::Admin),
            _ => None,
        }
    }

    /// The role's name, as the command and the docs spell it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Role::None => "none",
            Role::Read => "read",
            Role::Write => "write",
            Role::Admin => "admin",
        }
    }

    /// The role named `name` (`read`, `write` or `admin`), or `None` for any other word.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Role> {
        [Role::Read, Role::Write, Role::Admin].into_iter().find(|role| role.name() == name)
    }
}

impl core::fmt::Display for Role {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_keeps_its_code_and_its_name() {
        for role in [Role::None, Role::Read, Role::Write, Role::Admin] {
            assert_eq!(Role::from_code(role.code()), Some(role));
        }
        assert_eq!(Role::from_code(4), None);
        assert_eq!(Role::from_name("write"), Some(Role::Write));
        assert_eq!(Role::from_name("none"), None, "revoking is its own call, not a role to grant");
        assert!(Role::Admin > Role::Write && Role::Write > Role::Read && Role::Read > Role::None);
    }
}
