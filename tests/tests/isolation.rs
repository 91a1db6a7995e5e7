//! Agents are reached only through their own token, and their names never become paths, on
//! every backend.

use cheesedb::{Error, Id, Leg, Options, Token};
use cheesedb_tests::backend::Backend;

fn a_handle_reaches_only_its_own_agent<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
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

fn a_wrong_or_malformed_token_opens_nothing<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let forged = Token::from_bytes([7; 32]);
    assert_eq!(store.open_agent(&forged).unwrap_err(), Error::UnknownToken);
    assert_eq!("cheesedb-nothex".parse::<Token>(), Err(Error::MalformedToken));
    let printed = token.to_string();
    assert_eq!(printed.parse::<Token>().unwrap(), token);
    assert!(!format!("{token:?}").contains(&printed[9..]), "Debug must not print the secret");
}

fn tokens_are_not_stored_in_the_folder<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    assert!(place.files_containing(token.as_bytes()).is_empty());
    assert!(place.files_containing(token.to_string().as_bytes()).is_empty());
}

fn agent_names_are_any_text_and_never_a_path<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let names = ["../../escape", "/etc/passwd", "ünïcødé 🧀", "a\0b", "."];
    for name in names {
        let agent = store.open_agent(&store.create_agent(name).unwrap()).unwrap();
        agent.add_lot("label", name.as_bytes()).unwrap();
    }
    assert_eq!(store.agent_names().unwrap().len(), 5);
    for (path, _) in place.files() {
        assert!(path.split('/').all(|part| !part.is_empty() && part != "." && part != ".."), "{path:?}");
        assert!(!path.contains("escape") && !path.contains("passwd") && !path.contains('🧀'), "{path:?}");
    }
    assert_eq!(store.create_agent("."), Err(Error::AgentExists { name: ".".into() }));
    assert!(matches!(store.create_agent(""), Err(Error::InvalidName { .. })));
    assert!(matches!(store.create_agent(&"x".repeat(257)), Err(Error::LimitExceeded { .. })));
}

fn deleting_an_agent_removes_its_files_and_stops_its_handles<B: Backend>() {
    let place = B::new();
    let store = place.open(Options::default()).unwrap();
    let token = store.create_agent("alice").unwrap();
    let alice = store.open_agent(&token).unwrap();
    alice.add_lot("label", b"deleted-agent-canary").unwrap();
    store.delete_agent("alice").unwrap();
    assert_eq!(alice.add_lot("label", b"x"), Err(Error::AgentDeleted));
    assert_eq!(store.open_agent(&token).unwrap_err(), Error::UnknownToken);
    assert!(place.files_containing(b"deleted-agent-canary").is_empty());
    assert_eq!(store.delete_agent("alice"), Err(Error::UnknownAgent { name: "alice".into() }));
    // The name can be used again, by a new agent with a new token.
    let again = store.create_agent("alice").unwrap();
    assert_ne!(again, token);
    assert_eq!(store.open_agent(&again).unwrap().lots().unwrap(), Vec::<Id>::new());
}

cheesedb_tests::conformance!(
    a_handle_reaches_only_its_own_agent,
    a_wrong_or_malformed_token_opens_nothing,
    tokens_are_not_stored_in_the_folder,
    agent_names_are_any_text_and_never_a_path,
    deleting_an_agent_removes_its_files_and_stops_its_handles,
);
