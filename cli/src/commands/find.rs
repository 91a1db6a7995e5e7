//! `cheesedb find TEXT`: byte search of every file in the data folder, with grep's exit status.

use serde_json::json;

use crate::arguments::FindArguments;
use crate::commands::Context;
use crate::failure::{Failure, EXIT_NOT_FOUND, EXIT_SUCCESS};
use crate::output::escaped;
use crate::progress::bytes_bar;
use crate::search::search_folder;

/// Prints the files holding the text and how often; exit status 0 when found, 1 when not.
/// JSON: `{"found", "text", "folder", "occurrences", "files": [{"path", "occurrences"}]}`.
pub fn run(arguments: FindArguments, context: &Context) -> Result<u8, Failure> {
    let folder = &context.folder;
    let progress = bytes_bar(0, "searching");
    let matches = search_folder(folder, arguments.text.as_bytes(), &progress)?;
    let total: u64 = matches.iter().map(|found| found.occurrences).sum();
    let files: Vec<_> = matches
        .iter()
        .map(|found| json!({ "path": found.path.display().to_string(), "occurrences": found.occurrences }))
        .collect();
    let value = json!({
        "found": !matches.is_empty(),
        "text": arguments.text,
        "folder": folder.display().to_string(),
        "occurrences": total,
        "files": files,
    });
    context.printer.result(value, || {
        if matches.is_empty() {
            return format!(
                "{} is in no file under {}",
                escaped(&format!("{:?}", arguments.text)),
                escaped(&folder.display().to_string())
            );
        }
        let mut lines: Vec<String> = matches
            .iter()
            .map(|found| format!("{}: {}", escaped(&found.path.display().to_string()), found.occurrences))
            .collect();
        lines.push(format!(
            "found {} {total} time(s) in {} file(s) under {}",
            escaped(&format!("{:?}", arguments.text)),
            matches.len(),
            escaped(&folder.display().to_string())
        ));
        lines.join("\n")
    })?;
    Ok(if matches.is_empty() { EXIT_NOT_FOUND } else { EXIT_SUCCESS })
}
