//! `cheesedb lot AGENT LABEL TEXT`: add a source.

use serde_json::json;

use crate::arguments::LotArguments;
use crate::commands::text_input::read_content;
use crate::commands::Context;
use crate::failure::Failure;
use crate::output::escaped;
use crate::session::open_agent;

/// Adds the lot and prints its id.
pub fn run(arguments: LotArguments, context: &Context) -> Result<(), Failure> {
    // Read the content before taking the store's lock: standard input may take its time.
    let content = read_content(&arguments.content)?;
    let (_store, agent) = open_agent(&context.folder, &arguments.agent)?;
    let id = agent.add_lot(&arguments.label, &content)?;
    context.printer.result(json!({ "id": id.get() }), || {
        format!("added lot {id} ({}, {} bytes)", escaped(&arguments.label), content.len())
    })
}
