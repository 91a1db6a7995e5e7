//! `cheesedb serve [--socket PATH]`: the memory server, until SIGTERM or SIGINT.

use std::time::Duration;

use serde_json::json;

use crate::arguments::ServeArguments;
use crate::commands::Context;
use crate::failure::Failure;
use crate::output::escaped;
use crate::server::{serve, Settings};

/// Serves the data folder until stopped. Once the socket listens it says so: on standard output
/// as one JSON line with `--json` (the socket, the folder and the pid), else one line on
/// standard error.
pub fn run(arguments: ServeArguments, context: &Context) -> Result<(), Failure> {
    let socket = arguments.socket.unwrap_or_else(|| context.folder.join(cheesedb::protocol::SOCKET_FILE));
    let settings = Settings {
        connections_max: usize::try_from(arguments.connections_max).unwrap_or(usize::MAX),
        client_timeout: Duration::from_millis(arguments.client_timeout_ms),
    };
    let printer = context.printer;
    let ready = || {
        let pid = std::process::id();
        if printer.is_json() {
            let line = json!({ "serving": context.folder, "socket": socket, "pid": pid });
            let _ = printer.result(line, String::new);
        } else {
            eprintln!(
                "cheesedb: serving {} at {} (pid {pid}); stop with Ctrl-C or SIGTERM",
                escaped(&context.folder.display().to_string()),
                escaped(&socket.display().to_string())
            );
        }
    };
    std::fs::create_dir_all(&context.folder)
        .map_err(|error| Failure::new(format!("cannot make the data folder {}: {error}", context.folder.display())))?;
    let replication = arguments.replicate_to.map(|location| crate::replication::Replication {
        location,
        lag_bound: Duration::from_secs(1),
        wait_for_ship: arguments.wait_for_ship,
    });
    serve(&context.folder, &socket, context.access, settings, replication, ready)
}
