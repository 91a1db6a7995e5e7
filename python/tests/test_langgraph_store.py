"""CheeseStore: versions, recall and Erase, remember, rebuild, embeddings, threads and errors."""

import asyncio
import hashlib
import threading
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import (  # noqa: E402
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

import cheesedb  # noqa: E402
from cheesedb.langgraph import (  # noqa: E402
    LOT_LABEL,
    CheeseItem,
    CheeseSearchItem,
    CheeseStore,
    Removed,
)

DOCS = ("docs",)
FACTS = ("facts",)
DIMENSIONS = 16


@pytest.fixture
def memory(alice):
    """A CheeseStore on a fresh agent."""
    return CheeseStore(alice)


def reopened(store_path, token, **options):
    """A new cheesedb Store on the same folder and a CheeseStore built from it."""
    store = cheesedb.Store(store_path)
    return store, CheeseStore(store.open_agent(token), **options)


def bytes_of_every_file(folder):
    """The content of every file under the folder, joined."""
    return b"".join(path.read_bytes() for path in Path(folder).rglob("*") if path.is_file())


def bag_of_words(texts):
    """A deterministic embedding: each word adds one to a slot chosen by its hash."""
    vectors = []
    for text in texts:
        vector = [0.0] * DIMENSIONS
        vector[0] = 0.1  # never all zeros, which cheesedb refuses
        for word in text.lower().split():
            slot = int(hashlib.sha256(word.encode()).hexdigest(), 16) % (DIMENSIONS - 1)
            vector[slot + 1] += 1.0
        vectors.append(vector)
    return vectors


class AgentSpy:
    """An agent that counts the calls made on it, passing every call through."""

    def __init__(self, agent):
        self.agent = agent
        self.calls = []

    def __getattr__(self, name):
        attribute = getattr(self.agent, name)
        if not callable(attribute):
            return attribute

        def counted(*arguments, **keywords):
            self.calls.append(name)
            return attribute(*arguments, **keywords)

        return counted


# Items and versions


def test_a_put_reads_back_as_an_item_with_its_cheesedb_id(memory, alice):
    memory.put(DOCS, "a", {"text": "hello", "n": 1})
    item = memory.get(DOCS, "a")
    assert isinstance(item, CheeseItem) and isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (DOCS, "a", {"text": "hello", "n": 1})
    node = alice.get(item.id)
    assert node.kind == "lot" and node.label == LOT_LABEL and node.alive
    assert item.dict()["id"] == item.id
    found = memory.search(DOCS)
    assert isinstance(found[0], CheeseSearchItem) and isinstance(found[0], SearchItem)
    assert found[0].id == item.id
    assert memory.get(DOCS, "missing") is None


def test_a_put_supersedes_and_keeps_the_older_version_as_history(memory, alice):
    memory.put(DOCS, "a", {"v": 1})
    first = memory.get(DOCS, "a")
    memory.put(DOCS, "a", {"v": 2})
    second = memory.get(DOCS, "a")
    assert second.value == {"v": 2} and second.id > first.id
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert alice.get(first.id).alive
    assert [item.value for item in memory.search(DOCS)] == [{"v": 2}]


def test_a_memory_learned_from_an_older_version_lives_until_the_key_is_deleted(memory, alice):
    memory.put(DOCS, "a", {"v": 1})
    learned = memory.remember(FACTS, "f", {"fact": "from v1"}, sources=[(DOCS, "a")])
    memory.put(DOCS, "a", {"v": 2})
    assert memory.get(FACTS, "f").value == {"fact": "from v1"}
    memory.delete(DOCS, "a")
    assert memory.get(DOCS, "a") is None
    assert memory.get(FACTS, "f") is None
    assert not alice.get(learned.id).alive
    assert memory.list_namespaces() == []


def test_a_key_whose_newest_version_is_recalled_shows_its_newest_alive_version(memory, alice):
    memory.put(DOCS, "city", {"city": "Mumbai"})
    message = alice.add_lot("user_message", "I moved to Pune")
    memory.remember(DOCS, "city", {"city": "Pune"}, sources=[message])
    assert memory.get(DOCS, "city").value == {"city": "Pune"}
    removed = alice.recall(message)
    assert len(removed) == 1
    # Agent-side recalls are seen at the next construction.
    assert CheeseStore(alice).get(DOCS, "city").value == {"city": "Mumbai"}


def test_values_read_now_match_values_read_after_a_reopen(store_path, store, alice):
    token = store.create_agent("bob")
    bob = CheeseStore(store.open_agent(token))
    bob.put(DOCS, "a", {"pair": (1, 2), "nested": {"x": [True, None, 1.5]}})
    before = bob.get(DOCS, "a").value
    store.close()
    reopened_store, again = reopened(store_path, token)
    with reopened_store:
        assert (
            again.get(DOCS, "a").value
            == before
            == {"pair": [1, 2], "nested": {"x": [True, None, 1.5]}}
        )


# remember and recall


def test_remember_with_one_leg_per_source_stays_while_any_source_stays(memory, alice):
    first = alice.add_lot("web", "lives in Pune")
    memory.put(DOCS, "profile", {"city": "Pune"})
    profile = memory.get(DOCS, "profile")
    learned = memory.remember(FACTS, "city", {"city": "Pune"}, sources=[first, profile])
    assert alice.get(learned.id).legs == [[first], [profile.id]]
    assert alice.recall(first) == []
    removed = memory.recall(DOCS, "profile")
    assert removed == [Removed(DOCS, "profile", profile.id), Removed(FACTS, "city", learned.id)]
    assert memory.get(FACTS, "city") is None


def test_remember_with_legs_needs_every_parent_of_a_leg(memory, alice):
    memory.put(DOCS, "a", {"v": "a"})
    memory.put(DOCS, "b", {"v": "b"})
    learned = memory.remember(FACTS, "ab", {"v": "both"}, legs=[[(DOCS, "a"), (DOCS, "b")]])
    assert alice.get(learned.id).legs == [[memory.get(DOCS, "a").id, memory.get(DOCS, "b").id]]
    removed = memory.recall(DOCS, "b", mode="strict")
    assert [(entry.namespace, entry.key) for entry in removed] == [(DOCS, "b"), (FACTS, "ab")]
    assert memory.get(DOCS, "a") is not None


def test_recall_names_memories_the_app_wrote_itself_without_a_key(memory, alice):
    memory.put(DOCS, "a", {"v": 1})
    item = memory.get(DOCS, "a")
    own = alice.remember("the app's own note", legs=[[item.id]])
    assert memory.recall(DOCS, "a") == [Removed(DOCS, "a", item.id), Removed(None, None, own)]
    assert memory.recall(DOCS, "a") == []


def test_a_newer_version_learned_from_an_older_one_goes_in_one_delete(memory, alice):
    memory.put(DOCS, "a", {"v": 1})
    memory.remember(DOCS, "a", {"v": 2}, sources=[(DOCS, "a")])
    removed = memory.recall(DOCS, "a")
    assert [entry.key for entry in removed] == ["a", "a"]
    assert memory.get(DOCS, "a") is None


def test_remember_refuses_what_cannot_be_a_parent(memory, alice):
    memory.put(DOCS, "a", {"v": 1})
    with pytest.raises(ValueError):
        memory.remember(FACTS, "f", {"v": 1})
    with pytest.raises(ValueError):
        memory.remember(FACTS, "f", {"v": 1}, sources=[(DOCS, "a")], legs=[[(DOCS, "a")]])
    with pytest.raises(ValueError):
        memory.remember(FACTS, "f", {"v": 1}, legs=[[]])
    with pytest.raises(KeyError):
        memory.remember(FACTS, "f", {"v": 1}, sources=[(DOCS, "missing")])
    with pytest.raises(TypeError):
        memory.remember(FACTS, "f", {"v": 1}, sources=[1.5])
    with pytest.raises(cheesedb.UnknownIdError):
        memory.remember(FACTS, "f", {"v": 1}, sources=[999])
    dead = alice.add_lot("note", "gone")
    alice.recall(dead)
    with pytest.raises(cheesedb.Error):
        memory.remember(FACTS, "f", {"v": 1}, sources=[dead])
    assert memory.get(FACTS, "f") is None


# Rebuild and batches


def test_the_state_is_rebuilt_from_the_agent_and_ignores_the_app_own_records(store_path, store):
    token = store.create_agent("bob")
    agent = store.open_agent(token)
    memory = CheeseStore(agent)
    memory.put(DOCS, "a", {"v": 1})
    memory.put(DOCS, "a", {"v": 2})
    memory.put(("x", "y"), "b", {"v": 3})
    memory.remember(FACTS, "f", {"v": 4}, sources=[(DOCS, "a")])
    agent.add_lot("note", '{"langgraph_item": 1, "namespace": ["z"], "key": "k"}')
    agent.add_lot(LOT_LABEL, "not json")
    agent.remember("plain text memory", legs=[[1]])
    store.close()
    reopened_store, again = reopened(store_path, token)
    with reopened_store:
        assert again.get(DOCS, "a").value == {"v": 2}
        assert again.get(FACTS, "f").value == {"v": 4}
        assert again.list_namespaces() == [DOCS, FACTS, ("x", "y")]
        assert len(again.search((), limit=100)) == 3


def test_the_puts_of_one_batch_are_one_cheesedb_batch(store_path, store):
    token = store.create_agent("bob")
    spy = AgentSpy(store.open_agent(token))
    memory = CheeseStore(spy)
    spy.calls.clear()
    results = memory.batch(
        [
            PutOp(DOCS, "a", {"v": 1}),
            GetOp(DOCS, "a"),
            PutOp(DOCS, "b", {"v": 2}),
            PutOp(FACTS, "c", {"v": 3}),
            ListNamespacesOp(),
        ]
    )
    assert results == [None, None, None, None, []]  # reads see the state before the writes
    assert spy.calls == ["batch"]
    store.close()
    reopened_store, again = reopened(store_path, token)
    with reopened_store:
        assert [again.get(DOCS, "a").value, again.get(DOCS, "b").value] == [{"v": 1}, {"v": 2}]


def test_a_batch_with_a_value_that_is_not_json_writes_nothing(memory):
    with pytest.raises(ValueError):
        memory.batch([PutOp(DOCS, "a", {"v": 1}), PutOp(DOCS, "b", {"v": object()})])
    assert memory.get(DOCS, "a") is None
    with pytest.raises(ValueError):
        memory.put(DOCS, "n", {"v": float("nan")})


def test_list_namespaces_with_conditions_depth_and_pages(memory):
    for namespace in [("a", "b", "c"), ("a", "x", "c"), ("b", "c"), ("a",)]:
        memory.put(namespace, "k", {"v": 1})
    assert memory.list_namespaces(prefix=("a",)) == [("a",), ("a", "b", "c"), ("a", "x", "c")]
    assert memory.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("a", "x", "c"), ("b", "c")]
    assert memory.list_namespaces(prefix=("a", "*", "c")) == [("a", "b", "c"), ("a", "x", "c")]
    assert memory.list_namespaces(max_depth=1) == [("a",), ("b",)]
    assert memory.list_namespaces(limit=2, offset=1) == [("a", "b", "c"), ("a", "x", "c")]
    op = ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),))
    assert memory.batch([op]) == [[("b", "c")]]


def test_search_pages_newest_first_and_ranks_a_text_query(memory):
    memory.put(DOCS, "old", {"text": "tea in the morning", "n": 1})
    memory.put(DOCS, "mid", {"text": "rain in Pune", "n": 2})
    memory.put(DOCS, "new", {"text": "monsoon rain rain", "n": 3})
    assert [item.key for item in memory.search(DOCS)] == ["new", "mid", "old"]
    assert [item.key for item in memory.search(DOCS, limit=1, offset=1)] == ["mid"]
    assert [item.key for item in memory.search(DOCS, filter={"n": {"$lte": 2}})] == ["mid", "old"]
    ranked = memory.search(DOCS, query="rain")
    assert [item.key for item in ranked] == ["new", "mid", "old"]
    assert ranked[0].score > ranked[1].score > 0 and ranked[2].score is None
    assert [item.key for item in memory.search(DOCS, query="pune", limit=1)] == ["mid"]
    assert memory.search(("other",), query="rain") == []
    with pytest.raises(ValueError):
        memory.search(DOCS, filter={"n": {"$regex": "x"}})


def test_a_text_query_finds_items_past_older_versions_and_other_records(memory, alice):
    for number in range(150):
        alice.add_lot("noise", f"rain report {number}")
    for number in range(20):
        memory.put(DOCS, "k", {"text": f"rain version {number}"})
    found = memory.search(DOCS, query="rain", limit=1)
    assert [item.value["text"] for item in found] == ["rain version 19"]
    assert found[0].score is not None


# Erase


def test_delete_with_erase_leaves_no_byte_of_any_version_in_the_store_folder(store_path, store):
    memory = CheeseStore(store.open_agent(store.create_agent("bob")), erase=True)
    memory.put(DOCS, "secret", {"text": "zebra-7f3a9-first"})
    memory.put(DOCS, "secret", {"text": "zebra-51c2e-second"})
    memory.remember(FACTS, "derived", {"text": "okapi-q8w1-derived"}, sources=[(DOCS, "secret")])
    memory.put(DOCS, "kept", {"text": "kept-4d2b"})
    memory.delete(DOCS, "secret")
    files = bytes_of_every_file(store_path)
    for marker in [b"zebra-7f3a9-first", b"zebra-51c2e-second", b"okapi-q8w1-derived"]:
        assert marker not in files
    assert b"kept-4d2b" in files
    assert memory.get(FACTS, "derived") is None


def test_delete_without_erase_hides_the_text_until_compact(store_path, store):
    agent = store.open_agent(store.create_agent("bob"))
    memory = CheeseStore(agent)
    memory.put(DOCS, "secret", {"text": "zebra-hidden-0e1f"})
    memory.delete(DOCS, "secret")
    assert memory.get(DOCS, "secret") is None
    assert b"zebra-hidden-0e1f" in bytes_of_every_file(store_path)


# Embeddings


def test_an_index_embeds_values_and_ranks_by_hybrid_search(memory, alice):
    indexed = CheeseStore(
        alice, index={"embed": bag_of_words, "dims": DIMENSIONS, "fields": ["text"]}
    )
    indexed.put(DOCS, "a", {"text": "umbrella for the rain"})
    indexed.put(DOCS, "b", {"text": "green tea"})
    indexed.put(DOCS, "c", {"text": "not embedded"}, index=False)
    assert alice.has_vector(indexed.get(DOCS, "a").id)
    assert not alice.has_vector(indexed.get(DOCS, "c").id)
    found = indexed.search(DOCS, query="tea")
    assert found[0].key == "b" and found[0].score is not None
    assert {item.key for item in found} == {"a", "b", "c"}
    learned = indexed.remember(FACTS, "f", {"text": "tea lover"}, sources=[(DOCS, "b")])
    assert alice.has_vector(learned.id)


def test_an_index_with_the_wrong_dimension_is_refused(alice):
    indexed = CheeseStore(alice, index={"embed": bag_of_words, "dims": 3})
    with pytest.raises(ValueError):
        indexed.put(DOCS, "a", {"text": "hello"})
    assert indexed.get(DOCS, "a") is None


def test_the_async_methods_work_with_an_async_embedder(alice):
    async def embed(texts):
        return bag_of_words(texts)

    indexed = CheeseStore(alice, index={"embed": embed, "dims": DIMENSIONS, "fields": ["text"]})

    async def scenario():
        await indexed.aput(DOCS, "a", {"text": "rain"})
        await indexed.aput(DOCS, "b", {"text": "tea"})
        assert (await indexed.aget(DOCS, "a")).value == {"text": "rain"}
        found = await indexed.asearch(DOCS, query="tea", limit=1)
        assert [item.key for item in found] == ["b"]
        assert await indexed.alist_namespaces() == [DOCS]
        await indexed.adelete(DOCS, "a")
        assert await indexed.aget(DOCS, "a") is None

    asyncio.run(scenario())


# Threads


def test_threads_share_one_store(store_path, store):
    token = store.create_agent("bob")
    memory = CheeseStore(store.open_agent(token))
    failures = []

    def work(thread_number):
        try:
            for number in range(25):
                namespace = ("thread", str(thread_number))
                memory.put(namespace, f"k{number % 5}", {"n": number})
                memory.search(namespace, filter={"n": {"$gte": 0}})
                memory.get(namespace, f"k{number % 5}")
        except Exception as error:  # noqa: BLE001 - reported to the main thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(number,)) for number in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    expected = {(("thread", str(t)), f"k{k}"): {"n": 20 + k} for t in range(6) for k in range(5)}
    assert {
        (item.namespace, item.key): item.value for item in memory.search((), limit=100)
    } == expected
    store.close()
    reopened_store, again = reopened(store_path, token)
    with reopened_store:
        assert {(i.namespace, i.key): i.value for i in again.search((), limit=100)} == expected


# Errors


@pytest.mark.parametrize(
    "namespace",
    [(), ("",), ("a.b",), ("a", ""), ("nul\x00",), ("langgraph", "x"), (1,)],
)
def test_a_bad_namespace_is_refused_by_put_and_writes_nothing(memory, alice, namespace):
    with pytest.raises(InvalidNamespaceError):
        memory.put(namespace, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        memory.batch([PutOp(namespace, "k", {"v": 1})])
    with pytest.raises(InvalidNamespaceError):
        memory.remember(namespace, "k", {"v": 1}, sources=[alice.add_lot("n", "x")])
    assert memory.search(()) == []


@pytest.mark.parametrize("namespace", [("",), ("a.b",), ("a", ""), (None,)])
def test_a_bad_namespace_label_is_refused_by_every_read_and_delete(memory, namespace):
    with pytest.raises(InvalidNamespaceError):
        memory.get(namespace, "k")
    with pytest.raises(InvalidNamespaceError):
        memory.search(namespace)
    with pytest.raises(InvalidNamespaceError):
        memory.delete(namespace, "k")
    with pytest.raises(InvalidNamespaceError):
        memory.list_namespaces(prefix=namespace)
    with pytest.raises(InvalidNamespaceError):
        memory.recall(namespace, "k")
    with pytest.raises(InvalidNamespaceError):
        memory.batch([GetOp(namespace, "k")])
    with pytest.raises(InvalidNamespaceError):
        memory.batch([SearchOp(namespace)])


def test_recall_refuses_an_unknown_mode_even_for_a_missing_key(memory):
    with pytest.raises(cheesedb.InvalidArgumentError):
        memory.recall(DOCS, "missing", mode="gentle")


def test_ttl_and_unknown_ops_are_refused(memory):
    with pytest.raises(NotImplementedError):
        memory.put(DOCS, "k", {"v": 1}, ttl=5)
    with pytest.raises(ValueError):
        memory.batch(["not an op"])
    with pytest.raises(ValueError):
        CheeseStore(memory.agent, index={"dims": 3})


def test_a_closed_agent_raises_cheesedb_errors(store):
    agent = store.open_agent(store.create_agent("bob"))
    memory = CheeseStore(agent)
    agent.close()
    with pytest.raises(cheesedb.ClosedError):
        memory.put(DOCS, "k", {"v": 1})
    assert memory.get(DOCS, "k") is None
