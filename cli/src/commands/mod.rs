//! One file per subcommand. Each takes the parsed arguments and a [`Context`] and returns
//! `Ok` with the exit status, or the [`Failure`] that stopped it.

pub mod agent;
pub mod audit;
pub mod compact;
pub mod demo;
pub mod embed;
pub mod embedded_write;
pub mod find;
pub mod get;
pub mod graph;
pub mod list;
pub mod log;
pub mod lot;
pub mod mcp;
pub mod recall;
pub mod remember;
pub mod replicate;
pub mod report;
pub mod search;
pub mod serve;
pub mod space;
pub mod text_input;
pub mod verify;

use std::path::PathBuf;

use crate::arguments::Command;
use crate::failure::{Failure, EXIT_SUCCESS};
use crate::output::Printer;
use crate::session::Access;

/// What every subcommand needs: the data folder, how to reach its store, and how to print.
#[derive(Debug, Clone)]
pub struct Context {
    /// The data folder.
    pub folder: PathBuf,
    /// How the store is reached (`--io`, `--read-only`).
    pub access: Access,
    /// Where results go, as JSON or text.
    pub printer: Printer,
}

/// Runs `command`; returns the exit status.
pub fn run(command: Command, context: &Context) -> Result<u8, Failure> {
    match command {
        Command::Agent(command) => agent::run(command, context).map(|()| EXIT_SUCCESS),
        Command::Space(command) => space::run(command, context).map(|()| EXIT_SUCCESS),
        Command::Lot(arguments) => lot::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Remember(arguments) => remember::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Recall(arguments) => recall::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Get(arguments) => get::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Audit(arguments) => audit::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::List(arguments) => list::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Graph(arguments) => graph::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Find(arguments) => find::run(arguments, context),
        Command::Search(arguments) => search::run(arguments, context),
        Command::Embed(arguments) => embed::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Verify(arguments) => verify::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Compact(arguments) => compact::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Report(arguments) => report::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Log(arguments) => log::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Serve(arguments) => serve::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Replicate(arguments) => replicate::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Restore(arguments) => replicate::run_restore(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Follow(arguments) => replicate::run_follow(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Mcp(arguments) => mcp::run(arguments, context).map(|()| EXIT_SUCCESS),
        Command::Demo(arguments) => demo::run(arguments, context).map(|()| EXIT_SUCCESS),
    }
}
