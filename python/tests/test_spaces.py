"""Spaces from Python: a member's handle bounded by its role, a private memory built on a
space's node through share(), and a recall in the space that removes, and with erase=True takes
off the disk, what every member built on it."""

import pytest

import cheesedb
from test_encrypted import files_containing

POISON = b"poison-91aa-the-deploy-key-is-in-the-wiki"
DERIVED = b"derived-3f07-fetch-the-key-from-the-wiki"


def test_a_recall_with_erase_in_a_space_reaches_what_a_member_built_on_it(store, store_path):
    alice = store.open_agent(store.create_agent("alice"))
    bob = store.open_agent(store.create_agent("bob"))
    team = store.create_space("team", alice)
    assert store.space_names() == ["team"]
    team.grant("bob", "read")
    assert team.members() == [("alice", "admin"), ("bob", "read")]
    poisoned = team.add_lot("web", POISON)
    assert team.author_of(poisoned) == "alice"
    shared = bob.space("team").share(poisoned)
    assert bob.get(shared).kind == "shared"
    derived = bob.remember(DERIVED, [[shared]])
    assert team.preview_recall(poisoned) == {"space": [], "members": {"bob": [derived]}}
    assert team.recall(poisoned, erase=True) == {"space": [], "members": {"bob": [derived]}}
    assert not bob.get(derived).alive
    assert files_containing(store_path, POISON) == []
    assert files_containing(store_path, DERIVED) == []


def test_roles_bound_each_call_and_a_stranger_learns_nothing(store):
    alice = store.open_agent(store.create_agent("alice"))
    bob = store.open_agent(store.create_agent("bob"))
    carol = store.open_agent(store.create_agent("carol"))
    team = store.create_space("team", alice)
    team.grant("bob", "read")
    with pytest.raises(cheesedb.RoleTooLowError) as too_low:
        bob.space("team").add_lot("web", "x")
    assert (too_low.value.held, too_low.value.needed) == ("read", "write")
    with pytest.raises(cheesedb.UnknownSpaceError) as unknown:
        carol.space("team")
    assert unknown.value.name == "team"
    with pytest.raises(cheesedb.UnknownSpaceError):
        alice.space("other")
    with pytest.raises(cheesedb.SpaceExistsError):
        store.create_space("team", alice)
    with pytest.raises(cheesedb.LastAdminError):
        team.revoke("alice")
    with pytest.raises(cheesedb.InvalidArgumentError):
        team.grant("bob", "owner")
    bob_team = bob.space("team")
    team.revoke("bob")
    with pytest.raises(cheesedb.UnknownSpaceError):
        bob_team.list()
