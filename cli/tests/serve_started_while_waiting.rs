//! A command waiting for the data folder's lock takes the memory server's way in when a server
//! starts meanwhile, rather than waiting on a lock the server keeps for good.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use cheesedb::Store;
use common::server_process::ServerProcess;
use common::Cli;

#[test]
fn a_command_waiting_for_the_lock_goes_through_a_server_started_meanwhile() {
    let cli = Cli::new();
    cli.create_agent("alice");
    // The store held here: the command finds no server and waits for the lock.
    let holder = Store::open(cli.folder()).unwrap();
    let started = Instant::now();
    let command = cli
        .command(&["--json", "lot", "alice", "note", "written while a server started"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // The lock passes straight to a server: it may well open the store before the command
    // tries again, and then keeps it. Should the command win the lock instead, the server is
    // refused while the command writes, and started again.
    drop(holder);
    let (server, _refusals) = ServerProcess::start_when_free(cli.folder());
    let output = command.wait_with_output().unwrap();
    let waited = started.elapsed();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(waited < Duration::from_secs(5), "the command waited {waited:?}: it did not see the server");
    let id = serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()["id"].as_u64().unwrap();
    assert_eq!(cli.json(&["get", "alice", &id.to_string()])["content"], "written while a server started");
    server.stop();
}
