"""A small LangGraph graph (no model) whose nodes keep their memory in a CheeseStore."""

from typing import TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.config import get_store  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.store.base import BaseStore  # noqa: E402

import cheesedb  # noqa: E402
from cheesedb.langgraph import CheeseItem, CheeseStore  # noqa: E402

USER = ("users", "u1")
MESSAGES = ("users", "u1", "messages")
FACTS = ("users", "u1", "facts")


class State(TypedDict):
    """What flows between the nodes: one message in, one answer out."""

    message: str
    answer: str


def record_message(state: State, *, store: BaseStore) -> dict:
    """Keeps the incoming message as an item, keyed by its position."""
    count = len(store.search(MESSAGES, limit=1000))
    store.put(MESSAGES, f"m{count}", {"text": state["message"]})
    return {}


def learn_city(state: State) -> dict:
    """Derives a fact from the newest message, naming the message as its source."""
    store = get_store()
    words = state["message"].split()
    if "in" not in words:
        return {}
    city = words[words.index("in") + 1]
    newest = store.search(MESSAGES, limit=1)[0]
    store.remember(FACTS, "city", {"city": city}, sources=[newest])
    return {}


def answer(state: State, *, store: BaseStore) -> dict:
    """Answers from what the store holds."""
    fact = store.get(FACTS, "city")
    return {"answer": f"you live in {fact.value['city']}" if fact else "I don't know"}


def build(store: CheeseStore):
    """The graph: record, learn, answer."""
    graph = StateGraph(State)
    graph.add_node("record_message", record_message)
    graph.add_node("learn_city", learn_city)
    graph.add_node("answer", answer)
    graph.add_edge(START, "record_message")
    graph.add_edge("record_message", "learn_city")
    graph.add_edge("learn_city", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store)


def test_a_graph_keeps_its_memory_across_a_reopen_and_forgets_a_recalled_source(store_path):
    with cheesedb.Store(store_path) as store:
        token = store.create_agent("assistant")
        memory = CheeseStore(store.open_agent(token))
        app = build(memory)
        assert app.invoke({"message": "hello", "answer": ""})["answer"] == "I don't know"
        result = app.invoke({"message": "I live in Pune", "answer": ""})
        assert result["answer"] == "you live in Pune"
        fact = memory.get(FACTS, "city")
        assert isinstance(fact, CheeseItem)
        assert memory.list_namespaces(prefix=USER) == [FACTS, MESSAGES]

    with cheesedb.Store(store_path) as store:
        agent = store.open_agent(token)
        memory = CheeseStore(agent)
        messages = {item.key: item.value["text"] for item in memory.search(MESSAGES)}
        assert messages == {"m0": "hello", "m1": "I live in Pune"}
        fact = memory.get(FACTS, "city")
        assert fact.value == {"city": "Pune"}
        node = agent.get(fact.id)
        assert node.kind == "memory"
        assert node.legs == [[memory.get(MESSAGES, "m1").id]]

        # The user takes the message back: the fact learned from it goes too.
        removed = memory.recall(MESSAGES, "m1")
        assert [(entry.namespace, entry.key) for entry in removed] == [
            (MESSAGES, "m1"),
            (FACTS, "city"),
        ]
        assert memory.get(FACTS, "city") is None
        assert build(memory).invoke({"message": "hi", "answer": ""})["answer"] == "I don't know"

    with cheesedb.Store(store_path) as store:
        memory = CheeseStore(store.open_agent(token))
        assert memory.get(FACTS, "city") is None
        assert memory.get(MESSAGES, "m0").value == {"text": "hello"}
