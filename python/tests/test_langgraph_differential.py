"""CheeseStore against langgraph's own InMemoryStore: the same random operations, the same results.

Timestamps are left out of every comparison. InMemoryStore defines no order for a search (it
returns its dicts' insertion order) and ignores a text query unless it has embeddings, so a
search is compared as a set over everything that matches, and a page of it by its size and by
being the same slice of CheeseStore's own full answer. list_namespaces is sorted by both, so it
is compared exactly, pages included.
"""

import random

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import (  # noqa: E402
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore  # noqa: E402

import cheesedb  # noqa: E402
from cheesedb.langgraph import CheeseStore  # noqa: E402

NAMESPACES = [("a",), ("a", "b"), ("a", "c"), ("b",), ("b", "x", "y"), ("c", "b"), ("c", "b", "a")]
KEYS = [f"k{number}" for number in range(6)]
COLORS = ["red", "blue", "green"]
WORDS = ["pune", "rain", "tea", "umbrella", "river", "train", "monsoon"]
EVERYTHING = 10_000
STEPS = 120
SEEDS = range(40)


class Pair:
    """The reference and the store under test, stepped together."""

    def __init__(self, store_path, rng):
        self.store_path = store_path
        self.rng = rng
        self.reference = InMemoryStore()
        self.cheese_store = cheesedb.Store(store_path)
        self.token = self.cheese_store.create_agent("differential")
        self.subject = CheeseStore(self.cheese_store.open_agent(self.token))

    def reopen(self):
        """Closes the cheesedb store and builds a new CheeseStore from what is on disk."""
        self.cheese_store.close()
        self.cheese_store = cheesedb.Store(self.store_path)
        self.subject = CheeseStore(self.cheese_store.open_agent(self.token))

    def close(self):
        self.cheese_store.close()

    def prune_reference(self):
        """InMemoryStore keeps a namespace listed after its last item goes (and makes one on
        a mere get); a store lists the namespaces that hold items, so empty ones are dropped."""
        for namespace in [ns for ns, items in self.reference._data.items() if not items]:
            del self.reference._data[namespace]


def random_value(rng):
    value = {"n": rng.randint(0, 5), "text": " ".join(rng.sample(WORDS, rng.randint(1, 3)))}
    if rng.random() < 0.7:
        value["color"] = rng.choice(COLORS)
    if rng.random() < 0.5:
        value["nested"] = {"a": rng.randint(0, 2), "tags": rng.sample(COLORS, 2)}
    return value


def random_filter(rng):
    choice = rng.randrange(8)
    if choice == 0:
        return None
    if choice == 1:
        return {"color": rng.choice(COLORS)}
    if choice == 2:
        operator = rng.choice(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"])
        return {"n": {operator: rng.randint(0, 5)}}
    if choice == 3:
        return {"color": {"$ne": rng.choice(COLORS)}, "n": {"$gte": rng.randint(0, 3)}}
    if choice == 4:
        return {"nested": {"a": rng.randint(0, 2)}}
    if choice == 5:
        return {"n": {"$gt": 1, "$lt": 4}}
    if choice == 6:
        return {"nested": {"tags": rng.sample(COLORS, 2)}}
    return {"color": rng.choice(COLORS), "n": rng.randint(0, 5)}


def random_prefix(rng):
    return rng.choice(NAMESPACES + [()])[: rng.randint(0, 3)]


def random_list_op(rng):
    conditions = []
    for match_type in ("prefix", "suffix"):
        if rng.random() < 0.4:
            path = list(rng.choice(NAMESPACES)[: rng.randint(1, 2)])
            if rng.random() < 0.3:
                path[rng.randrange(len(path))] = "*"
            conditions.append(MatchCondition(match_type=match_type, path=tuple(path)))
    return ListNamespacesOp(
        match_conditions=tuple(conditions) or None,
        max_depth=rng.choice([None, None, 1, 2, 3]),
        limit=rng.choice([1, 2, 3, 100]),
        offset=rng.choice([0, 0, 1, 2]),
    )


def plain(item):
    """What is compared of an item: where it is and what it holds."""
    return None if item is None else (item.namespace, item.key, item.value)


def as_set(items):
    return sorted((plain(item) for item in items), key=repr)


def check_get(pair, namespace, key):
    expected = pair.reference.get(namespace, key)
    got = pair.subject.get(namespace, key)
    assert plain(got) == plain(expected)
    if got is not None:
        assert pair.subject.agent.get(got.id).alive


def check_search(pair, prefix, filter_value, limit, offset):
    expected_all = pair.reference.search(prefix, filter=filter_value, limit=EVERYTHING)
    got_all = pair.subject.search(prefix, filter=filter_value, limit=EVERYTHING)
    assert as_set(got_all) == as_set(expected_all)
    got_page = pair.subject.search(prefix, filter=filter_value, limit=limit, offset=offset)
    expected_page = pair.reference.search(prefix, filter=filter_value, limit=limit, offset=offset)
    assert len(got_page) == len(expected_page)
    assert [plain(item) for item in got_page] == [
        plain(item) for item in got_all[offset : offset + limit]
    ]


def check_query(pair, prefix, filter_value, query):
    expected = pair.reference.search(prefix, filter=filter_value, query=query, limit=EVERYTHING)
    got = pair.subject.search(prefix, filter=filter_value, query=query, limit=EVERYTHING)
    assert as_set(got) == as_set(expected)
    # The items that hold a word of the query come first, with a score, best first.
    words = set(query.split())
    scored = [item for item in got if item.score is not None]
    assert got[: len(scored)] == scored
    assert all(words & set(item.value["text"].split()) for item in scored)
    assert len(scored) == sum(1 for item in got if words & set(item.value["text"].split()))
    assert [item.score for item in scored] == sorted((item.score for item in scored), reverse=True)


def check_list(pair, op):
    pair.prune_reference()
    expected = pair.reference.batch([op])[0]
    got = pair.subject.batch([op])[0]
    assert got == expected


def check_batch(pair, rng):
    """Several ops in one batch call: reads see the state before the batch's writes."""
    ops = []
    for _ in range(rng.randint(2, 6)):
        kind = rng.randrange(5)
        namespace, key = rng.choice(NAMESPACES), rng.choice(KEYS)
        if kind == 0:
            ops.append(GetOp(namespace, key))
        elif kind == 1:
            ops.append(SearchOp(random_prefix(rng), random_filter(rng), EVERYTHING, 0))
        elif kind == 2:
            ops.append(random_list_op(rng))
        elif kind == 3:
            ops.append(PutOp(namespace, key, None))
        else:
            ops.append(PutOp(namespace, key, random_value(rng)))
    # A GetOp makes an empty namespace in InMemoryStore, which a later ListNamespacesOp of the
    # same batch would list: the listings are taken alone, before the batch, where reads look.
    pair.prune_reference()
    listings = {
        number: pair.reference.batch([op])[0]
        for number, op in enumerate(ops)
        if isinstance(op, ListNamespacesOp)
    }
    expected = pair.reference.batch(ops)
    expected = [listings.get(number, result) for number, result in enumerate(expected)]
    pair.prune_reference()
    got = pair.subject.batch(ops)
    for op, expected_result, got_result in zip(ops, expected, got):
        if isinstance(op, GetOp):
            assert plain(got_result) == plain(expected_result)
        elif isinstance(op, SearchOp):
            assert as_set(got_result) == as_set(expected_result)
        else:
            assert got_result == expected_result


def step(pair, rng):
    choice = rng.random()
    namespace, key = rng.choice(NAMESPACES), rng.choice(KEYS)
    if choice < 0.35:
        value = random_value(rng)
        pair.reference.put(namespace, key, value)
        pair.subject.put(namespace, key, value)
    elif choice < 0.47:
        pair.reference.delete(namespace, key)
        pair.subject.delete(namespace, key)
    elif choice < 0.6:
        check_get(pair, namespace, key)
    elif choice < 0.75:
        check_search(
            pair, random_prefix(rng), random_filter(rng), rng.randint(1, 6), rng.randint(0, 4)
        )
    elif choice < 0.83:
        query = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
        check_query(pair, random_prefix(rng), random_filter(rng), query)
    elif choice < 0.92:
        check_list(pair, random_list_op(rng))
    else:
        check_batch(pair, rng)
    pair.prune_reference()


def check_everything(pair):
    """Every key of the universe, every namespace, and the full listing agree."""
    for namespace in NAMESPACES:
        for key in KEYS:
            check_get(pair, namespace, key)
    check_search(pair, (), None, EVERYTHING, 0)
    check_list(pair, ListNamespacesOp(limit=EVERYTHING))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_sequences_agree_with_the_in_memory_store(tmp_path, seed):
    rng = random.Random(seed)
    pair = Pair(tmp_path / "store", rng)
    try:
        for number in range(STEPS):
            if number == STEPS // 2:
                pair.reopen()
                check_everything(pair)
            step(pair, rng)
        check_everything(pair)
        pair.reopen()
        check_everything(pair)
    finally:
        pair.close()
