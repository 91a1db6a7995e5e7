//! `cheesedb remember AGENT TEXT --leg 1,2 --leg 3`: add a memory with its legs.

use cheesedb::{Id, Leg};

use crate::arguments::RememberArguments;
use crate::commands::embedded_write::write_then_embed;
use crate::commands::text_input::read_content;
use crate::commands::Context;
use crate::failure::Failure;

/// Adds the memory and prints its id.
pub fn run(arguments: RememberArguments, context: &Context) -> Result<(), Failure> {
    if arguments.legs.is_empty() {
        return Err(Failure::new(
            "a memory needs at least one leg naming what it was learned from, e.g. --leg 1 or --leg 1,2",
        ));
    }
    let legs = arguments.legs.iter().map(|leg| parse_leg(leg)).collect::<Result<Vec<Leg>, Failure>>()?;
    let content = read_content(&arguments.content)?;
    write_then_embed(
        context,
        &arguments.agent,
        &content,
        |agent| agent.remember(&content, &legs),
        |id| format!("remembered {id} (legs: {})", describe_legs(&legs)),
    )
}

/// Parses one `--leg` value: ids separated by commas, such as `1,2`.
pub fn parse_leg(text: &str) -> Result<Leg, Failure> {
    let mut ids = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let id: u64 = part.parse().map_err(|_| {
            Failure::new(format!("--leg {text:?}: {part:?} is not an id (ids are whole numbers from 1)"))
        })?;
        ids.push(Id::from(id));
    }
    Ok(ids.into_iter().collect())
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
    fn legs_parse_from_comma_separated_ids() {
        assert_eq!(parse_leg("2, 1").unwrap(), Leg::from([Id::from(1), Id::from(2)]));
        assert!(parse_leg("1,x").is_err());
        assert!(parse_leg("").is_err());
        assert!(parse_leg("-1").is_err());
    }

    #[test]
    fn legs_are_described_as_alternatives() {
        let legs = [Leg::from([Id::from(1), Id::from(2)]), Leg::from([Id::from(3)])];
        assert_eq!(describe_legs(&legs), "[1, 2] or [3]");
    }
}
