//! Legs as the command reads and writes them: `--leg` values, with `SPACE:ID` for a space's
//! node, and legs as people read them.

use cheesedb::{Agent, Id, Leg};

use crate::failure::Failure;
use crate::output::escaped;

/// One parent named by a `--leg`: an id of the agent's own, or `SPACE:ID`, a node of a space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parent {
    /// An id of the agent (or, with `--space`, of that space).
    Own(Id),
    /// Node `id` of space `space`.
    Shared {
        /// The space's name.
        space: String,
        /// The node's id in it.
        id: Id,
    },
}

/// Parses one `--leg` value: parents separated by commas, each an id or `SPACE:ID`.
pub fn parse_leg(text: &str) -> Result<Vec<Parent>, Failure> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            let not_an_id =
                |id: &str| Failure::new(format!("--leg {text:?}: {id:?} is not an id (ids are whole numbers from 1)"));
            match part.rsplit_once(':') {
                Some((space, id)) if !space.is_empty() => {
                    let id: u64 = id.parse().map_err(|_| not_an_id(id))?;
                    Ok(Parent::Shared { space: String::from(space), id: Id::from(id) })
                }
                _ => part.parse().map(|id: u64| Parent::Own(Id::from(id))).map_err(|_| not_an_id(part)),
            }
        })
        .collect()
}

/// The legs of a private memory of `agent`: each shared parent becomes the agent's own id that
/// stands for it (written the first time).
pub fn resolve_legs(agent: &Agent, legs: &[Vec<Parent>]) -> Result<Vec<Leg>, cheesedb::Error> {
    let mut resolved = Vec::with_capacity(legs.len());
    for leg in legs {
        let mut ids = Vec::with_capacity(leg.len());
        for parent in leg {
            ids.push(match parent {
                Parent::Own(id) => *id,
                Parent::Shared { space, id } => agent.space(space)?.share(*id)?,
            });
        }
        resolved.push(ids.into_iter().collect());
    }
    Ok(resolved)
}

/// The legs of a memory of space `space`: its parents are nodes of that space only.
pub fn legs_in_space(space: &str, legs: &[Vec<Parent>]) -> Result<Vec<Leg>, Failure> {
    legs.iter()
        .map(|leg| {
            leg.iter()
                .map(|parent| match parent {
                    Parent::Own(id) => Ok(*id),
                    Parent::Shared { space: named, id } if named == space => Ok(*id),
                    Parent::Shared { space: named, .. } => Err(Failure::new(format!(
                        "a memory of space {} names parents of that space only, not of {}",
                        escaped(space),
                        escaped(named)
                    ))),
                })
                .collect::<Result<Leg, Failure>>()
        })
        .collect()
}

/// Legs as people read them: `[1, 2] or [3]`.
pub fn describe_legs(legs: &[Leg]) -> String {
    legs.iter()
        .map(|leg| {
            let parents: Vec<String> = leg.parents().iter().map(ToString::to_string).collect();
            format!("[{}]", parents.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leg_names_own_ids_and_space_nodes() {
        let shared = |space: &str, id| Parent::Shared { space: space.into(), id: Id::from(id) };
        assert_eq!(
            parse_leg("team:3, team:7,12").unwrap(),
            [shared("team", 3), shared("team", 7), Parent::Own(Id::from(12))]
        );
        assert!(parse_leg("team:x").is_err());
        assert!(parse_leg("1,x").is_err());
        assert!(parse_leg("-1").is_err());
        assert!(parse_leg(":3").is_err());
        assert!(parse_leg("").is_err());
        let legs = [vec![shared("team", 3), Parent::Own(Id::from(1))]];
        assert_eq!(legs_in_space("team", &legs).unwrap(), [Leg::from([Id::from(1), Id::from(3)])]);
        assert!(legs_in_space("other", &legs).is_err());
    }

    #[test]
    fn legs_are_described_as_alternatives() {
        let legs = [Leg::from([Id::from(1), Id::from(2)]), Leg::from([Id::from(3)])];
        assert_eq!(describe_legs(&legs), "[1, 2] or [3]");
    }
}
