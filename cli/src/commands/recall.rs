//! `cheesedb recall AGENT ID [--strict] [--erase] [--dry-run]`.

use cheesedb::{Id, Mode, Removal};
use serde_json::json;

use crate::arguments::RecallArguments;
use crate::commands::Context;
use crate::failure::Failure;
use crate::session::open_agent;

/// Recalls the id (or previews the recall) and prints the memories removed with it.
pub fn run(arguments: RecallArguments, context: &Context) -> Result<(), Failure> {
    let (_store, agent) = open_agent(&context.folder, &arguments.agent)?;
    let id = Id::from(arguments.id);
    let mode = if arguments.strict { Mode::Strict } else { Mode::Fair };
    let removal = if arguments.erase { Removal::Erase } else { Removal::Untrusted };
    // Recalling a recalled id again is allowed only to erase what it left on disk.
    let erasing_leftovers = removal == Removal::Erase && !arguments.dry_run && !agent.get(id)?.is_alive();
    let removed = if arguments.dry_run { agent.preview_recall(id, mode)? } else { agent.recall(id, mode, removal)? };
    let numbers: Vec<u64> = removed.iter().map(|id| id.get()).collect();
    let value = json!({ "recalled": id.get(), "removed": numbers, "dry_run": arguments.dry_run });
    context.printer.result(value, || {
        if erasing_leftovers {
            return format!("{id} was recalled before; the text it and the memories recalled with it left in the files is now erased");
        }
        describe(id, &numbers, arguments.dry_run, removal)
    })
}

fn describe(id: Id, removed: &[u64], dry_run: bool, removal: Removal) -> String {
    let list = if removed.is_empty() {
        String::from("no memory")
    } else {
        removed.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    };
    if dry_run {
        return format!("a recall of {id} would remove {id} and {list} (dry run: nothing was written)");
    }
    let text = match removal {
        Removal::Untrusted => "their text stays in the files until `cheesedb compact`",
        Removal::Erase => "their text is erased from every file",
    };
    format!("recalled {id}; removed with it: {list}\n{text}")
}
