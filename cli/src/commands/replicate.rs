//! `cheesedb replicate`, `restore` and `follow`: the store's agents shipped to S3-compatible
//! object storage, brought back, and kept current elsewhere.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cheesedb::replication::{restore_from, Follow, ReplicaStatus, Replicator, ShipReport};
use cheesedb::server::{Replication, Settings};
use cheesedb::{Error, Store};
use serde_json::{json, Value};

use crate::arguments::{FollowArguments, ReplicateArguments, RestoreArguments};
use crate::commands::serve::serve_until_signalled;
use crate::commands::Context;
use crate::failure::Failure;
use crate::object_store_file::connect;
use crate::output::escaped;

/// `cheesedb replicate --to s3://…`: with `--once` ships and exits; with `--status` says how
/// far each replica is behind; otherwise serves the store (as `cheesedb serve`) and ships
/// until stopped.
pub fn run(arguments: ReplicateArguments, context: &Context) -> Result<(), Failure> {
    if !(arguments.once || arguments.status) {
        let socket = context.folder.join(cheesedb::SOCKET_FILE);
        let folder = &context.folder;
        let ready = || {
            eprintln!(
                "cheesedb: replicating {} to {}; stop with Ctrl-C or SIGTERM",
                escaped(&folder.display().to_string()),
                arguments.to
            )
        };
        let replication = Replication {
            bucket: connect(&arguments.to, folder)?,
            prefix: arguments.to.prefix.clone(),
            lag_bound: Duration::from_millis(arguments.max_lag_ms),
            wait_for_ship: arguments.wait_for_ship,
        };
        // The server writes what it ships: it never opens the store read-only.
        let access = crate::session::Access { read_only: false, ..context.access };
        return serve_until_signalled(folder, &socket, Settings::default(), access, Some(replication), ready);
    }
    let store = Store::open(&context.folder).map_err(|error| opened_failure(error, &context.folder))?;
    let bucket = connect(&arguments.to, &context.folder)?;
    let mut replicator = Replicator::new(&store, bucket, &arguments.to.prefix)?;
    if arguments.status {
        // A pass that ships nothing new still reads every head and every agent's end.
        let report = replicator.ship()?;
        return print_status(context, &replicator.status(), Some(report));
    }
    let started = Instant::now();
    let report = replicator.ship()?;
    let elapsed = started.elapsed();
    context.printer.result(
        json!({
            "shipped": report_json(&report),
            "seconds": elapsed.as_secs_f64(),
            "agents": replicator.status().iter().map(status_json).collect::<Vec<Value>>(),
        }),
        || {
            format!(
                "shipped {} agents: {} pieces, {} bytes, {} objects deleted, in {:.2} s",
                report.agents_shipped,
                report.pieces_uploaded,
                report.bytes_uploaded,
                report.objects_deleted,
                elapsed.as_secs_f64()
            )
        },
    )
}

fn opened_failure(error: Error, folder: &Path) -> Failure {
    match error {
        Error::Locked => Failure::new(format!(
            "the data folder {} is in use; a running server replicates with `cheesedb serve --replicate-to`",
            folder.display()
        )),
        other => Failure::from(other),
    }
}

fn report_json(report: &ShipReport) -> Value {
    json!({
        "agents": report.agents_shipped,
        "pieces": report.pieces_uploaded,
        "bytes": report.bytes_uploaded,
        "objects_deleted": report.objects_deleted,
    })
}

fn status_json(status: &ReplicaStatus) -> Value {
    let kind = if status.space { "space" } else { "agent" };
    json!({
        kind: status.name,
        "primary": status.primary.to_string(),
        "shipped": status.shipped.map(|fingerprint| fingerprint.to_string()),
        "records_behind": status.records_behind,
        "lag_seconds": status.lag.as_secs_f64(),
        "deletions_pending": status.deletions_pending,
    })
}

fn print_status(context: &Context, statuses: &[ReplicaStatus], report: Option<ShipReport>) -> Result<(), Failure> {
    context.printer.result(
        json!({ "agents": statuses.iter().map(status_json).collect::<Vec<Value>>(), "shipped": report.as_ref().map(report_json) }),
        || {
            statuses
                .iter()
                .map(|status| {
                    format!(
                        "{}{}: {} records behind, lag {:.3} s, {} deletions pending (shipped {})",
                        if status.space { "space " } else { "" },
                        escaped(&status.name),
                        status.records_behind,
                        status.lag.as_secs_f64(),
                        status.deletions_pending,
                        status.shipped.map_or_else(|| String::from("nothing"), |fingerprint| fingerprint.to_string())
                    )
                })
                .collect::<Vec<String>>()
                .join("\n")
        },
    )
}

/// `cheesedb restore --from s3://… --to FOLDER`. Restoring nothing is an error, and a replica
/// folder whose head is gone fails the command (after the others are restored), naming it.
pub fn run_restore(arguments: RestoreArguments, context: &Context) -> Result<(), Failure> {
    let mut bucket = connect(&arguments.copy.from, &context.folder)?;
    let point = arguments.fingerprint.as_deref().map(str::parse).transpose()?;
    let report = restore_from(
        &mut bucket,
        &arguments.copy.from.prefix,
        &arguments.copy.to,
        arguments.copy.agent.as_deref(),
        point,
    )?;
    let restored = &report.restored;
    context.printer.result(
        json!({
            "restored": restored.iter().map(|(name, fingerprint)| json!({ "agent": name, "fingerprint": fingerprint.to_string() })).collect::<Vec<Value>>(),
            "spaces_restored": report.spaces_restored.iter().map(|(name, fingerprint)| json!({ "space": name, "fingerprint": fingerprint.to_string() })).collect::<Vec<Value>>(),
            "heads_missing": report.heads_missing,
        }),
        || {
            let spaces = report.spaces_restored.iter().map(|(name, fingerprint)| (format!("space {}", escaped(name)), fingerprint));
            restored
                .iter()
                .map(|(name, fingerprint)| (escaped(name), fingerprint))
                .chain(spaces)
                .map(|(name, fingerprint)| format!("restored {name} at {fingerprint}"))
                .collect::<Vec<String>>()
                .join("\n")
        },
    )?;
    match report.heads_missing.as_slice() {
        [] => Ok(()),
        missing => Err(Failure::damaged(format!(
            "the replica holds pieces of {} agent(s) whose head is missing, so they were not restored (a first ship cut short, or a head deleted): {}",
            missing.len(),
            missing.iter().map(|key| escaped(key)).collect::<Vec<String>>().join(", ")
        ))),
    }
}

/// `cheesedb follow --from s3://… --to FOLDER`: keeps the copy current until stopped (or once).
pub fn run_follow(arguments: FollowArguments, context: &Context) -> Result<(), Failure> {
    let bucket = connect(&arguments.copy.from, &context.folder)?;
    let mut follow =
        Follow::new(bucket, &arguments.copy.from.prefix, &arguments.copy.to, arguments.copy.agent.as_deref());
    let stopping = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stopping.clone())
            .map_err(|error| Failure::new(format!("cannot watch for signals: {error}")))?;
    }
    loop {
        match follow.step() {
            Ok(changed) => {
                for (name, fingerprint) in changed {
                    context.printer.result(json!({ "agent": name, "fingerprint": fingerprint.to_string() }), || {
                        format!("{} now at {fingerprint}", escaped(&name))
                    })?;
                }
            }
            // A reader has the copy open: try again at the next step.
            Err(Error::Locked) if !arguments.once => {}
            Err(error) => return Err(error.into()),
        }
        if arguments.once || stopping.load(Ordering::SeqCst) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(arguments.interval_ms));
    }
}
