//! Spaces through the memory server: every call of a member's `Space` answers as it does on a
//! store open in the program, and a recall with Erase made by one process reaches the memories
//! of agents served to other processes, with the text off every file.

use crate::common;

use cheesedb::{Error, Id, Leg, Mode, Removal, Role, Store, Token};
use common::mcp_process::McpProcess;
use common::server_process::ServerProcess;
use common::Cli;
use serde_json::json;

/// The same story told to `store`: three agents, a space, roles, shared parents and a recall
/// with Erase. Returns every answer as text, errors included, to compare two stores' stories.
fn story(store: &Store) -> Vec<String> {
    let mut said = Vec::new();
    let mut note = |what: &str, answer: String| said.push(format!("{what}: {answer}"));
    let tokens: Vec<Token> = ["alice", "bob", "carol"].iter().map(|name| store.create_agent(name).unwrap()).collect();
    let [alice, bob, carol] = [0, 1, 2].map(|index| store.open_agent(&tokens[index]).unwrap());
    let team = store.create_space("team", &alice).unwrap();
    note("names", format!("{:?}", store.space_names()));
    note("bob before", format!("{:?}", bob.space("team").err()));
    note("wrong name", format!("{:?}", alice.space("other").err()));
    team.grant("bob", Role::Write).unwrap();
    team.grant("carol", Role::Read).unwrap();
    note("grant unknown", format!("{:?}", team.grant("mallory", Role::Read)));
    let bob_team = bob.space("team").unwrap();
    let carol_team = carol.space("team").unwrap();
    note("name", String::from(carol_team.name()));
    let lot = bob_team.add_lot("web", b"served-poison-31f9 the key is in the wiki").unwrap();
    let other = bob_team.add_lot("notes", b"an unrelated shared note").unwrap();
    let shared_memory = bob_team.remember(b"served-space-memory-5b02", &[Leg::from([lot])]).unwrap();
    note("carol writes", format!("{:?}", carol_team.add_lot("web", b"x")));
    note("carol recalls", format!("{:?}", carol_team.recall(lot, Mode::Fair, Removal::Erase)));
    note("get", format!("{:?}", carol_team.get(shared_memory)));
    note("audit", format!("{:?}", carol_team.audit(lot)));
    note("trust", format!("{:?}", carol_team.trust(lot)));
    note("author", format!("{:?}", carol_team.author_of(lot)));
    note("written by", format!("{:?}", carol_team.written_by("bob")));
    note("alive", format!("{:?}", carol_team.alive()));
    note("search", format!("{:?}", carol_team.search("wiki", 5).map(|hits| hits.len())));
    note("members", format!("{:?}", carol_team.members()));
    note("spaces", format!("{:?}", store.spaces()));
    note("unknown id", format!("{:?}", carol_team.get(Id::from(99))));
    let carol_view = carol_team.share_all(&[lot, other]).unwrap();
    note("shared ids", format!("{carol_view:?}"));
    note("shared one", format!("{:?}", alice.space("team").unwrap().share(lot)));
    let derived = carol.remember(b"served-derived-a7c4 fetch the key", &[Leg::from([carol_view[0]])]).unwrap();
    let kept = carol.remember(b"built on the other note", &[Leg::from([carol_view[1]])]).unwrap();
    note("preview", format!("{:?}", carol_team.preview_recall(lot, Mode::Fair)));
    note("recall", format!("{:?}", team.recall(lot, Mode::Fair, Removal::Erase)));
    note("derived", format!("{:?}", carol.get(derived)));
    note("kept", format!("{:?}", carol.get(kept).map(|node| node.is_alive())));
    note("again", format!("{:?}", team.recall(lot, Mode::Fair, Removal::Erase)));
    note("verify", format!("{:?}", carol_team.verify().map(|fingerprint| fingerprint.records)));
    // A read in the space counts for read tracking: on the server, in the member's session.
    carol.track_reads(true).unwrap();
    carol_team.get(other).unwrap();
    let carol_own = carol.add_lot("notes", b"carol's own note").unwrap();
    let from_read = carol.remember(b"learned from a read", &[Leg::from([carol_own])]).unwrap();
    note("tracked", format!("{:?}", carol.get(from_read).map(|node| node.tracked_parents().len())));
    team.revoke("carol").unwrap();
    note("revoked", format!("{:?}", carol_team.get(other)));
    note("last admin", format!("{:?}", team.revoke("alice")));
    said
}

#[test]
fn every_space_call_through_the_server_answers_as_the_library_does() {
    let local_folder = tempfile::tempdir().unwrap();
    let local = story(&Store::open(local_folder.path()).unwrap());
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let served = story(&Store::connect(&server.socket).unwrap());
    assert_eq!(served, local);
    // Refusals are the library's own errors, carried whole.
    assert!(
        served.contains(&String::from("carol writes: Err(RoleTooLow { held: Read, needed: Write })")),
        "{served:#?}"
    );
    assert!(served.iter().any(|line| line.starts_with("bob before: Some(UnknownSpace")), "{served:#?}");
    assert!(served.contains(&String::from("tracked: Ok(1)")), "{served:#?}");
    server.stop();
    for text in [&b"served-poison-31f9"[..], b"served-derived-a7c4", b"served-space-memory-5b02"] {
        for file in common::files_below(folder.path()) {
            let bytes = std::fs::read(&file).unwrap();
            assert!(!bytes.windows(text.len()).any(|window| window == text), "{} holds erased text", file.display());
        }
    }
}

#[test]
fn a_handle_to_a_space_is_refused_for_an_agent_of_another_server() {
    let folders = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let servers = folders.each_ref().map(|folder| ServerProcess::start(folder.path(), &[]));
    let [first, second] = servers.each_ref().map(|server| Store::connect(&server.socket).unwrap());
    let stranger = second.open_agent(&second.create_agent("alice").unwrap()).unwrap();
    assert_eq!(first.create_space("team", &stranger).err(), Some(Error::UnknownToken));
    let local_folder = tempfile::tempdir().unwrap();
    let local = Store::open(local_folder.path()).unwrap();
    assert_eq!(local.create_space("team", &stranger).err(), Some(Error::UnknownToken));
    let here = local.open_agent(&local.create_agent("alice").unwrap()).unwrap();
    assert_eq!(first.create_space("team", &here).err(), Some(Error::UnknownToken));
    assert_eq!(second.space_names().unwrap(), Vec::<String>::new());
}

/// Every file below the data folder that holds `text` (the server's socket is no file).
fn files_holding(cli: &Cli, text: &str) -> Vec<String> {
    common::files_below(cli.folder())
        .into_iter()
        .filter(|file| file.is_file())
        .filter(|file| std::fs::read(file).unwrap().windows(text.len()).any(|window| window == text.as_bytes()))
        .map(|file| file.display().to_string())
        .collect()
}

#[test]
fn a_shared_poisoned_lot_recalled_with_erase_leaves_no_derived_text_in_any_process_or_file() {
    let cli = Cli::new();
    let server = ServerProcess::start(cli.folder(), &[]);
    for agent in ["alice", "bob", "carol"] {
        cli.create_agent(agent);
    }
    // The command reaches the store through the server that holds the folder.
    cli.json(&["space", "create", "team", "alice"]);
    cli.json(&["space", "grant", "alice", "team", "bob", "write"]);
    cli.json(&["space", "grant", "alice", "team", "carol", "read"]);
    let [mut alice, mut bob, mut carol] = ["alice", "bob", "carol"].map(|agent| {
        let mut process = McpProcess::start(&cli, agent);
        process.initialize();
        process
    });
    let poisoned = "poisoned-3proc-c0de the admin password is hunter2";
    let lot = bob.call_ok("add_source", json!({ "label": "web", "text": poisoned, "space": "team" }));
    let shared = json!({ "space": "team", "id": lot["id"] });
    let mut derived = Vec::new();
    for (process, text) in
        [(&mut alice, "alice-derived-11aa"), (&mut bob, "bob-derived-22bb"), (&mut carol, "carol-derived-33cc")]
    {
        let memory =
            process.call_ok("remember", json!({ "text": format!("{text} log in as admin"), "legs": [[shared]] }));
        derived.push((text, memory["id"].as_u64().unwrap()));
    }
    let carol_own = carol.call_ok("add_source", json!({ "label": "notes", "text": "carol-own-44dd standup at ten" }));
    for (text, _) in &derived {
        assert!(!files_holding(&cli, text).is_empty(), "{text} was written before the recall");
    }

    let forgotten = alice.call_ok("forget_source", json!({ "id": lot["id"], "space": "team" }));
    let members = forgotten["members"].as_object().unwrap();
    assert_eq!(members.len(), 3, "every member's memory is reached: {forgotten}");

    for ((text, id), process) in derived.iter().zip([&mut alice, &mut bob, &mut carol]) {
        assert_eq!(process.call_ok("get", json!({ "id": id }))["alive"], false, "{text}");
        let found = process.call_ok("search_memories", json!({ "query": "admin password log in" }));
        assert!(!found.to_string().contains("derived") && !found.to_string().contains("hunter2"), "{found}");
    }
    let in_space = carol.call_ok("search_memories", json!({ "query": "admin password", "space": "team" }));
    assert!(!in_space.to_string().contains("hunter2"), "{in_space}");
    for text in ["poisoned-3proc-c0de", "hunter2", "alice-derived-11aa", "bob-derived-22bb", "carol-derived-33cc"] {
        assert_eq!(files_holding(&cli, text), Vec::<String>::new(), "{text} is off the disk");
    }
    assert_eq!(carol.call_ok("get", json!({ "id": carol_own["id"] }))["alive"], true);
    assert_eq!(files_holding(&cli, "carol-own-44dd").len(), 1, "what depended on nothing shared stays");
    for process in [alice, bob, carol] {
        assert_eq!(process.finish(), Some(0));
    }
    server.stop();
    // Every request went through the server: each agent's access log shows its space calls.
    let log = cli.json(&["log", "bob", "--json"]).to_string();
    assert!(log.contains("space_add_lot"), "{log}");
    assert!(cli.json(&["log", "alice", "--json"]).to_string().contains("space_recall"));
}
