//! Spaces through the library: a member's handle bounded by its role, shared parents in the
//! members' own memories, and a recall in the space that reaches every member before it returns
//! (or, for a closed encrypted member, before its first answer).

use cheesedb::{Error, Leg, Mode, NodeKind, Removal, Role, Store};
use cheesedb_tests::files_containing;

const POISON: &[u8] = b"poison-71c2-the-deploy-key-is-in-the-wiki";
const BOB_DERIVED: &[u8] = b"bob-derived-0a9d-fetch-the-key-from-the-wiki";
const CAROL_DERIVED: &[u8] = b"carol-derived-5e13-the-wiki-holds-secrets";
const DAVE_DERIVED: &[u8] = b"dave-derived-93bb-rotate-the-wiki-key";
const BOB_OWN: &[u8] = b"bob-own-2277-standup-is-at-ten";

#[test]
fn an_erase_in_a_space_takes_every_member_s_derived_text_off_the_disk() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let bob = store.open_agent(&store.create_agent("bob").unwrap()).unwrap();
    let carol_token = store.create_agent("carol").unwrap();
    let dave_token = store.create_encrypted_agent("dave").unwrap();
    let team = store.create_space("team", &alice).unwrap();
    for (member, role) in [("bob", Role::Read), ("carol", Role::Write), ("dave", Role::Read)] {
        team.grant(member, role).unwrap();
    }
    let poisoned = team.add_lot("web", POISON).unwrap();
    assert_eq!(team.author_of(poisoned), Ok(String::from("alice")));

    // Bob stays open; Carol and Dave build on the lot and close.
    let bob_team = bob.space("team").unwrap();
    let shared = bob_team.share(poisoned).unwrap();
    let own = bob.add_lot("notes", BOB_OWN).unwrap();
    let bob_derived = bob.remember(BOB_DERIVED, &[Leg::from([shared])]).unwrap();
    let bob_either = bob.remember(b"either", &[Leg::from([shared]), Leg::from([own])]).unwrap();
    assert!(matches!(bob.get(shared).unwrap().kind, NodeKind::Shared { id, .. } if id == poisoned));
    let carol_derived = {
        let carol = store.open_agent(&carol_token).unwrap();
        let shared = carol.space("team").unwrap().share(poisoned).unwrap();
        let id = carol.remember(CAROL_DERIVED, &[Leg::from([shared])]).unwrap();
        carol.close().unwrap();
        id
    };
    let dave_derived = {
        let dave = store.open_agent(&dave_token).unwrap();
        let shared = dave.space("team").unwrap().share(poisoned).unwrap();
        let id = dave.remember(DAVE_DERIVED, &[Leg::from([shared])]).unwrap();
        dave.close().unwrap();
        id
    };
    drop(bob_team);

    let preview = team.preview_recall(poisoned, Mode::Fair).unwrap();
    assert_eq!(
        preview.in_members,
        vec![(String::from("bob"), vec![bob_derived]), (String::from("carol"), vec![carol_derived])],
        "a closed encrypted member cannot be looked into without its token"
    );
    let reached = team.recall(poisoned, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(reached.in_space, Vec::new());
    assert_eq!(reached.in_members, preview.in_members);
    for text in [POISON, BOB_DERIVED, CAROL_DERIVED] {
        assert_eq!(files_containing(folder.path(), text), Vec::<std::path::PathBuf>::new());
    }
    assert!(!bob.get(bob_derived).unwrap().is_alive());
    assert!(bob.get(bob_either).unwrap().is_alive(), "Fair: its own leg holds");
    assert_eq!(files_containing(folder.path(), BOB_OWN).len(), 1);

    // Dave's text was sealed, and his open applies the recall before it answers.
    let dave = store.open_agent(&dave_token).unwrap();
    let node = dave.get(dave_derived).unwrap();
    assert!(!node.is_alive());
    assert_eq!(node.content(), None);
    assert_eq!(dave.memories().unwrap(), Vec::new());
    let carol = store.open_agent(&carol_token).unwrap();
    assert!(!carol.get(carol_derived).unwrap().is_alive());
}

#[test]
fn a_non_member_a_revoked_member_and_a_wrong_name_get_one_answer() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let bob = store.open_agent(&store.create_agent("bob").unwrap()).unwrap();
    let carol = store.open_agent(&store.create_agent("carol").unwrap()).unwrap();
    let team = store.create_space("team", &alice).unwrap();
    team.grant("carol", Role::Write).unwrap();
    let carol_team = carol.space("team").unwrap();
    let lot = carol_team.add_lot("web", b"shared").unwrap();
    team.revoke("carol").unwrap();
    let unknown = |name: &str| Error::UnknownSpace { name: name.into() };
    assert_eq!(bob.space("team").map(|_| ()), Err(unknown("team")));
    assert_eq!(carol.space("team").map(|_| ()), Err(unknown("team")));
    assert_eq!(alice.space("other").map(|_| ()), Err(unknown("other")));
    assert_eq!(carol_team.get(lot).map(|_| ()), Err(unknown("team")), "an open handle loses the role too");
    assert_eq!(carol_team.share(lot).map(|_| ()), Err(unknown("team")));
    assert_eq!(team.written_by("carol"), Ok(vec![lot]));
    assert_eq!(team.members(), Ok(vec![(String::from("alice"), Role::Admin)]));
    assert_eq!(store.space_names(), Ok(vec![String::from("team")]));

    // A handle of another store never acts here, whatever its number.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = Store::open(elsewhere.path()).unwrap();
    let stranger = other.open_agent(&other.create_agent("mallory").unwrap()).unwrap();
    assert_eq!(store.create_space("mine", &stranger).map(|_| ()), Err(Error::UnknownToken));
}

#[test]
fn a_revoked_member_is_still_reached_and_its_reopen_keeps_the_recall() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let bob_token = store.create_agent("bob").unwrap();
    let team = store.create_space("team", &alice).unwrap();
    team.grant("bob", Role::Read).unwrap();
    let lot = team.add_lot("web", b"a source").unwrap();
    let memory = team.remember(b"a shared conclusion", &[Leg::from([lot])]).unwrap();
    let bob = store.open_agent(&bob_token).unwrap();
    let derived = bob.remember(b"bob's conclusion", &[Leg::from([bob.space("team").unwrap().share(memory).unwrap()])]);
    let derived = derived.unwrap();
    team.revoke("bob").unwrap();
    let reached = team.recall(lot, Mode::Strict, Removal::Untrusted).unwrap();
    assert_eq!(reached.in_space, vec![memory]);
    assert_eq!(reached.in_members, vec![(String::from("bob"), vec![derived])]);
    bob.close().unwrap();
    drop(team);
    drop(alice);
    drop(store);
    let store = Store::open(folder.path()).unwrap();
    let bob = store.open_agent(&bob_token).unwrap();
    assert!(!bob.get(derived).unwrap().is_alive());
    assert!(bob.verify().is_ok());
}

#[test]
fn a_refused_recall_in_a_space_changes_nothing_and_the_next_one_reaches_every_member() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let bob = store.open_agent(&store.create_agent("bob").unwrap()).unwrap();
    let team = store.create_space("team", &alice).unwrap();
    team.grant("bob", Role::Write).unwrap();
    let lot = team.add_lot("web", b"a source").unwrap();
    let memory = team.remember(b"a shared conclusion", &[Leg::from([lot])]).unwrap();
    let bobs_team = bob.space("team").unwrap();
    let derived = bob.remember(b"bob's conclusion", &[Leg::from([bobs_team.share(memory).unwrap()])]).unwrap();
    let refused = bobs_team.recall(lot, Mode::Fair, Removal::Untrusted);
    assert_eq!(refused.map(|_| ()), Err(Error::RoleTooLow { held: Role::Write, needed: Role::Admin }));
    assert!(bob.get(derived).unwrap().is_alive());
    let reached = team.recall(lot, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(reached.in_members, vec![(String::from("bob"), vec![derived])]);
    let again = team.recall(lot, Mode::Fair, Removal::Untrusted);
    assert_eq!(again.map(|_| ()), Err(Error::AlreadyRecalled { id: lot }));
}

#[test]
fn what_a_tracking_member_reads_in_a_space_is_a_parent_of_its_next_memory() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let bob = store.open_agent(&store.create_agent("bob").unwrap()).unwrap();
    let team = store.create_space("team", &alice).unwrap();
    team.grant("bob", Role::Read).unwrap();
    let poisoned = team.add_lot("web", POISON).unwrap();
    let searched = team.add_lot("web", b"the wiki moved to a new host").unwrap();
    let own = bob.add_lot("notes", BOB_OWN).unwrap();
    let bob_team = bob.space("team").unwrap();
    // Not tracking: reading writes nothing and counts nothing.
    bob_team.get(poisoned).unwrap();
    let untracked = bob.remember(b"before tracking", &[Leg::from([own])]).unwrap();
    assert!(bob.get(untracked).unwrap().tracked_parents().is_empty());

    bob.track_reads(true).unwrap();
    bob_team.get(poisoned).unwrap();
    let read = bob.remember(BOB_DERIVED, &[Leg::from([own])]).unwrap();
    let tracked = bob.get(read).unwrap().tracked_parents().to_vec();
    assert_eq!(tracked.len(), 1, "the read of the space's lot is a parent");
    assert!(matches!(bob.get(tracked[0]).unwrap().kind, NodeKind::Shared { id, .. } if id == poisoned));
    // Bob's own gets are reads too: start the search's count afresh.
    bob.track_reads(false).unwrap();
    bob.track_reads(true).unwrap();
    assert_eq!(bob_team.search("moved host", 5).unwrap().len(), 1);
    let from_search = bob.remember(b"from a search", &[Leg::from([own])]).unwrap();
    let tracked = bob.get(from_search).unwrap().tracked_parents().to_vec();
    let stands_for = |own: cheesedb::Id| match bob.get(own).unwrap().kind {
        NodeKind::Shared { id, .. } => Some(id),
        _ => None,
    };
    assert_eq!(tracked.iter().map(|own| stands_for(*own)).collect::<Vec<_>>(), [Some(searched)]);

    let reached = team.recall(poisoned, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(reached.in_members, vec![(String::from("bob"), vec![read])]);
    assert!(!bob.get(read).unwrap().is_alive());
    assert!(bob.get(untracked).unwrap().is_alive() && bob.get(from_search).unwrap().is_alive());
    assert!(files_containing(folder.path(), BOB_DERIVED).is_empty(), "erased with the read it rested on");
}

#[test]
fn members_writing_at_once_share_syncs_and_every_record_keeps_its_author() {
    const WRITERS: usize = 8;
    const WRITES: usize = 40;
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let admin_token = store.create_agent("admin").unwrap();
    let admin = store.open_agent(&admin_token).unwrap();
    let team = store.create_space("team", &admin).unwrap();
    let names: Vec<String> = (0..WRITERS).map(|writer| format!("writer-{writer}")).collect();
    let handles: Vec<_> = names
        .iter()
        .map(|name| {
            let agent = store.open_agent(&store.create_agent(name).unwrap()).unwrap();
            team.grant(name, Role::Write).unwrap();
            agent.space("team").unwrap()
        })
        .collect();
    std::thread::scope(|scope| {
        for (handle, name) in handles.iter().zip(&names) {
            scope.spawn(move || {
                for index in 0..WRITES {
                    let lot = handle.add_lot("note", format!("{name} note {index}").as_bytes()).unwrap();
                    handle.remember(format!("{name} memory {index}").as_bytes(), &[Leg::from([lot])]).unwrap();
                }
            });
        }
    });
    let check = |team: &cheesedb::Space| {
        for name in &names {
            let written = team.written_by(name).unwrap();
            assert_eq!(written.len(), 2 * WRITES, "{name}");
            for id in written {
                let text = String::from_utf8(team.get(id).unwrap().content().unwrap().to_vec()).unwrap();
                assert!(text.starts_with(&format!("{name} ")), "{id:?} by {name}: {text}");
            }
        }
    };
    check(&team);
    // The authors are in the records: reopened from the files, each write still names its member.
    drop((team, handles, admin, store));
    let store = Store::open(folder.path()).unwrap();
    check(&store.open_agent(&admin_token).unwrap().space("team").unwrap());
}

/// Every recall record in the store's logs, by the log it is in: `(agent, ids it recalls,
/// whether it is one of several)`.
fn recall_records(folder: &std::path::Path) -> Vec<(u64, Vec<u64>, bool)> {
    use cheesedb_core::codec::record::{self, Body};
    use cheesedb_core::codec::segment_header::SEGMENT_HEADER_BYTES;
    let mut found = Vec::new();
    for path in cheesedb_tests::segment_files(folder) {
        let bytes = std::fs::read(path).unwrap();
        let mut position = SEGMENT_HEADER_BYTES;
        while let Some(Ok((decoded, length))) = bytes.get(position..).map(record::decode) {
            match decoded.body {
                Body::Recall { id, .. } => found.push((decoded.identity.agent, vec![id], false)),
                Body::RecallAll { ids, .. } => found.push((decoded.identity.agent, ids.iter().collect(), true)),
                _ => {}
            }
            position += length;
        }
    }
    found.sort();
    found
}

#[test]
fn a_member_s_part_of_a_recall_is_one_record_that_replays_to_the_same_memories() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    let alice = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    let team = store.create_space("team", &alice).unwrap();
    let lot = team.add_lot("web", b"the source").unwrap();
    let shared: Vec<_> = (0..50)
        .map(|index| team.remember(format!("shared {index}").as_bytes(), &[Leg::from([lot])]).unwrap())
        .collect();
    let mut members = Vec::new();
    for name in ["bob", "carol", "dave", "erin"] {
        let token = store.create_agent(name).unwrap();
        team.grant(name, Role::Read).unwrap();
        let member = store.open_agent(&token).unwrap();
        let stand_ins = member.space("team").unwrap().share_all(&shared).unwrap();
        let own = member.add_lot("notes", b"its own").unwrap();
        // One on a shared node alone dies; one with a leg of its own stays (Fair).
        let dies = member.remember(b"on a shared one", &[Leg::from([stand_ins[3]])]).unwrap();
        let stays = member.remember(b"either", &[Leg::from([stand_ins[4]]), Leg::from([own])]).unwrap();
        members.push((name, token, member, dies, stays));
    }
    // Carol is closed during the recall: it opens her to apply it.
    let (_, _, carol, ..) = members.remove(1);
    carol.close().unwrap();
    let reached = team.recall(lot, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(reached.in_space, shared);
    assert_eq!(reached.in_members.len(), 4, "every member, the closed one too: {reached:?}");
    for (_, removed) in &reached.in_members {
        assert_eq!(removed.len(), 1, "only the memory resting on a shared node alone dies");
    }

    let records = recall_records(folder.path());
    let singles: Vec<_> = records.iter().filter(|(_, _, several)| !several).collect();
    let several: Vec<_> = records.iter().filter(|(_, _, several)| *several).collect();
    assert_eq!(singles.len(), 1, "the space's own recall of the lot: {records:?}");
    assert_eq!(several.len(), 4, "one record for each member's 50 shared nodes: {records:?}");
    assert!(several.iter().all(|(_, ids, _)| ids.len() == 50));

    // Reopened, each member replays its record to the same memories.
    let expected: Vec<_> = members.iter().map(|(_, _, member, ..)| member.memories().unwrap()).collect();
    let tokens: Vec<_> =
        members.iter().map(|(name, token, _, dies, stays)| (*name, token.clone(), *dies, *stays)).collect();
    drop(members);
    drop(team);
    drop(alice);
    drop(store);
    let store = Store::open(folder.path()).unwrap();
    for ((name, token, dies, stays), memories) in tokens.into_iter().zip(expected) {
        let member = store.open_agent(&token).unwrap();
        assert_eq!(member.memories().unwrap(), memories, "{name}");
        assert!(!member.get(dies).unwrap().is_alive() && member.get(stays).unwrap().is_alive(), "{name}");
        assert!(member.verify().is_ok(), "{name}");
    }
}
