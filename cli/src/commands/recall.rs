//! `cheesedb recall AGENT ID [--strict] [--erase] [--dry-run]`.

use cheesedb::{Error, Id, Mode, Removal};
use serde_json::json;

use crate::arguments::RecallArguments;
use crate::commands::Context;
use crate::failure::Failure;
use crate::session::open_agent;

/// Recalls the id (or previews the recall) and prints the memories removed with it. A dry run
/// asks the same question the recall would, with the same mode and removal, so it gives the
/// same answer or the same refusal.
pub fn run(arguments: RecallArguments, context: &Context) -> Result<(), Failure> {
    let id = Id::from(arguments.id);
    let mode = if arguments.strict { Mode::Strict } else { Mode::Fair };
    let removal = if arguments.erase { Removal::Erase } else { Removal::Untrusted };
    if let Some(space) = &arguments.space {
        return crate::commands::space::recall(context, &arguments.agent, space, id, mode, removal, arguments.dry_run);
    }
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let repeated = !agent.get(id)?.is_alive();
    let removed = if arguments.dry_run { agent.preview_recall_with(id, mode, removal) } else { agent.recall(id, mode, removal) }
        .map_err(|error| match error {
            Error::AlreadyRecalled { id } if removal == Removal::Erase => Failure::new(format!(
                "{id} was already recalled and erased, with every recalled memory with it in its history: erasing it again would change nothing"
            )),
            Error::AlreadyRecalled { id } => Failure::new(format!(
                "{id} was already recalled, and recalling it again this way would change nothing (--erase erases the text it left on disk)"
            )),
            other => Failure::from(other),
        })?;
    let numbers: Vec<u64> = removed.iter().map(|id| id.get()).collect();
    let value = json!({ "recalled": id.get(), "removed": numbers, "dry_run": arguments.dry_run, "repeated": repeated });
    context.printer.result(value, || describe(id, &numbers, arguments.dry_run, removal, repeated))
}

fn describe(id: Id, removed: &[u64], dry_run: bool, removal: Removal, repeated: bool) -> String {
    let list = if removed.is_empty() {
        String::from("no memory")
    } else {
        removed.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    };
    let erased = "the text of it and of every recalled memory with it in its history";
    if dry_run {
        let target = if repeated {
            format!("{id} (recalled before) would remove")
        } else {
            format!("{id} would remove {id} and")
        };
        let erasing =
            if removal == Removal::Erase && repeated { format!(" and erase {erased}") } else { String::new() };
        return format!("a recall of {target} {list}{erasing} (dry run: nothing was written)");
    }
    if repeated {
        let text = match removal {
            Removal::Untrusted => "their text stays in the files until `cheesedb compact`".to_string(),
            Removal::Erase => format!("{erased} is erased from every file"),
        };
        return format!("{id} was recalled before; removed now: {list}\n{text}");
    }
    let text = match removal {
        Removal::Untrusted => "their text stays in the files until `cheesedb compact`",
        Removal::Erase => "their text is erased from every file",
    };
    format!("recalled {id}; removed with it: {list}\n{text}")
}
