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
