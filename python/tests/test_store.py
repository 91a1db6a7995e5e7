"""Store: opening, agents, closing, reopening, read-only."""

import os

import pytest

import cheesedb


def test_a_store_creates_its_folder_private(store_path):
    with cheesedb.Store(store_path) as store:
        assert store.path == str(store_path)
        assert store.read_only is False
        assert os.stat(store_path).st_mode & 0o777 == 0o700


def test_a_path_may_be_a_str_or_a_path_object(tmp_path):
    with cheesedb.Store(str(tmp_path / "a")) as store:
        assert store.path == str(tmp_path / "a")
    with cheesedb.Store(tmp_path / "b") as store:
        assert store.path == str(tmp_path / "b")


def test_create_open_list_and_delete_agents(store):
    alice_token = store.create_agent("alice")
    bob_token = store.create_agent("bob")
    assert isinstance(alice_token, str) and alice_token.startswith("cheesedb-")
    assert alice_token != bob_token
    assert store.agent_names() == ["alice", "bob"]
    assert store.open_agent(alice_token).name == "alice"
    assert store.open_agent(bob_token).name == "bob"
    store.delete_agent("alice")
    assert store.agent_names() == ["bob"]
    with pytest.raises(cheesedb.UnknownAgentError):
        store.open_agent(alice_token)


def test_the_data_is_still_there_after_reopening(store_path):
    with cheesedb.Store(store_path) as store:
        token = store.create_agent("alice")
        alice = store.open_agent(token)
        lot = alice.add_lot("note", "kept")
        memory = alice.remember("learned", legs=[[lot]])
        fingerprint = alice.verify()
    with cheesedb.Store(store_path) as store:
        alice = store.open_agent(token)
        assert alice.get(lot).content == b"kept"
        assert alice.get(memory).legs == [[lot]]
        assert alice.verify() == fingerprint
        assert alice.verify(kept=fingerprint) == fingerprint
        assert alice.report()["records"] >= 0


def test_close_releases_the_folder_and_closes_the_agents(store_path):
    store = cheesedb.Store(store_path)
    alice = store.open_agent(store.create_agent("alice"))
    store.close()
    store.close()  # a second close does nothing
    with pytest.raises(cheesedb.ClosedError, match="store is closed"):
        store.agent_names()
    with pytest.raises(cheesedb.ClosedError, match="agent is closed"):
        alice.add_lot("note", "late")
    with pytest.raises(cheesedb.ClosedError):
        alice.get(1)
    # The folder lock went with the last handle: a new store opens.
    cheesedb.Store(store_path).close()


def test_every_call_on_a_closed_store_raises_closed_error(store_path):
    store = cheesedb.Store(store_path)
    token = store.create_agent("alice")
    store.close()
    for call in (
        lambda: store.create_agent("bob"),
        lambda: store.open_agent(token),
        lambda: store.delete_agent("alice"),
        lambda: store.agent_names(),
    ):
        with pytest.raises(cheesedb.ClosedError):
            call()
    assert "closed" in repr(store)


def test_the_context_manager_closes_even_when_the_block_raises(store_path):
    with pytest.raises(KeyError):
        with cheesedb.Store(store_path) as store:
            raise KeyError("boom")
    with pytest.raises(cheesedb.ClosedError):
        store.agent_names()
    cheesedb.Store(store_path).close()


def test_a_read_only_store_reads_and_refuses_writes(store_path):
    with cheesedb.Store(store_path) as store:
        token = store.create_agent("alice")
        lot = store.open_agent(token).add_lot("note", "hello")
    with cheesedb.Store(store_path, read_only=True) as reader:
        assert reader.read_only is True
        alice = reader.open_agent(token)
        assert alice.get(lot).content == b"hello"
        with pytest.raises(cheesedb.ReadOnlyError):
            reader.create_agent("bob")
        with pytest.raises(cheesedb.ReadOnlyError):
            alice.add_lot("note", "no")
        with pytest.raises(cheesedb.ReadOnlyError):
            alice.recall(lot)
        with pytest.raises(cheesedb.ReadOnlyError):
            with alice.batch() as batch:
                batch.add_lot("note", "no")


def test_read_only_is_keyword_only(store_path):
    with pytest.raises(TypeError):
        cheesedb.Store(store_path, True)


def test_repr_names_the_path(store):
    assert repr(store).startswith("Store(path='")
    assert "read_only=False" in repr(store)
