//! Agents are reached only through their own token, and one folder has one open store.

use std::process::Command;

use cheesedb::{Error, Id, Leg, Store, Token};

#[test]
fn a_handle_reaches_only_its_own_agent() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let bob = store.open_agent(&store.create_agent("bob").unwrap()).unwrap();
    let alice_lot = alice.add_lot("secret", b"alice's secret").unwrap();
    alice.add_lot("more", b"more").unwrap();
    let bob_lot = bob.add_lot("note", b"bob's note").unwrap();
    // Ids are per agent: bob's id 1 is bob's lot, and alice's id 2 does not exist for bob.
    assert_eq!(bob.get(bob_lot).unwrap().content(), Some(&b"bob's note"[..]));
    assert_eq!(bob.get(Id::from(2)).unwrap_err(), Error::UnknownId { id: Id::from(2) });
    assert_eq!(bob.remember(b"x", &[Leg::from([Id::from(2)])]), Err(Error::UnknownId { id: Id::from(2) }));
    assert_eq!(bob.lots().unwrap(), vec![bob_lot]);
    assert_eq!(alice.get(alice_lot).unwrap().content(), Some(&b"alice's secret"[..]));
}

#[test]
fn a_wrong_or_malformed_token_opens_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let forged = Token::from_bytes([7; 32]);
    assert_eq!(store.open_agent(&forged).unwrap_err(), Error::UnknownToken);
    assert_eq!("cheesedb-nothex".parse::<Token>(), Err(Error::MalformedToken));
    let printed = token.to_string();
    assert_eq!(printed.parse::<Token>().unwrap(), token);
    assert!(!format!("{token:?}").contains(&printed[9..]), "Debug must not print the secret");
}

#[test]
fn tokens_are_not_stored_in_the_folder() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let token = store.create_agent("alice").unwrap();
    assert!(cheesedb_tests::files_containing(folder.path(), token.as_bytes()).is_empty());
    assert!(cheesedb_tests::files_containing(folder.path(), token.to_string().as_bytes()).is_empty());
}

#[test]
fn agent_names_are_any_text_and_never_a_path() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    for name in ["../../escape", "/etc/passwd", "ünïcødé 🧀", "a\0b", "."] {
        let agent = store.open_agent(&store.create_agent(name).unwrap()).unwrap();
        agent.add_lot("label", name.as_bytes()).unwrap();
    }
    assert_eq!(store.agent_names().unwrap().len(), 5);
    for (path, _) in cheesedb_tests::all_files(folder.path()) {
        assert!(path.starts_with(folder.path()), "{path:?} is outside the store");
    }
    assert!(!folder.path().parent().unwrap().join("escape").exists());
    assert_eq!(store.create_agent("."), Err(Error::AgentExists { name: ".".into() }));
    assert!(matches!(store.create_agent(""), Err(Error::InvalidName { .. })));
    assert!(matches!(store.create_agent(&"x".repeat(257)), Err(Error::LimitExceeded { .. })));
}

#[test]
fn deleting_an_agent_removes_its_files_and_stops_its_handles() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    alice.add_lot("label", b"deleted-agent-canary").unwrap();
    store.delete_agent("alice").unwrap();
    assert_eq!(alice.add_lot("label", b"x"), Err(Error::AgentDeleted));
    assert_eq!(store.open_agent(&token).unwrap_err(), Error::UnknownToken);
    assert!(cheesedb_tests::files_containing(folder.path(), b"deleted-agent-canary").is_empty());
    assert_eq!(store.delete_agent("alice"), Err(Error::UnknownAgent { name: "alice".into() }));
    // The name can be used again, by a new agent with a new token.
    let again = store.create_agent("alice").unwrap();
    assert_ne!(again, token);
    assert_eq!(store.open_agent(&again).unwrap().lots().unwrap(), Vec::<Id>::new());
}

#[test]
fn a_second_open_in_this_process_is_locked() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(Store::open(folder.path()).unwrap_err(), Error::Locked);
    let agent = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    drop(store);
    // An agent handle keeps the store, and its lock, alive.
    assert_eq!(Store::open(folder.path()).unwrap_err(), Error::Locked);
    drop(agent);
    Store::open(folder.path()).unwrap();
}

const CHILD_FOLDER: &str = "CHEESEDB_TEST_LOCK_CHILD_FOLDER";

/// Run in a child process by the test below: tries to open the folder it is given.
#[test]
fn lock_child_process() {
    let Ok(folder) = std::env::var(CHILD_FOLDER) else { return };
    match Store::open(folder) {
        Err(Error::Locked) => std::process::exit(42),
        Ok(_) => std::process::exit(0),
        Err(_) => std::process::exit(1),
    }
}

#[test]
fn a_second_process_gets_locked_until_the_first_closes() {
    let folder = tempfile::tempdir().unwrap();
    let run_child = || {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "lock_child_process", "--nocapture"])
            .env(CHILD_FOLDER, folder.path())
            .status()
            .unwrap()
            .code()
    };
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(run_child(), Some(42), "the child must see Locked");
    drop(store);
    assert_eq!(run_child(), Some(0), "the child opens once the lock is released");
}
