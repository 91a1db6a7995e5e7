//! `cheesedb lot AGENT LABEL TEXT`: add a source.

use crate::arguments::LotArguments;
use crate::commands::embedded_write::write_then_embed;
use crate::commands::text_input::read_content;
use crate::commands::Context;
use crate::failure::Failure;
use crate::output::escaped;

/// Adds the lot and prints its id.
pub fn run(arguments: LotArguments, context: &Context) -> Result<(), Failure> {
    // Read the content before taking the store's lock: standard input may take its time.
    let content = read_content(&arguments.content)?;
    if let Some(space) = &arguments.space {
        return crate::commands::space::add_lot(context, &arguments.agent, space, &arguments.label, &content);
    }
    write_then_embed(
        context,
        &arguments.agent,
        &content,
        |agent| agent.add_lot(&arguments.label, &content),
        |id| format!("added lot {id} ({}, {} bytes)", escaped(&arguments.label), content.len()),
    )
}
