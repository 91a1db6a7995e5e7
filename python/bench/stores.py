"""The LangGraph store against the stores a Python user would compare, in one run.

Puts, gets and searches of many items through ``CheeseStore`` (every write durable), langgraph's
own ``InMemoryStore`` (RAM only, nothing survives the process) and, when ``mem0`` is installed,
mem0's local ``Memory`` (Qdrant on disk, SQLite history) with ``infer=False`` and a
deterministic local embedder: mem0's default model and embedder are network services, so its
default configuration cannot run without network.

Run from the repository root after ``pip install ./python langgraph`` (and optionally
``mem0ai langchain``)::

    python python/bench/stores.py --items 100000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Callable

import cheesedb
WORDS = ["pune", "rain", "coffee", "train", "river", "garden", "music", "books", "tea", "hills"]


def fresh_agent(folder: str, name: str) -> tuple[cheesedb.Store, cheesedb.Agent]:
    store = cheesedb.Store(os.path.join(folder, name))
    return store, store.open_agent(store.create_agent("bench"))


def item_value(index: int) -> dict:
    return {"text": f"note {index} about {WORDS[index % len(WORDS)]} and {WORDS[(index * 7) % len(WORDS)]}",
            "topic": WORDS[index % len(WORDS)], "rank": index % 100}


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def langgraph_store_figures(store, items: int, chunk: int, searches: int) -> dict:
    """Puts of `items` items in chunks of `chunk` (one batch call each), then searches."""
    from langgraph.store.base import PutOp

    namespace = ("users", "alice", "notes")

    def put_all() -> None:
        for start in range(0, items, chunk):
            store.batch([PutOp(namespace, f"note-{index}", item_value(index))
                         for index in range(start, min(items, start + chunk))])

    put_seconds = timed(put_all)
    single_puts = min(200, items)
    single_seconds = timed(lambda: [store.put(namespace, f"single-{index}", item_value(index))
                                    for index in range(single_puts)])
    filtered_seconds = timed(lambda: [store.search(namespace, filter={"topic": WORDS[index % len(WORDS)]}, limit=10)
                                      for index in range(searches)])
    # The first text query of a CheeseStore builds the agent's search index from the log.
    first_query_seconds = timed(lambda: store.search(namespace, query="pune", limit=10))
    query_seconds = timed(lambda: [store.search(namespace, query=WORDS[index % len(WORDS)], limit=10)
                                   for index in range(searches)])
    get_seconds = timed(lambda: [store.get(namespace, f"note-{(index * 7919) % items}") for index in range(searches)])
    return {
        "put_batched_per_second": items / put_seconds,
        "put_single_per_second": single_puts / single_seconds,
        "get_ms": get_seconds / searches * 1000,
        "search_filter_ms": filtered_seconds / searches * 1000,
        "first_search_query_ms": first_query_seconds * 1000,
        "search_query_ms": query_seconds / searches * 1000,
    }


def mem0_figures(folder: str, items: int, searches: int) -> dict | None:
    """mem0's local Memory with infer=False and a deterministic local embedder, or None."""
    try:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("OPENAI_API_KEY", "unused-offline")
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from mem0 import Memory
    except ImportError:
        return None
    memory = Memory.from_config({
        "embedder": {"provider": "langchain", "config": {"model": DeterministicFakeEmbedding(size=64)}},
        "vector_store": {"provider": "qdrant", "config": {
            "path": os.path.join(folder, "mem0-qdrant"), "collection_name": "bench",
            "embedding_model_dims": 64, "on_disk": True}},
        "history_db_path": os.path.join(folder, "mem0-history.db"),
    })
    add_seconds = timed(lambda: [memory.add(item_value(index)["text"], user_id="alice", infer=False)
                                 for index in range(items)])
    search_seconds = timed(lambda: [memory.search(WORDS[index % len(WORDS)], filters={"user_id": "alice"}, limit=10)
                                    for index in range(searches)])
    return {"put_single_per_second": items / add_seconds, "search_query_ms": search_seconds / searches * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="items for the load and store figures")
    parser.add_argument("--batch", type=int, default=1000, help="writes per batch")
    parser.add_argument("--searches", type=int, default=200, help="searches per figure")
    parser.add_argument("--mem0-items", type=int, default=None, help="items for mem0 (default --items)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    arguments = parser.parse_args()

    from langgraph.store.memory import InMemoryStore
    from cheesedb.langgraph import CheeseStore

    figures: dict = {"cheesedb_version": cheesedb.__version__, "items": arguments.items}
    with tempfile.TemporaryDirectory(dir=os.environ.get("CHEESEDB_BENCH_DIR")) as folder:
        store, agent = fresh_agent(folder, "langgraph")
        with store:
            figures["cheese_store"] = langgraph_store_figures(CheeseStore(agent), arguments.items, arguments.batch,
                                                              arguments.searches)
        figures["in_memory_store"] = langgraph_store_figures(InMemoryStore(), arguments.items, arguments.batch,
                                                             arguments.searches)
        figures["mem0"] = mem0_figures(folder, arguments.mem0_items or arguments.items, arguments.searches)
    if arguments.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
