//! `cheesedb audit AGENT ID`: one lot or memory with the text a recall without `--erase` left
//! in the files, for a person checking what was recalled. The MCP server offers no such tool.

use cheesedb::Id;

use crate::arguments::AgentAndId;
use crate::commands::get::describe;
use crate::commands::Context;
use crate::failure::Failure;
use crate::nodes::{LotWord, SharedParents};
use crate::session::open_agent;

/// Prints the node as `get` does, with the content of a recalled node while it is still on disk
/// (null once erased or compacted).
pub fn run(arguments: AgentAndId, context: &Context) -> Result<(), Failure> {
    if let Some(space) = &arguments.space {
        return crate::commands::space::get(context, &arguments.agent, space, Id::from(arguments.id), true);
    }
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let node = agent.audit(Id::from(arguments.id))?;
    let value = SharedParents::new(&agent).node_json(&node, LotWord::Lot)?;
    let space_name = value.get("space").and_then(serde_json::Value::as_str).map(String::from);
    context.printer.result(value, || describe(&node, "(erased, or removed by compaction)", space_name.as_deref()))
}
