"""Encrypted agents: create_agent(name, encrypted=True) works end to end with the same methods,
Agent.is_encrypted tells, Store.encrypt_agent converts a plaintext agent, and a canary written
to an encrypted agent appears in no file of the store, ever: after writes, a reopen, a
compaction and an Erase. Locally and through a memory server."""

import os
import time

import pytest

import cheesedb
from test_connect import BINARY, Server

CANARY = b"canary-4c1d-the-user-lives-in-Pune"
LABEL_CANARY = "label-canary-7e20"


def files_containing(folder, needle):
    """Every file below `folder` whose bytes hold `needle`."""
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as file:
                if needle in file.read():
                    found.append(os.path.relpath(path, folder))
    return found


def assert_nowhere(folder):
    assert files_containing(folder, CANARY) == []
    assert files_containing(folder, LABEL_CANARY.encode()) == []


def test_an_encrypted_agent_works_end_to_end_and_its_text_is_in_no_file(store_path):
    with cheesedb.Store(store_path) as store:
        token = store.create_agent("alice", encrypted=True)
        plain = store.open_agent(store.create_agent("bob"))
        assert not plain.is_encrypted
        alice = store.open_agent(token)
        assert alice.is_encrypted and alice.name == "alice"
        lot = alice.add_lot(LABEL_CANARY, CANARY)
        weather = alice.add_lot("weather_tool", "Pune: rain")
        memory = alice.remember(CANARY + b" derived", [[lot]])
        umbrella = alice.remember("carry an umbrella in the rain", [[weather]])
        with alice.batch() as batch:
            batched = batch.add_lot("batched", CANARY + b" in a batch")
        del batch  # a batch object holds its agent, and so the folder, while it lives
        alice.set_vector(memory, [1.0, 0.0])
        alice.set_vector(umbrella, [0.0, 1.0])
        assert alice.get(lot).label == LABEL_CANARY and alice.get(lot).content == CANARY
        assert sorted(hit.id for hit in alice.search("rain")) == [weather, umbrella]
        assert [hit.id for hit in alice.search_vector([1.0, 0.1], 1)] == [memory]
        fingerprint = alice.verify()
        assert_nowhere(store_path)
        alice.close()

    with cheesedb.Store(store_path) as store:
        alice = store.open_agent(token)
        assert alice.is_encrypted and alice.verify() == fingerprint
        assert alice.get(memory).content == CANARY + b" derived"
        assert alice.recall(batched, erase=False) == []
        alice.compact()
        assert_nowhere(store_path)
        assert alice.recall(lot, erase=True) == [memory]
        assert alice.get(lot).content is None and alice.audit(memory).content is None
        assert alice.get(umbrella).content == b"carry an umbrella in the rain"
        alice.verify()
        assert_nowhere(store_path)


def test_a_plaintext_agent_is_converted_in_place(store_path):
    with cheesedb.Store(store_path) as store:
        token = store.create_agent("alice")
        alice = store.open_agent(token)
        lot = alice.add_lot(LABEL_CANARY, CANARY)
        memory = alice.remember("the user lives in Pune", [[lot]])
        kept = alice.verify()
        assert files_containing(store_path, CANARY)
        with pytest.raises(cheesedb.AgentInUseError, match="alice") as raised:
            store.encrypt_agent(token)
        assert raised.value.name == "alice"
        alice.close()

        fingerprint = store.encrypt_agent(token)
        assert fingerprint != kept
        assert_nowhere(store_path)
        alice = store.open_agent(token)
        assert alice.is_encrypted and alice.verify() == fingerprint
        assert alice.get(lot).content == CANARY and alice.get(lot).label == LABEL_CANARY
        assert alice.get(memory).legs == [[lot]]
        alice.close()
        with pytest.raises(cheesedb.AlreadyEncryptedError) as raised:
            store.encrypt_agent(token)
        assert raised.value.name == "alice"
        with pytest.raises(cheesedb.UnknownAgentError):
            store.encrypt_agent("cheesedb-" + "0" * 64)


@pytest.mark.skipif(not BINARY, reason="CHEESEDB_BINARY names no cheesedb command to serve with")
def test_through_a_server_an_encrypted_agent_works_the_same(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    server = Server(folder)
    try:
        with cheesedb.connect(folder) as client:
            alice = client.open_agent(client.create_agent("alice", encrypted=True))
            assert alice.is_encrypted
            lot = alice.add_lot(LABEL_CANARY, CANARY)
            assert alice.get(lot).content == CANARY
            assert_nowhere(folder)

            token = client.create_agent("bob")
            bob = client.open_agent(token)
            assert not bob.is_encrypted
            bob.add_lot("note", CANARY)
            with pytest.raises(cheesedb.AgentInUseError):
                client.encrypt_agent(token)
            bob.close()
            fingerprint = encrypt_once_let_go(client, token)
            bob = client.open_agent(token)
            assert bob.is_encrypted and bob.verify() == fingerprint
            assert bob.get(1).content == CANARY
            assert_nowhere(folder)
    finally:
        server.kill()


def encrypt_once_let_go(client, token):
    """Encrypts the agent of `token`, waiting for the server to close the session of a handle
    just closed (it notices the closed connection a moment later)."""
    deadline = time.monotonic() + 5
    while True:
        try:
            return client.encrypt_agent(token)
        except cheesedb.AgentInUseError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
