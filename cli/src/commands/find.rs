//! `cheesedb find TEXT`: byte search of every file in the data folder, with grep's exit status.

use serde_json::json;

use crate::arguments::FindArguments;
use crate::commands::Context;
use crate::failure::{Failure, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_SUCCESS};
use crate::find::find_in_folder;
use crate::output::escaped;
use crate::progress::bytes_bar;

/// Prints the files holding the text and how often; exit status 0 when found, 1 when not.
/// JSON: `{"found", "text", "folder", "occurrences", "files": [{"path", "occurrences"}],
/// "not_searched": [path]}`. An entry that is neither a file nor a folder (a symbolic link
/// above all) is never followed but always listed; when the text was not found and such an
/// entry exists, the exit status is 2: the search cannot vouch for what the link leads to.
pub fn run(arguments: FindArguments, context: &Context) -> Result<u8, Failure> {
    let folder = &context.folder;
    let progress = bytes_bar(0, "searching");
    let searched = find_in_folder(folder, arguments.text.as_bytes(), &progress)?;
    let matches = &searched.matches;
    let total: u64 = matches.iter().map(|found| found.occurrences).sum();
    let files: Vec<_> = matches
        .iter()
        .map(|found| json!({ "path": found.path.display().to_string(), "occurrences": found.occurrences }))
        .collect();
    let not_searched: Vec<String> = searched.not_searched.iter().map(|path| path.display().to_string()).collect();
    let value = json!({
        "found": !matches.is_empty(),
        "text": arguments.text,
        "folder": folder.display().to_string(),
        "occurrences": total,
        "files": files,
        "not_searched": not_searched,
    });
    let quoted_text = escaped(&format!("{:?}", arguments.text));
    let shown_folder = escaped(&folder.display().to_string());
    context.printer.result(value, || {
        let mut lines: Vec<String> = not_searched
            .iter()
            .map(|path| format!("{}: not searched: not a file or folder (a link is never followed)", escaped(path)))
            .collect();
        if matches.is_empty() {
            lines.push(format!("{quoted_text} is in no file under {shown_folder}"));
            return lines.join("\n");
        }
        lines.extend(
            matches
                .iter()
                .map(|found| format!("{}: {}", escaped(&found.path.display().to_string()), found.occurrences)),
        );
        lines.push(format!("found {quoted_text} {total} time(s) in {} file(s) under {shown_folder}", matches.len()));
        lines.join("\n")
    })?;
    Ok(match (matches.is_empty(), not_searched.is_empty()) {
        (false, _) => EXIT_SUCCESS,
        (true, true) => EXIT_NOT_FOUND,
        (true, false) => EXIT_ERROR,
    })
}
