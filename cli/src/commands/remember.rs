//! `cheesedb remember AGENT TEXT --leg 1,2 --leg 3`: add a memory with its legs.

use std::cell::RefCell;

use crate::arguments::RememberArguments;
use crate::commands::embedded_write::write_then_embed;
use crate::commands::text_input::read_content;
use crate::commands::Context;
use crate::failure::Failure;
use crate::legs::{describe_legs, parse_leg, resolve_legs};

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
