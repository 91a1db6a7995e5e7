//! `cheesedb remember AGENT TEXT --leg 1,2 --leg 3`: add a memory with its legs.

use std::cell::RefCell;

use cheesedb::Leg;

use crate::arguments::RememberArguments;
use crate::commands::embedded_write::write_then_embed;
use crate::commands::space::{parse_leg, resolve_legs};
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
    let legs = arguments.legs.iter().map(|leg| parse_leg(leg)).collect::<Result<Vec<_>, Failure>>()?;
    let content = read_content(&arguments.content)?;
    if let Some(space) = &arguments.space {
        return crate::commands::space::remember(context, &arguments.agent, space, &content, &legs);
    }
    let described = RefCell::new(String::new());
    write_then_embed(
        context,
        &arguments.agent,
        &content,
        |agent| {
            let legs = resolve_legs(agent, &legs)?;
            described.replace(describe_legs(&legs));
            agent.remember(&content, &legs)
        },
        |id| format!("remembered {id} (legs: {})", described.borrow()),
    )
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

    use cheesedb::Id;

    #[test]
    fn legs_are_described_as_alternatives() {
        let legs = [Leg::from([Id::from(1), Id::from(2)]), Leg::from([Id::from(3)])];
        assert_eq!(describe_legs(&legs), "[1, 2] or [3]");
    }
}
