"""Batch: one commit at the end of the block, nothing on an exception, the agent's gate."""

import threading
import time

import pytest

import cheesedb


def test_a_batch_commits_at_the_end_of_the_block(alice):
    before = alice.add_lot("note", "before")
    with alice.batch() as batch:
        lot = batch.add_lot("tool", "result")
        memory = batch.remember("what the tool showed", legs=[[lot], [before]])
        assert (lot, memory) == (before + 1, before + 2)
        assert len(batch) == 2
        with pytest.raises(cheesedb.UnknownIdError):
            alice.get(lot)  # not written until the block ends; reads do not wait
    assert alice.get(lot).content == b"result"
    assert alice.get(memory).legs == [[lot], [before]]  # legs in the order given
    assert len(batch) == 0


def test_an_exception_in_the_block_writes_nothing(alice):
    first = alice.add_lot("note", "kept")
    fingerprint = alice.verify()
    with pytest.raises(RuntimeError, match="the tool failed"):
        with alice.batch() as batch:
            lot = batch.add_lot("tool", "half done")
            batch.remember("learned", legs=[[lot]])
            raise RuntimeError("the tool failed")
    assert alice.verify() == fingerprint
    with pytest.raises(cheesedb.UnknownIdError):
        alice.get(lot)
    # The ids handed out were never taken.
    assert alice.add_lot("note", "next") == first + 1 == lot


def test_a_refused_write_in_the_block_leaves_the_rest(alice):
    with alice.batch() as batch:
        lot = batch.add_lot("tool", "fine")
        with pytest.raises(cheesedb.InvalidArgumentError):
            batch.remember("no legs", legs=[])
        with pytest.raises(cheesedb.UnknownIdError):
            batch.remember("unknown parent", legs=[[999]])
        memory = batch.remember("fine too", legs=[[lot]])
    assert memory == lot + 1
    assert [node.id for node in alice.list()] == [lot, memory]


def test_a_batch_with_vectors(alice):
    old = alice.add_lot("note", "old")
    with alice.batch() as batch:
        new = batch.add_lot("note", "new")
        batch.set_vector(new, [1.0, 0.0])
        batch.set_vector(old, [0.0, 1.0])
        with pytest.raises(cheesedb.InvalidArgumentError):
            batch.set_vector(new, [float("nan"), 1.0])
    assert alice.has_vector(new) and alice.has_vector(old)
    assert [hit.id for hit in alice.search_vector([0.9, 0.1])] == [new, old]


def test_a_rolled_back_batch_leaves_no_vector(alice):
    lot = alice.add_lot("note", "x")
    with pytest.raises(KeyError):
        with alice.batch() as batch:
            batch.set_vector(lot, [1.0])
            raise KeyError
    assert alice.has_vector(lot) is False


def test_an_empty_batch_writes_nothing(alice):
    fingerprint = alice.verify()
    with alice.batch():
        pass
    assert alice.verify() == fingerprint


def test_a_batch_is_used_inside_its_block_only(alice):
    batch = alice.batch()
    with pytest.raises(cheesedb.InvalidArgumentError, match="not open"):
        batch.add_lot("note", "x")
    with batch:
        batch.add_lot("note", "x")
    with pytest.raises(cheesedb.ClosedError):
        batch.add_lot("note", "late")
    with pytest.raises(cheesedb.InvalidArgumentError, match="entered once"):
        with batch:
            pass
    assert repr(batch) == "Batch(ended)"


def test_a_write_through_the_agent_inside_its_batch_is_refused(alice):
    with alice.batch() as batch:
        batch.add_lot("note", "x")
        with pytest.raises(cheesedb.InvalidArgumentError, match="batch of this agent is open"):
            alice.add_lot("note", "would deadlock")
        with pytest.raises(cheesedb.InvalidArgumentError):
            with alice.batch():
                pass
        assert alice.search("x") == []  # reads go on
    assert len(alice.list()) == 1


def test_other_agents_are_not_held_by_a_batch(store, alice):
    bob = store.open_agent(store.create_agent("bob"))
    with alice.batch() as batch:
        batch.add_lot("note", "x")
        assert bob.add_lot("note", "y") == 1


def test_another_threads_write_waits_for_the_batch(store):
    token = store.create_agent("alice")
    alice = store.open_agent(token)
    other_handle = store.open_agent(token)
    batch_open = threading.Event()
    finished = {}

    def write_meanwhile(handle, key):
        batch_open.wait()
        finished[key] = (handle.add_lot("note", key), time.monotonic())

    writers = [
        threading.Thread(target=write_meanwhile, args=(alice, "same handle")),
        threading.Thread(target=write_meanwhile, args=(other_handle, "other handle")),
    ]
    for writer in writers:
        writer.start()
    with alice.batch() as batch:
        batch_open.set()
        time.sleep(0.3)  # the writers are blocked at the gate meanwhile, the GIL released
        assert finished == {}
        ids = [batch.add_lot("tool", f"staged {number}") for number in range(3)]
        ended = time.monotonic()
    for writer in writers:
        writer.join(10)
    assert ids == [1, 2, 3]
    assert sorted(id for id, _ in finished.values()) == [4, 5]
    assert all(at >= ended for _, at in finished.values())


def test_a_batch_ended_on_another_thread_lets_writers_go_on(alice):
    batch = alice.batch()
    batch.__enter__()
    batch.add_lot("note", "x")
    ender = threading.Thread(target=batch.__exit__, args=(None, None, None))
    ender.start()
    ender.join(10)
    assert alice.add_lot("note", "y") == 2


def test_a_batch_dropped_while_open_writes_nothing_and_frees_the_agent(alice):
    import gc

    batch = alice.batch()
    batch.__enter__()
    batch.add_lot("note", "never committed")
    del batch
    gc.collect()
    assert alice.add_lot("note", "y") == 1


def test_a_batch_survives_the_close_of_its_agent(alice):
    with alice.batch() as batch:
        lot = batch.add_lot("note", "x")
        alice.close()
    with pytest.raises(cheesedb.ClosedError):
        alice.get(lot)
