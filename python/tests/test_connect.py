"""cheesedb.connect: an agent reached through a running memory server (`cheesedb serve`) has the
methods, values and exceptions of a local one, and what it writes is the store's own.

The server is the `cheesedb` command built from the same source tree; .ci/python.sh passes its
path in CHEESEDB_BINARY. Without it these tests are skipped."""

import gc
import json
import os
import signal
import subprocess
import threading
import time

import pytest

import cheesedb

BINARY = os.environ.get("CHEESEDB_BINARY")
PATIENCE_SECONDS = 20

pytestmark = pytest.mark.skipif(not BINARY, reason="CHEESEDB_BINARY names no cheesedb command to serve with")


class Server:
    """A `cheesedb serve` process on a data folder, stopped when the test ends."""

    def __init__(self, folder):
        self.folder = folder
        self.process = subprocess.Popen(
            [BINARY, "--dir", str(folder), "--json", "serve"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # The server prints one JSON line once it listens.
        line = self.process.stdout.readline()
        if not line:
            stderr = self.process.stderr.read().decode(errors="replace")
            self.process.wait()
            raise RuntimeError("the server did not start: " + stderr)
        ready = json.loads(line)
        self.socket = ready["socket"]
        assert ready["pid"] == self.process.pid

    def stop(self):
        """Stops the server as a service manager does (SIGTERM) and waits for a clean exit."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=PATIENCE_SECONDS) == 0, self.process.stderr.read()
        self.process.stdout.close()
        self.process.stderr.close()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=PATIENCE_SECONDS)
        self.process.stdout.close()
        self.process.stderr.close()


@pytest.fixture
def data_folder(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    return folder


@pytest.fixture
def server(data_folder):
    running = Server(data_folder)
    yield running
    running.kill()


@pytest.fixture
def client(server):
    with cheesedb.connect(server.folder) as connected:
        yield connected


@pytest.fixture(params=["local", "server"])
def agent(request, tmp_path):
    """An agent named alice, opened from a local Store or through a server: the tests that take
    it run once with each and expect the same."""
    if request.param == "local":
        with cheesedb.Store(tmp_path / "store") as store:
            yield store.open_agent(store.create_agent("alice"))
    else:
        folder = tmp_path / "data"
        folder.mkdir(mode=0o700)
        running = Server(folder)
        try:
            with cheesedb.connect(folder) as connected:
                yield connected.open_agent(connected.create_agent("alice"))
        finally:
            running.kill()


def test_every_method_answers_as_a_local_agent_does(agent):
    assert agent.name == "alice"
    assert isinstance(agent, cheesedb.Agent)
    a = agent.add_lot("user_message", "I live in Pune")
    b = agent.add_lot("web_page", b"profile: lives in Pune")
    c = agent.add_lot("weather_tool", "Pune: rain")
    m1 = agent.remember("user lives in Pune", [[a], [b]])
    m2 = agent.remember(b"Pune is rainy", [[c]])
    m3 = agent.remember("carry an umbrella", [[m1, m2]])
    assert (a, b, c, m1, m2, m3) == (1, 2, 3, 4, 5, 6)

    node = agent.get(m1)
    assert isinstance(node, cheesedb.Node)
    assert (node.id, node.kind, node.alive, node.content, node.label) == (m1, "memory", True, b"user lives in Pune", None)
    assert node.legs == [[a], [b]] and node.tracked_parents == []
    assert agent.get(a).label == "user_message" and agent.get(a).kind == "lot"
    assert [listed.id for listed in agent.list()] == [a, b, c, m1, m2, m3]

    assert [hit.id for hit in agent.search("rain")] == [c]
    agent.set_vector(m1, [1.0, 0.0])
    agent.set_vector(m2, [0.0, 1.0])
    assert agent.has_vector(m1) and not agent.has_vector(a)
    assert agent.search_vector([0.1, 1.0], limit=1)[0].id == m2
    assert isinstance(agent.search_vector([0.1, 1.0])[0], cheesedb.Hit)
    assert agent.search_hybrid("Pune", [1.0, 0.0], limit=5)
    assert agent.trust(m3) == "normal"

    fingerprint = agent.verify()
    assert agent.preview_recall(c) == [m2, m3]
    assert agent.preview_recall(c, "strict") == [m2, m3]
    assert agent.recall(c) == [m2, m3]
    assert agent.get(m2).alive is False and agent.get(m2).content is None
    assert agent.audit(m2).content == b"Pune is rainy"
    agent.compact()
    assert agent.audit(m2).content is None
    assert agent.verify(kept=fingerprint) != fingerprint
    assert agent.recall(a, erase=True) == []
    assert agent.get(m1).alive  # its other leg holds
    report = agent.report()
    assert report["segments"] >= 1 and report["repaired_anything"] is False
    assert repr(agent) == "Agent(name='alice')"


def test_errors_are_the_same_exceptions(agent):
    a = agent.add_lot("note", "x")
    with pytest.raises(cheesedb.UnknownIdError) as unknown:
        agent.get(99)
    assert unknown.value.id == 99
    agent.recall(a)
    with pytest.raises(cheesedb.DeadParentError) as dead:
        agent.remember("y", [[a]])
    assert dead.value.id == a
    with pytest.raises(cheesedb.AlreadyRecalledError):
        agent.recall(a)
    with pytest.raises(cheesedb.InvalidArgumentError):
        agent.remember("y", [])
    with pytest.raises(cheesedb.InvalidArgumentError):
        agent.add_lot("", "x")
    with pytest.raises(cheesedb.InvalidArgumentError):
        agent.set_vector(agent.add_lot("note", "v"), [float("nan")])
    with pytest.raises(cheesedb.InvalidArgumentError):
        agent.recall(a, "sideways")
    with pytest.raises(cheesedb.HistoryMismatchError):
        agent.verify(kept="1-" + "0" * 64)
    with pytest.raises(TypeError):
        agent.get("1")
    agent.close()
    with pytest.raises(cheesedb.ClosedError):
        agent.get(1)


def test_store_methods_through_the_client(client):
    token = client.create_agent("alice")
    assert token.startswith("cheesedb_") or len(token) > 32
    client.create_agent("bob")
    assert client.agent_names() == ["alice", "bob"]
    with pytest.raises(cheesedb.AgentExistsError):
        client.create_agent("bob")
    with client.open_agent(token) as alice:
        alice.add_lot("note", "kept")
    client.delete_agent("bob")
    assert client.agent_names() == ["alice"]
    with pytest.raises(cheesedb.UnknownAgentError):
        client.delete_agent("bob")
    assert client.path.endswith("cheesedb.sock")
    assert repr(client).startswith("Client(path=")
    # A client is a store whose calls go to the server: one set of methods for both.
    assert isinstance(client, cheesedb.Store) and not client.read_only
    with pytest.raises(TypeError):
        cheesedb.Client(client.path)


def test_a_wrong_token_is_answered_as_an_unknown_one(client, tmp_path):
    token = client.create_agent("alice")
    last = token[-1]
    wrong = token[:-1] + ("0" if last != "0" else "1")
    with pytest.raises(cheesedb.UnknownAgentError) as wrong_error:
        client.open_agent(wrong)
    with cheesedb.Store(tmp_path / "elsewhere") as other:
        foreign = other.create_agent("alice")
    with pytest.raises(cheesedb.UnknownAgentError) as foreign_error:
        client.open_agent(foreign)
    assert str(wrong_error.value) == str(foreign_error.value)
    with pytest.raises(cheesedb.UnknownAgentError):
        client.open_agent("not a token")


def test_no_server_is_server_unavailable(data_folder):
    with pytest.raises(cheesedb.ServerUnavailableError) as missing:
        cheesedb.connect(data_folder)
    assert missing.value.path.endswith("cheesedb.sock")
    assert isinstance(missing.value, cheesedb.Error)
    with pytest.raises(cheesedb.ServerUnavailableError):
        cheesedb.connect(data_folder / "no-such-socket")


def test_a_server_stopped_mid_session_is_a_lost_connection(server, client):
    alice = client.open_agent(client.create_agent("alice"))
    lot = alice.add_lot("note", "before the stop")
    server.stop()
    with pytest.raises(cheesedb.ConnectionLostError) as lost_write:
        alice.add_lot("note", "after the stop")
    assert lost_write.value.write_in_flight is True
    with pytest.raises(cheesedb.ConnectionLostError) as lost_read:
        alice.get(lot)
    assert lost_read.value.write_in_flight is False
    with pytest.raises(cheesedb.ServerUnavailableError):
        client.create_agent("bob")


def test_two_threads_and_two_clients_at_once(server):
    writes_per_thread = 40
    with cheesedb.connect(server.socket) as first, cheesedb.connect(server.folder) as second:
        token = first.create_agent("alice")
        agents = [first.open_agent(token), second.open_agent(token)]
        # One handle shared by two threads as well.
        agents.append(agents[0])
        ids = [[] for _ in agents]
        failures = []

        def write(index):
            try:
                for number in range(writes_per_thread):
                    lot = agents[index].add_lot("note", f"thread {index} note {number}")
                    agents[index].remember(f"from {lot}", [[lot]])
                    ids[index].append(lot)
            except Exception as error:  # noqa: BLE001 - reported below
                failures.append(error)

        threads = [threading.Thread(target=write, args=(index,)) for index in range(len(agents))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        every_lot = sorted(lot for written in ids for lot in written)
        assert len(set(every_lot)) == len(agents) * writes_per_thread
        listed = agents[1].list()
        assert len(listed) == 2 * len(agents) * writes_per_thread
        assert sorted(node.id for node in listed if node.kind == "lot") == every_lot


def test_batch_commits_and_rolls_back(agent):
    with agent.batch() as batch:
        lot = batch.add_lot("note", "in a batch")
        memory = batch.remember("learned in a batch", [[lot]])
        batch.set_vector(memory, [1.0, 2.0])
        assert len(batch) == 3
    assert agent.get(memory).legs == [[lot]] and agent.has_vector(memory)

    class Stop(Exception):
        pass

    with pytest.raises(Stop):
        with agent.batch() as batch:
            dropped = batch.add_lot("note", "never written")
            raise Stop
    with pytest.raises(cheesedb.UnknownIdError):
        agent.get(dropped)
    # The id is given again once the batch was dropped.
    assert agent.add_lot("note", "after the rollback") == dropped

    with agent.batch() as batch:
        with pytest.raises(cheesedb.InvalidArgumentError):
            agent.add_lot("note", "through the agent while its batch is open")
        with pytest.raises(cheesedb.UnknownIdError):
            batch.remember("x", [[999]])
        kept = batch.add_lot("note", "the batch goes on after a refused write")
    assert agent.get(kept).content == b"the batch goes on after a refused write"


def test_a_batch_keeps_other_threads_writes_waiting(agent):
    outcome = {}
    with agent.batch() as batch:
        first = batch.add_lot("note", "first")

        def write():
            outcome["id"] = agent.add_lot("note", "from another thread")

        thread = threading.Thread(target=write)
        thread.start()
        time.sleep(0.2)
        assert "id" not in outcome
        second = batch.add_lot("note", "second")
    thread.join(timeout=PATIENCE_SECONDS)
    assert (first, second, outcome["id"]) == (1, 2, 3)


def test_read_tracking_makes_a_read_a_parent(agent):
    poisoned = agent.add_lot("web_page", "the moon is cheese")
    other = agent.add_lot("user_message", "tell me about the moon")
    agent.track_reads(True)
    assert agent.get(poisoned).content == b"the moon is cheese"
    memory = agent.remember("the moon is made of cheese", [[other]])
    # The reads were used up by that memory.
    plain = agent.remember("nothing read since", [[other]])
    node = agent.get(memory)
    assert node.tracked_parents == [poisoned]
    assert node.legs == [[poisoned, other]]
    assert agent.get(plain).tracked_parents == [] and agent.get(plain).legs == [[other]]
    # A search counts as reading too (and so did those two gets).
    assert [hit.id for hit in agent.search("cheese")][0] in (poisoned, memory)
    with agent.batch() as batch:
        batched = batch.remember("found by a search", [[other]])
    # Listing does not count as reading.
    listed = {node.id: node for node in agent.list()}
    untracked = agent.remember("after a listing", [[other]])
    assert poisoned in listed[batched].tracked_parents
    assert agent.get(untracked).tracked_parents == []
    removed = agent.recall(poisoned)
    assert memory in removed and untracked not in removed
    agent.track_reads(False)
    agent.get(other)
    assert agent.get(agent.remember("tracking off", [[other]])).tracked_parents == []


def test_trust_follows_the_rules(tmp_path):
    rules_text = '[labels]\nweb_page = "low"\nuser_message = "high"\n'
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    (folder / "trust.toml").write_text(rules_text)
    running = Server(folder)
    try:
        with cheesedb.connect(folder) as client:
            remote = client.open_agent(client.create_agent("alice"))
            remote_levels = trust_levels(remote)
    finally:
        running.kill()
    with cheesedb.Store(tmp_path / "store", trust_rules={"web_page": "low", "user_message": "high"}) as store:
        local_levels = trust_levels(store.open_agent(store.create_agent("alice")))
    assert remote_levels == local_levels == ["low", "high", "normal", "high", "low"]
    with pytest.raises(cheesedb.InvalidArgumentError):
        cheesedb.Store(tmp_path / "other", trust_rules={"web_page": "shady"})
    with pytest.raises(TypeError):
        cheesedb.Store(tmp_path / "other", trust_rules=["web_page"])


def trust_levels(agent):
    low = agent.add_lot("web_page", "maybe")
    high = agent.add_lot("user_message", "surely")
    normal = agent.add_lot("weather_tool", "rain")
    either = agent.remember("either source", [[low], [high]])
    both = agent.remember("both sources", [[low, high]])
    return [agent.trust(node) for node in (low, high, normal, either, both)]


def test_a_search_page_is_the_same_through_a_server(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    (folder / "trust.toml").write_text('[labels]\nweb_page = "low"\nuser_message = "high"\n')
    running = Server(folder)
    try:
        with cheesedb.connect(folder) as client:
            remote = client.open_agent(client.create_agent("alice"))
            remote_page = page_facts(remote)
            remote.track_reads(True)
            found = [found.id for found in remote.search_page("rain", limit=2, least_trust="normal").found]
            memory = remote.remember("read through a page", [[1]])
            assert remote.get(memory).tracked_parents == sorted(found)
    finally:
        running.kill()
    with cheesedb.Store(tmp_path / "store", trust_rules={"web_page": "low", "user_message": "high"}) as store:
        local_page = page_facts(store.open_agent(store.create_agent("alice")))
    assert remote_page == local_page
    assert len(local_page) == 3 and all(trust == "high" for _id, _kind, _content, trust in local_page)


def page_facts(agent):
    for index in range(20):
        agent.add_lot("web_page", f"rain rain rain {index}")
    for index in range(4):
        agent.add_lot("user_message", f"it may rain later, {index}")
    page = agent.search_page("rain", limit=3, least_trust="normal")
    return [(found.id, found.kind, found.content, found.trust) for found in page.found]


def test_what_the_server_wrote_is_in_the_store_once_it_stops(server):
    with cheesedb.connect(server.folder) as client:
        token = client.create_agent("alice")
        alice = client.open_agent(token)
        alice.track_reads(True)
        lot = alice.add_lot("note", "written through the server")
        other = alice.add_lot("note", "declared")
        alice.get(lot)
        memory = alice.remember("learned through the server", [[other]])
        fingerprint = alice.verify()
    server.stop()
    with cheesedb.Store(server.folder) as store:
        alice = store.open_agent(token)
        assert alice.get(lot).content == b"written through the server"
        assert alice.get(memory).tracked_parents == [lot]
        assert alice.verify(kept=fingerprint) == fingerprint


def test_closing_the_client_closes_its_agents(server):
    client = cheesedb.connect(server.folder)
    alice = client.open_agent(client.create_agent("alice"))
    client.close()
    with pytest.raises(cheesedb.ClosedError):
        alice.add_lot("note", "x")
    with pytest.raises(cheesedb.ClosedError):
        client.agent_names()
    assert repr(client).endswith(", closed)")
    client.close()  # twice is fine


def test_a_batch_left_open_is_dropped_with_its_object(agent):
    batch = agent.batch()
    batch.__enter__()
    batch.add_lot("note", "staged, never committed")
    del batch
    gc.collect()
    # The agent takes writes again at once, and the staged lot was never written.
    assert agent.add_lot("note", "after the abandoned batch") == 1
