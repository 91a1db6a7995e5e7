//! `cheesedb serve [--socket PATH]`: the memory server, until SIGTERM or SIGINT.

use std::path::Path;
use std::time::Duration;

use cheesedb::access_log::AccessLogError;
use cheesedb::server::{Replication, ServeError, ServeOptions, Server, Settings, Stopper};
use serde_json::json;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::arguments::ServeArguments;
use crate::commands::Context;
use crate::failure::{Failure, EXIT_ERROR};
use crate::output::escaped;
use crate::session::Access;

/// Serves the data folder until stopped. Once the socket listens it says so: on standard output
/// as one JSON line with `--json` (the socket, the folder and the pid), else one line on
/// standard error.
pub fn run(arguments: ServeArguments, context: &Context) -> Result<(), Failure> {
    let socket = arguments.socket.unwrap_or_else(|| context.folder.join(cheesedb::SOCKET_FILE));
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
    let replication = match arguments.replicate_to {
        Some(location) => Some(Replication {
            bucket: crate::object_store_file::connect(&location, &context.folder)?,
            prefix: location.prefix,
            lag_bound: Duration::from_secs(1),
            wait_for_ship: arguments.wait_for_ship,
        }),
        None => None,
    };
    serve_until_signalled(&context.folder, &socket, settings, context.access, replication, ready)
}

/// Makes the data folder if needed, serves it at `socket` with the folder's trust rules, calls
/// `ready` once the socket listens, and stops cleanly at the first SIGTERM or SIGINT (a second
/// ends the process at once, which the store survives as it survives a crash).
pub fn serve_until_signalled(
    folder: &Path,
    socket: &Path,
    settings: Settings,
    access: Access,
    replication: Option<Replication>,
    ready: impl FnOnce(),
) -> Result<(), Failure> {
    std::fs::create_dir_all(folder)
        .map_err(|error| Failure::new(format!("cannot make the data folder {}: {error}", folder.display())))?;
    let options = ServeOptions {
        settings,
        io: access.io,
        read_only: access.read_only,
        trust_rules: crate::trust_rules::load(folder)?,
        replication,
    };
    let server = Server::bind(folder, socket, options).map_err(serve_failure)?;
    watch_signals(server.stopper())?;
    ready();
    server.run();
    Ok(())
}

/// Watches for SIGTERM and SIGINT on a thread of its own.
fn watch_signals(stopper: Stopper) -> Result<(), Failure> {
    let mut signals = Signals::new([SIGTERM, SIGINT])
        .map_err(|error| Failure::new(format!("cannot watch for SIGTERM and SIGINT: {error}")))?;
    std::thread::Builder::new()
        .name(String::from("cheesedb-signals"))
        .spawn(move || {
            for _signal in signals.forever() {
                if stopper.stop() {
                    eprintln!("cheesedb serve: a second signal: stopping at once");
                    std::process::exit(i32::from(EXIT_ERROR));
                }
            }
        })
        .map_err(|error| Failure::new(format!("cannot start the thread watching for signals: {error}")))?;
    Ok(())
}

/// The command's failure for a server that could not start: the engine's errors keep their exit
/// status, a damaged access log is damage.
fn serve_failure(error: ServeError) -> Failure {
    match error {
        ServeError::Store { folder, error } => Failure::from(error).context(&format!("opening {}", folder.display())),
        ServeError::Replication(error) => Failure::from(error),
        ServeError::AccessLog(error @ AccessLogError::Damaged { .. }) => Failure::damaged(error.to_string()),
        other => Failure::new(other.to_string()),
    }
}
