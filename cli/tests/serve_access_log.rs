//! Every request the server serves is in the agent's access log, with the client's pid and uid
//! from the socket's peer credentials, the operation and the ids; never the content.

use crate::common;

use cheesedb::{Id, Leg, Mode, Removal};
use common::server_process::ServerProcess;
use common::Cli;

#[test]
fn each_request_is_logged_with_the_peer_and_without_content() {
    let cli = Cli::new();
    let server = ServerProcess::start(cli.folder(), &[]);
    let client = server.client();
    let alice = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();
    let lot = alice.add_lot("web_page", b"a secret text").unwrap();
    let memory = alice.remember(b"another secret", &[Leg::from([lot])]).unwrap();
    alice.get(memory).unwrap();
    assert!(alice.get(Id::from(42)).is_err());
    alice.recall(lot, Mode::Fair, Removal::Erase).unwrap();
    server.stop();

    let run = cli.run(&["log", "alice", "--json"]);
    let entries = run.json();
    let entries = entries.as_array().unwrap();
    let operations: Vec<&str> = entries.iter().map(|entry| entry["operation"].as_str().unwrap()).collect();
    assert_eq!(operations, ["create_agent", "open_agent", "add_lot", "remember", "get", "get", "recall"]);
    let me = u64::from(std::process::id());
    let uid = u64::from(rustix::process::getuid().as_raw());
    for entry in entries {
        assert_eq!(entry["pid"].as_u64(), Some(me), "{entry}");
        assert_eq!(entry["uid"].as_u64(), Some(uid), "{entry}");
    }
    assert_eq!(entries[3]["ids"], serde_json::json!([lot.get(), memory.get()]));
    assert_eq!(entries[5]["outcome"], "error: UnknownId");
    assert_eq!(entries[6]["ids"], serde_json::json!([lot.get(), memory.get()]));
    let everything = std::fs::read_dir(cli.folder().join("access"))
        .unwrap()
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect::<Vec<_>>()
        .concat();
    assert!(!String::from_utf8_lossy(&everything).contains("secret"), "content in the access log");
}

/// The names of the files in `cli`'s access folder.
fn access_files(cli: &Cli) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cli.folder().join("access"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn requests_without_a_token_neither_fill_a_log_nor_make_one() {
    let cli = Cli::new();
    let server = ServerProcess::start(cli.folder(), &[]);
    let client = server.client();
    let alice = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();
    let lot = alice.add_lot("web", b"a genuine request").unwrap();
    alice.get(lot).unwrap();
    // A peer without alice's token names her, and names agents that do not exist.
    let stranger = server.client();
    for index in 0..1_000 {
        stranger.is_encrypted("alice").unwrap();
        assert!(stranger.create_agent("alice").is_err());
        assert!(stranger.delete_agent(&format!("nobody-{index}")).is_err());
        assert!(stranger.is_encrypted(&format!("nobody-{index}")).is_err());
        assert!(stranger.open_agent(&cheesedb::Token::from_bytes([7; 32])).is_err());
    }
    // Created and deleted without a token: one entry each, as the store changed.
    stranger.create_agent("bob").unwrap();
    stranger.delete_agent("bob").unwrap();
    server.stop();

    let entries = cli.json(&["log", "alice"]);
    let operations: Vec<&str> =
        entries.as_array().unwrap().iter().map(|entry| entry["operation"].as_str().unwrap()).collect();
    assert_eq!(operations, ["create_agent", "open_agent", "add_lot", "get"], "only what alice's holder asked");
    let bob = cli.json(&["log", "bob"]);
    let operations: Vec<&str> =
        bob.as_array().unwrap().iter().map(|entry| entry["operation"].as_str().unwrap()).collect();
    assert_eq!(operations, ["create_agent", "delete_agent"]);
    assert_eq!(access_files(&cli), ["alice.1.log", "bob.1.log"], "no log for a name no agent has");
}

#[test]
fn a_damaged_log_is_left_and_the_server_goes_on_in_a_new_file_that_records_the_break() {
    let cli = Cli::new();
    let server = ServerProcess::start(cli.folder(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    client.open_agent(&token).unwrap().add_lot("web", b"before").unwrap();
    server.stop();
    let mut file = std::fs::OpenOptions::new().append(true).open(cli.folder().join("access/alice.1.log")).unwrap();
    std::io::Write::write_all(&mut file, b"garbage\n").unwrap();

    let server = ServerProcess::start(cli.folder(), &[]);
    let client = server.client();
    client.open_agent(&token).unwrap().add_lot("web", b"after").unwrap();
    let (_, stderr) = {
        server.signal(rustix::process::Signal::TERM);
        server.wait()
    };
    assert!(!stderr.contains("could not be written"), "{stderr}");

    assert_eq!(access_files(&cli), ["alice.1.log", "alice.2.log"]);
    let run = cli.run(&["--json", "log", "alice"]);
    assert_eq!(run.status, Some(3), "the break is reported: {}", run.stderr);
    assert!(run.stderr.contains("file 1 line 5 unreadable and went on in access/alice.2.log"), "{}", run.stderr);
    let entries: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let operations: Vec<&str> =
        entries.as_array().unwrap().iter().map(|entry| entry["operation"].as_str().unwrap()).collect();
    assert_eq!(operations, ["create_agent", "open_agent", "add_lot", "open_agent", "add_lot"], "nothing silenced");
}
