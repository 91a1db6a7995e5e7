"""Threads: shared handles, and the GIL released while the engine works."""

import threading
import time

import pytest

import cheesedb

WRITERS = 4
WRITES_PER_WRITER = 40


def write_from_threads(handles):
    """Each of WRITERS threads writes WRITES_PER_WRITER lots and memories through one of
    `handles` in turn; returns {id: content} of everything written."""
    written = {}
    lock = threading.Lock()
    errors = []

    def writer(number):
        handle = handles[number % len(handles)]
        try:
            for index in range(WRITES_PER_WRITER):
                content = f"writer {number} write {index}"
                lot = handle.add_lot("note", content)
                memory = handle.remember(content + " learned", legs=[[lot]])
                with lock:
                    written[lot] = content.encode()
                    written[memory] = (content + " learned").encode()
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    return written


def check_all_readable(agent, written):
    assert len(written) == 2 * WRITERS * WRITES_PER_WRITER  # no id was handed out twice
    assert sorted(written) == list(range(1, len(written) + 1))
    for id, content in written.items():
        assert agent.get(id).content == content


def test_threads_writing_through_one_handle(alice):
    check_all_readable(alice, write_from_threads([alice]))


def test_threads_writing_through_two_handles(store):
    token = store.create_agent("alice")
    handles = [store.open_agent(token), store.open_agent(token)]
    check_all_readable(handles[0], write_from_threads(handles))


def test_threads_writing_batches_and_single_writes(alice):
    ids = []
    lock = threading.Lock()

    def batches():
        for _ in range(10):
            with alice.batch() as batch:
                staged = [batch.add_lot("batch", "b") for _ in range(5)]
            with lock:
                ids.extend(staged)

    def singles():
        for _ in range(50):
            lot = alice.add_lot("single", "s")
            with lock:
                ids.append(lot)

    threads = [threading.Thread(target=target) for target in (batches, batches, singles, singles)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(ids) == list(range(1, 201))
    assert len(alice.list()) == 200


def longest_gap_while(call):
    """Runs `call` on a worker thread while this thread records time.monotonic() in a pure
    Python loop; returns (how long the call took, the longest gap in this thread's timeline)."""
    done = threading.Event()
    took = {}

    def worker():
        started = time.monotonic()
        try:
            call()
        finally:
            took["seconds"] = time.monotonic() - started
            done.set()

    thread = threading.Thread(target=worker)
    timeline = [time.monotonic()]
    thread.start()
    while not done.is_set():
        timeline.append(time.monotonic())
    thread.join()
    longest = max(later - earlier for earlier, later in zip(timeline, timeline[1:]))
    return took["seconds"], longest


@pytest.fixture
def big_batch_agent(alice):
    """An agent and a call that commits a 48 MB batch: long enough to see the GIL."""
    chunk = b"x" * (1024 * 1024)

    def commit_big_batch():
        with alice.batch() as batch:
            for _ in range(48):
                batch.add_lot("blob", chunk)

    return alice, commit_big_batch


def test_the_gil_is_released_during_a_big_batch_commit(big_batch_agent):
    _, commit_big_batch = big_batch_agent
    took, longest_gap = longest_gap_while(commit_big_batch)
    assert took > 0.05, f"the call took {took:.3f} s: too quick to tell"
    assert longest_gap < took / 4, f"a gap of {longest_gap:.3f} s during a call of {took:.3f} s"


def test_the_gil_is_released_during_verify_and_erase(big_batch_agent):
    alice, commit_big_batch = big_batch_agent
    commit_big_batch()
    took, longest_gap = longest_gap_while(alice.verify)
    assert longest_gap < max(took / 4, 0.02), f"verify: a gap of {longest_gap:.3f} s in {took:.3f} s"
    took, longest_gap = longest_gap_while(lambda: [alice.recall(id, erase=True) for id in range(1, 9)])
    assert longest_gap < max(took / 4, 0.02), f"erase: a gap of {longest_gap:.3f} s in {took:.3f} s"
