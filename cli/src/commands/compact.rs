//! `cheesedb compact AGENT`: rewrite the files without the text of recalled nodes.

use serde_json::json;

use crate::arguments::AgentOnly;
use crate::commands::Context;
use crate::failure::Failure;
use crate::progress::spinner;
use crate::session::open_agent;

/// Compacts the agent and prints `{"compacted": true}`.
pub fn run(arguments: AgentOnly, context: &Context) -> Result<(), Failure> {
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let progress = spinner("compacting");
    let compacted = agent.compact();
    progress.finish_and_clear();
    compacted?;
    context.printer.result(json!({ "compacted": true }), || {
        String::from("compacted: the text of recalled lots and memories is gone from the files")
    })
}
