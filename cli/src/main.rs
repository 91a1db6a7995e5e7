//! `cheesedb`: agent memory with a recall button, from the shell.
//!
//! Every error ends the command with one line on standard error and a non-zero exit status;
//! a panic, which would be a bug, is reported the same way rather than as a trace.

mod arguments;
mod commands;
mod config_file;
mod data_folder;
mod demo;
mod embeddings;
mod endpoint;
mod failure;
mod find;
mod legs;
mod mcp;
mod memory_search;
mod nodes;
mod object_store_file;
mod output;
mod progress;
mod session;
mod snippet;
mod tokens;
mod trust_rules;
mod utc_time;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use crate::arguments::Arguments;
use crate::commands::Context;
use crate::failure::{one_line, Failure, EXIT_ERROR};
use crate::output::{escaped, Printer};

fn main() -> ExitCode {
    install_panic_hook();
    let arguments = match Arguments::try_parse() {
        Ok(arguments) => arguments,
        Err(error) => return usage_error(&error),
    };
    let printer = Printer::new(arguments.json);
    let access = session::Access { io: arguments.io, read_only: arguments.read_only };
    let outcome = data_folder::resolve(arguments.dir).and_then(|folder| {
        let shown = folder.clone();
        let context = Context { folder, access, printer };
        commands::run(arguments.command, &context).map_err(|failure| failure.about_folder(&shown))
    });
    match outcome {
        Ok(status) => ExitCode::from(status),
        Err(failure) => report_failure(&failure, printer),
    }
}

/// Prints `failure` as one line on standard error (as JSON with `--json`) and picks the exit status.
/// A message may quote what the user typed, a stored name or a path: it never repeats a token
/// and never drives the terminal.
fn report_failure(failure: &Failure, printer: Printer) -> ExitCode {
    if !failure.message().is_empty() {
        let message = cheesedb::conceal_token_digits(failure.message());
        if printer.is_json() {
            eprintln!("{}", serde_json::json!({ "error": message }));
        } else {
            eprintln!("cheesedb: {}", escaped(&message));
        }
    }
    ExitCode::from(failure.exit_status())
}

/// Help and version go to standard output as clap writes them; a usage error becomes one line.
fn usage_error(error: &clap::Error) -> ExitCode {
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                return ExitCode::from(EXIT_ERROR);
            }
            ExitCode::SUCCESS
        }
        _ => {
            // clap's first paragraph names the problem; usage and tips follow after a blank line.
            let rendered = error.render().to_string();
            let problem = rendered.trim().split("\n\n").next().unwrap_or("invalid arguments");
            let problem = problem.strip_prefix("error: ").unwrap_or(problem);
            // clap quotes the offending argument, which may be a token typed in the wrong place.
            let problem = escaped(&cheesedb::conceal_token_digits(&one_line(problem)));
            eprintln!("cheesedb: {problem} (see cheesedb --help)");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// A panic is a bug; it still ends with one readable line, not a trace.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|information| {
        let message = information
            .payload()
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| information.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| String::from("unknown cause"));
        let place = information
            .location()
            .map(|location| format!(" at {}:{}", location.file(), location.line()))
            .unwrap_or_default();
        let message = escaped(&cheesedb::conceal_token_digits(&one_line(&message)));
        eprintln!("cheesedb: internal error{place}: {message} (this is a bug; nothing more was written)");
    }));
}
