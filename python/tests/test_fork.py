"""A process forked from the one that opened a store (os.fork, multiprocessing with the fork start
method, a web server's workers) holds copies of its Store, Agent, Batch and Client objects. Every
call through them in the child raises ForkedProcessError and writes or sends nothing; the parent's
store and connections go on as if the child had never been.

Each child reports back through a pipe or a queue and ends with os._exit, as a forked worker does.
A child that hangs is killed after PATIENCE_SECONDS and fails its test: that limit only turns a
hang into a failure, a passing test never waits for it."""

import gc
import json
import multiprocessing
import os
import select
import signal
import sys
import threading

import pytest

import cheesedb
from test_connect import BINARY, Server

PATIENCE_SECONDS = 60
# More than the 4 MiB of log after which the engine takes a snapshot when the last handle of an
# agent is closed or dropped: so a child that dropped its copies could be caught writing one.
SNAPSHOT_DUE_BYTES = 5 * 1024 * 1024


def attempt(call):
    """What `call()` did, as JSON: the ForkedProcessError's facts, another error, or a return."""
    try:
        call()
    except cheesedb.ForkedProcessError as error:
        assert isinstance(error, cheesedb.Error)
        assert "open the store" in str(error) and "\n" not in str(error)
        return ["ForkedProcessError", error.opening_process_id, error.current_process_id]
    except Exception as error:  # reported to the parent, which fails the test with it
        return [type(error).__name__, str(error)]
    return ["returned"]


def in_forked_child(action):
    """Forks; the child runs `action()` and sends back what it returns (a JSON value). Returns that
    and the child's process id."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(reader)
        try:
            payload = json.dumps({"result": action()})
        except BaseException as error:  # reported to the parent, which fails the test with it
            payload = json.dumps({"crash": repr(error)})
        with os.fdopen(writer, "w") as out:
            out.write(payload)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as incoming:
        ready, _, _ = select.select([incoming], [], [], PATIENCE_SECONDS)
        if not ready:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            pytest.fail("the forked child hung")
        payload = incoming.read()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    answer = json.loads(payload)
    assert "crash" not in answer, answer
    return answer["result"], child


def refused_in(child):
    """The outcome of `attempt` for a call that a child `child` of this process was refused."""
    return ["ForkedProcessError", os.getpid(), child]


def every_call(store, alice, lot):
    """A call of each kind a child might make through inherited objects, by name."""
    return {
        "add_lot": lambda: alice.add_lot("note", "the child's lot"),
        "remember": lambda: alice.remember("the child's memory", [[lot]]),
        "recall": lambda: alice.recall(lot, erase=True),
        "set_vector": lambda: alice.set_vector(lot, [1.0, 0.0]),
        "compact": alice.compact,
        "batch": lambda: batch_one_lot(alice),
        "get": lambda: alice.get(lot),
        "audit": lambda: alice.audit(lot),
        "list": alice.list,
        "search": lambda: alice.search("lot"),
        "trust": lambda: alice.trust(lot),
        "verify": alice.verify,
        "report": alice.report,
        "is_encrypted": lambda: alice.is_encrypted,
        "track_reads": lambda: alice.track_reads(True),
        "create_agent": lambda: store.create_agent("bob"),
        "agent_names": store.agent_names,
        "delete_agent": lambda: store.delete_agent("alice"),
        "close agent": alice.close,
        "close store": store.close,
    }


def batch_one_lot(agent):
    with agent.batch() as batch:
        batch.add_lot("note", "the child's batched lot")


def try_every_call(store, alice, lot):
    """In the child: every call, the closes last."""
    return {name: attempt(call) for name, call in every_call(store, alice, lot).items()}


def agent_folder(store_path):
    (folder,) = [entry for entry in store_path.iterdir() if entry.name.startswith("agent-")]
    return folder


def test_a_forked_child_is_refused_every_call_and_the_parent_keeps_its_store(store_path):
    store = cheesedb.Store(store_path)
    token = store.create_agent("alice")
    alice = store.open_agent(token)
    lot = alice.add_lot("note", "the parent's lot")
    alice.add_lot("bulk", b"x" * SNAPSHOT_DUE_BYTES)
    kept = alice.verify()

    def child():
        # The two closes let go of the child's copies: the snapshot that is due must not be
        # written by it.
        outcomes = try_every_call(store, alice, lot)
        gc.collect()
        return outcomes

    outcomes, child_pid = in_forked_child(child)
    assert outcomes == {name: refused_in(child_pid) for name in every_call(store, alice, lot)}
    assert not (agent_folder(store_path) / "snapshot").exists(), "the child wrote a snapshot"

    # The child took no id and wrote no record: the parent goes on where it was.
    assert alice.verify() == kept
    assert alice.add_lot("note", "the parent's next lot") == 3
    assert [node.id for node in alice.list()] == [1, 2, 3]
    assert store.agent_names() == ["alice"]
    store.close()
    assert (agent_folder(store_path) / "snapshot").exists(), "the snapshot was due: the parent wrote it"
    with cheesedb.Store(store_path) as reopened:
        again = reopened.open_agent(token)
        assert again.get(lot).content == b"the parent's lot"
        assert [node.content for node in again.list() if node.label == "note"] == [
            b"the parent's lot",
            b"the parent's next lot",
        ]
        assert again.verify(kept=kept)


def test_a_child_dropping_its_copies_writes_nothing(store_path):
    store = cheesedb.Store(store_path)
    alice = store.open_agent(store.create_agent("alice"))
    alice.add_lot("bulk", b"x" * SNAPSHOT_DUE_BYTES)
    files_before = sorted(path.name for path in agent_folder(store_path).iterdir())

    def child():
        nonlocal store, alice
        store = alice = None
        gc.collect()
        return "dropped"

    assert in_forked_child(child)[0] == "dropped"
    assert sorted(path.name for path in agent_folder(store_path).iterdir()) == files_before
    alice.close()
    store.close()


def test_concurrent_writes_of_parent_and_child_lose_nothing_of_the_parent(store_path):
    writes = 200
    store = cheesedb.Store(store_path)
    token = store.create_agent("alice")
    alice = store.open_agent(token)
    parent_ids = []
    started = threading.Event()

    def parent_writer():
        started.set()
        for index in range(writes):
            parent_ids.append(alice.add_lot("note", f"parent {index}"))

    writer = threading.Thread(target=parent_writer)
    writer.start()
    started.wait()

    def child():
        refused = [attempt(lambda index=index: alice.add_lot("note", f"child {index}")) for index in range(writes)]
        return [outcome[0] for outcome in refused]

    refusals, _ = in_forked_child(child)
    writer.join()
    assert refusals == ["ForkedProcessError"] * writes
    assert parent_ids == list(range(1, writes + 1))
    store.close()
    with cheesedb.Store(store_path) as reopened:
        again = reopened.open_agent(token)
        again.verify()
        assert [node.content for node in again.list()] == [f"parent {index}".encode() for index in range(writes)]


def test_a_child_never_waits_for_a_batch_or_a_write_of_a_parent_thread(store_path):
    # Only the forking thread lives on in a child: a batch another thread holds open, or a write
    # it has in flight, is never finished there, so the child must not wait for it.
    store = cheesedb.Store(store_path)
    token = store.create_agent("alice")
    alice = store.open_agent(token)
    lot = alice.add_lot("note", "the parent's lot")
    batch_open = threading.Event()
    may_commit = threading.Event()
    stop_writing = threading.Event()
    bob = store.open_agent(store.create_agent("bob"))

    def batch_holder():
        with alice.batch() as batch:
            batch.add_lot("note", "the parent's batched lot")
            batch_open.set()
            may_commit.wait()

    def busy_writer():
        while not stop_writing.is_set():
            bob.add_lot("note", "busy")

    threads = [threading.Thread(target=batch_holder), threading.Thread(target=busy_writer)]
    for thread in threads:
        thread.start()
    batch_open.wait()
    try:
        for _ in range(5):
            outcomes, child_pid = in_forked_child(
                lambda: [
                    attempt(lambda: alice.add_lot("note", "the child's lot")),
                    attempt(lambda: bob.add_lot("note", "the child's lot")),
                    attempt(lambda: bob.get(1)),
                    attempt(lambda: alice.get(lot)),
                    attempt(alice.close),
                    attempt(bob.close),
                ]
            )
            assert outcomes == [refused_in(child_pid)] * 6
    finally:
        may_commit.set()
        stop_writing.set()
        for thread in threads:
            thread.join()
    assert [node.content for node in alice.list()] == [b"the parent's lot", b"the parent's batched lot"]
    assert all(node.content == b"busy" for node in bob.list())
    store.close()


def child_target(store, alice, lot, results):
    """A multiprocessing target: it gets the parent's objects by fork, not by pickling."""
    results.put(try_every_call(store, alice, lot))


def test_multiprocessing_with_the_fork_start_method(store_path):
    context = multiprocessing.get_context("fork")
    store = cheesedb.Store(store_path)
    alice = store.open_agent(store.create_agent("alice"))
    lot = alice.add_lot("note", "the parent's lot")
    results = context.Queue()
    process = context.Process(target=child_target, args=(store, alice, lot, results))
    process.start()
    outcomes = results.get(timeout=PATIENCE_SECONDS)
    process.join(PATIENCE_SECONDS)
    assert process.exitcode == 0
    assert outcomes == {name: refused_in(process.pid) for name in every_call(store, alice, lot)}
    assert alice.add_lot("note", "the parent's next lot") == 2
    alice.verify()
    store.close()


# A pool's workers inherit what the module held when the pool was made, as a web server's do.
POOL_AGENT = None


def pool_worker_write(index):
    return attempt(lambda: POOL_AGENT.add_lot("note", f"worker {index}"))[0]


def test_a_pool_of_forked_workers(store_path, monkeypatch):
    context = multiprocessing.get_context("fork")
    with cheesedb.Store(store_path) as store:
        alice = store.open_agent(store.create_agent("alice"))
        monkeypatch.setattr(sys.modules[__name__], "POOL_AGENT", alice)
        with context.Pool(2) as pool:
            answers = pool.map(pool_worker_write, range(8), chunksize=1)
        assert answers == ["ForkedProcessError"] * 8
        assert alice.add_lot("note", "the parent's lot") == 1
        assert alice.list()[0].content == b"the parent's lot"


@pytest.mark.skipif(not BINARY, reason="CHEESEDB_BINARY names no cheesedb command to serve with")
def test_a_forked_child_sends_nothing_on_the_parent_s_connections(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    server = Server(folder)
    try:
        client = cheesedb.connect(folder)
        token = client.create_agent("alice")
        alice = client.open_agent(token)
        lot = alice.add_lot("note", "the parent's text")
        # A batch the parent has open on the server: a child dropping its copy must not drop it.
        batch = alice.batch()
        batch.__enter__()
        staged = batch.add_lot("note", "the parent's batched text")

        def child():
            nonlocal batch
            outcomes = {
                "get": attempt(lambda: alice.get(lot)),
                "add_lot": attempt(lambda: alice.add_lot("note", "the child's text")),
                "batch add_lot": attempt(lambda: batch.add_lot("note", "the child's batched text")),
                "batch len": attempt(lambda: len(batch)),
                "batch exit": attempt(lambda: batch.__exit__(None, None, None)),
                "new batch": attempt(lambda: batch_one_lot(alice)),
                "list": attempt(alice.list),
                "report": attempt(alice.report),
                "create_agent": attempt(lambda: client.create_agent("bob")),
                "agent_names": attempt(client.agent_names),
                "open_agent": attempt(lambda: client.open_agent(token)),
                "close agent": attempt(alice.close),
                "close client": attempt(client.close),
            }
            batch = None
            gc.collect()
            return outcomes

        outcomes, child_pid = in_forked_child(child)
        assert outcomes == {name: refused_in(child_pid) for name in outcomes}
        # Every answer on the parent's connections is still the parent's own.
        batch.__exit__(None, None, None)
        assert alice.get(lot).content == b"the parent's text"
        assert alice.get(staged).content == b"the parent's batched text"
        assert alice.add_lot("note", "the parent's next text") == staged + 1
        assert client.agent_names() == ["alice"]
        assert [node.content for node in alice.list()] == [
            b"the parent's text",
            b"the parent's batched text",
            b"the parent's next text",
        ]
        client.close()
    finally:
        server.kill()


@pytest.mark.skipif(not BINARY, reason="CHEESEDB_BINARY names no cheesedb command to serve with")
def test_a_child_connecting_on_its_own_is_served(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    server = Server(folder)
    try:
        with cheesedb.connect(folder) as client:
            token = client.create_agent("alice")

            def child():
                with cheesedb.connect(folder) as own:
                    return own.open_agent(token).add_lot("note", "the child's own connection")

            child_lot, _ = in_forked_child(child)
            assert client.open_agent(token).get(child_lot).content == b"the child's own connection"
    finally:
        server.kill()
