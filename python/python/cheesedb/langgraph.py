"""A LangGraph store kept in a cheesedb agent.

`CheeseStore` is a `langgraph.store.base.BaseStore`: a graph compiled with
``store=CheeseStore(agent)`` reads and writes its long-term memory through
cheesedb, so the memory survives the process, is hash-chained, and can be
recalled (and erased) together with everything learned from it.

How items map onto cheesedb records:

- Every ``put`` writes one lot labelled ``"langgraph"`` whose content is a JSON
  object holding the namespace, key, value, ``created_at`` and ``updated_at``.
  All the puts of one ``batch`` call, with their vectors, are written in one
  cheesedb batch: one commit, one sync, all or nothing.
- A ``put`` of a key that exists supersedes the item: reads see only the newest
  version, and the older versions stay in the log as history, alive, so that
  memories learned from them stay alive too. ``created_at`` is kept from the
  first version.
- ``delete`` is a recall of every version of the key (mode fair, and Erase when
  the store was made with ``erase=True``): memories learned only from those
  versions die with them.
- ``remember`` writes an item as a cheesedb memory whose parents are other items
  (or any lot or memory of the agent), and ``recall`` removes an item with
  everything learned from it and says what went.
- If the newest version of a key dies because something it was learned from was
  recalled, the key shows its newest version still alive, if any: the view is
  always "the newest alive version of each key", the same before and after a
  reopen.
- Every returned item is a `CheeseItem` (or `CheeseSearchItem`): the langgraph
  item with an ``id`` attribute, the cheesedb id of that version, which the app
  can name as a parent.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NamedTuple, Optional, Union

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        IndexConfig,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        ensure_embeddings,
        get_text_at_path,
        tokenize_path,
    )
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "cheesedb.langgraph needs the langgraph package: pip install langgraph"
    ) from missing

import cheesedb
from cheesedb import _store_rules as store_rules

__all__ = ["CheeseStore", "CheeseItem", "CheeseSearchItem", "Removed", "LOT_LABEL"]

LOT_LABEL = "langgraph"
"""The label of the lots that hold items written by ``put``."""

# Marks the JSON of an item, so memories (which carry no label) are told apart
# from the app's own memories when the state is rebuilt.
_FORMAT_FIELD = "langgraph_item"
_FORMAT_VERSION = 1

Namespace = tuple[str, ...]
Source = Union[int, Item, tuple[Namespace, str]]


class _WithId:
    """What both item classes add to langgraph's: the cheesedb ``id``, also in ``dict()``."""

    __slots__ = ()

    def __init__(self, *, id: int, **fields: Any) -> None:  # noqa: A002 - the name is the API
        super().__init__(**fields)
        self.id = id

    def dict(self) -> dict:
        """The item as a plain dict, with its ``id``."""
        result = super().dict()
        result["id"] = self.id
        return result


class CheeseItem(_WithId, Item):
    """A langgraph `Item` that also says its cheesedb id (``item.id``).

    The id is that of the version read: name it as a parent with
    `CheeseStore.remember` or with the agent's own ``remember``.
    """

    __slots__ = ("id",)


class CheeseSearchItem(_WithId, SearchItem):
    """A langgraph `SearchItem` that also says its cheesedb id (``item.id``)."""

    __slots__ = ("id",)


class Removed(NamedTuple):
    """One lot or memory that a recall removed.

    ``namespace`` and ``key`` are None for a record that was not an item of
    this store (a lot or memory the app wrote through the agent itself).
    """

    namespace: Optional[Namespace]
    key: Optional[str]
    id: int


@dataclass(frozen=True)
class _Record:
    """One alive version of an item, as decoded from its cheesedb content."""

    id: int
    namespace: Namespace
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class CheeseStore(BaseStore):
    """A LangGraph store whose items are records of one cheesedb agent.

    Args:
        agent: an open ``cheesedb.Agent`` (from ``Store.open_agent``). The store
            holds no other handle: close the cheesedb ``Store`` after the graph
            is done with this one.
        erase: when True, ``delete`` and ``recall`` use Erase: the text of the
            removed versions, and of the memories that die with them, is gone
            from every file of the cheesedb store before the call returns. When
            False they hide the text until the agent's next ``compact()``.
        index: langgraph's ``IndexConfig`` (``{"embed": ..., "dims": n,
            "fields": [...]}``). With it every put embeds the text at the given
            fields (all of them joined into one text, so one vector per version)
            and attaches the vector with ``set_vector``; a search with a query
            then ranks by cheesedb's hybrid search (keywords and vectors fused).
            Without it, a query ranks by keywords (BM25) alone.

    Versions: each put writes a lot labelled ``"langgraph"`` holding the item as
    JSON. A put of an existing key supersedes it (reads see the newest version)
    and the older versions stay alive as history, so what was learned from them
    stays too, until ``delete``, which recalls every version of the key (mode
    fair; Erase with ``erase=True``) and with them what was learned only from
    them. Every returned item carries the cheesedb id of its version (``.id``).

    Search: without a query, items come newest write first. With a query, the
    items that match it come first, best first (``score`` set), and the other
    items of the namespace that pass the filter follow with ``score=None``,
    newest first, as langgraph's ``InMemoryStore`` fills a page with items it
    could not score. The keywords are those of the whole JSON record, field
    names included.

    Filters support exact values, nested dicts, lists, and the operators
    ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt`` and ``$lte``; an ordering
    operator on a value that is not a number leaves the item out.

    The state kept in RAM (each key's alive versions and their values) is
    rebuilt from the agent's alive lots and memories when the store is made, and
    kept in step by every write and recall made through this object. Writes made
    to the agent around the store are seen at the next construction. Every
    method may be called from several threads.

    TTLs are not supported (``supports_ttl`` is False).
    """

    supports_ttl = False

    def __init__(
        self,
        agent: Any,
        *,
        erase: bool = False,
        index: Optional[IndexConfig] = None,
    ) -> None:
        self._agent = agent
        self._erase = bool(erase)
        self._lock = threading.RLock()
        self._records: dict[int, _Record] = {}
        # Each namespace's keys, and each key's alive versions, oldest first: the last is
        # what reads see. A namespace without an alive item is dropped.
        self._namespaces: dict[Namespace, dict[str, list[int]]] = {}
        self.index_config = store_rules.prepare_index(index)
        self.embeddings = (
            ensure_embeddings(self.index_config.get("embed")) if self.index_config else None
        )
        self._rebuild()

    # ------------------------------------------------------------------
    # The BaseStore interface

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs ``ops`` in order of meaning: every read sees the state before the
        batch's writes, then the writes apply (the last op on a key wins).

        All the puts are written in one cheesedb batch (one sync); each delete
        is a recall.

        Raises:
            InvalidNamespaceError: a namespace that langgraph would refuse.
            ValueError: an unknown op or filter operator, a value that is not
                JSON, or an embedding of the wrong size.
            cheesedb.Error: what the agent raised while writing.
        """
        ops = list(ops)
        store_rules.validate_ops(ops)
        vectors = self._embed_sync(ops)
        return self._run(ops, vectors)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """As `batch`, on a worker thread, with embeddings made asynchronously."""
        ops = list(ops)
        store_rules.validate_ops(ops)
        vectors = await self._embed_async(ops)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self._run, ops, vectors)

    # ------------------------------------------------------------------
    # What cheesedb adds

    def remember(
        self,
        namespace: Namespace,
        key: str,
        value: Mapping[str, Any],
        sources: Sequence[Source] = (),
        *,
        legs: Optional[Sequence[Sequence[Source]]] = None,
        index: Union[bool, list[str], None] = None,
    ) -> CheeseItem:
        """Writes an item learned from other records, as a cheesedb memory.

        Each source is a cheesedb id, an item returned by this store (its
        version), or a ``(namespace, key)`` pair (that key's newest version).
        ``sources`` makes one leg per source: the item stays while ANY of them
        stays, and dies when the last is recalled in mode fair (a strict recall
        of any one of them removes it). ``legs`` gives full control
        instead: a list of legs, each a list of sources that must ALL stay for
        that leg to hold. The item supersedes any earlier version of the key.

        Returns:
            The item written, with its cheesedb id.

        Raises:
            ValueError: neither or both of ``sources`` and ``legs``, or an empty
                leg.
            KeyError: a ``(namespace, key)`` source that has no item.
            InvalidNamespaceError: a namespace that ``put`` would refuse.
            cheesedb.Error: a parent that is unknown or dead, or a failed write.
        """
        namespace = tuple(namespace)
        store_rules.validate_put_namespace(namespace)
        if legs is None:
            if not sources:
                raise ValueError("remember needs at least one source (or legs=)")
            legs = [[source] for source in sources]
        elif sources:
            raise ValueError("remember takes sources= or legs=, not both")
        vector = self._embed_value_sync(value, index)
        with self._lock:
            parent_legs = [[self._source_id(source) for source in leg] for leg in legs]
            if any(not leg for leg in parent_legs) or not parent_legs:
                raise ValueError("every leg of remember needs at least one source")
            record = self._new_record(namespace, str(key), value)
            content = _encode(record)
            with self._agent.batch() as cheese_batch:
                memory_id = cheese_batch.remember(content, legs=parent_legs)
                if vector is not None:
                    cheese_batch.set_vector(memory_id, vector)
            record = _with_id(record, memory_id)
            self._add(record)
            return _item(record)

    def recall(self, namespace: Namespace, key: str, *, mode: str = "fair") -> list[Removed]:
        """Removes every version of the item and what was learned from it.

        ``mode`` is ``"fair"`` (a memory dies when none of its legs holds) or
        ``"strict"`` (a memory dies when the item is anywhere in its history).
        The removal is an Erase when the store was made with ``erase=True``.

        Returns:
            What was removed: the item's versions and every memory that died
            with them, each as ``Removed(namespace, key, id)``, in id order.
            Empty when the key has no item.

        Raises:
            InvalidNamespaceError: a namespace that langgraph would refuse.
            cheesedb.InvalidArgumentError: a mode other than fair or strict.
            cheesedb.Error: a failed write.
        """
        namespace = tuple(namespace)
        store_rules.validate_labels(namespace)
        if mode not in ("fair", "strict"):
            raise cheesedb.InvalidArgumentError(f"mode must be 'fair' or 'strict', not {mode!r}")
        with self._lock:
            return self._recall_key(namespace, str(key), mode)

    @property
    def agent(self) -> Any:
        """The cheesedb agent this store writes to."""
        return self._agent

    # ------------------------------------------------------------------
    # Running a batch

    def _run(self, ops: list[Op], vectors: dict[str, list[float]]) -> list[Result]:
        with self._lock:
            results: list[Result] = []
            final_puts: dict[tuple[Namespace, str], PutOp] = {}
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(tuple(op.namespace), str(op.key)))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op, vectors))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                elif isinstance(op, PutOp):
                    final_puts[(tuple(op.namespace), str(op.key))] = op
                    results.append(None)
                else:
                    raise ValueError(f"Unknown operation type: {type(op).__name__}")
            self._apply_puts(final_puts, vectors)
            return results

    def _apply_puts(
        self, final_puts: dict[tuple[Namespace, str], PutOp], vectors: dict[str, list[float]]
    ) -> None:
        writes = []
        for (namespace, key), op in final_puts.items():
            if op.value is None:
                self._recall_key(namespace, key, "fair")
            else:
                writes.append((self._new_record(namespace, key, op.value), op))
        if not writes:
            return
        contents = [_encode(record) for record, _ in writes]
        texts = [self._index_text(op.value, op.index) for _, op in writes]
        with self._agent.batch() as cheese_batch:
            ids = []
            for content, text in zip(contents, texts):
                lot_id = cheese_batch.add_lot(LOT_LABEL, content)
                if text is not None and text in vectors:
                    cheese_batch.set_vector(lot_id, vectors[text])
                ids.append(lot_id)
        for (record, _op), lot_id in zip(writes, ids):
            self._add(_with_id(record, lot_id))

    def _new_record(self, namespace: Namespace, key: str, value: Mapping[str, Any]) -> _Record:
        now = datetime.now(timezone.utc)
        current = self._current(namespace, key)
        return _Record(
            id=0,
            namespace=namespace,
            key=key,
            value=dict(value),
            created_at=current.created_at if current else now,
            updated_at=now,
        )

    # ------------------------------------------------------------------
    # Reads

    def _current(self, namespace: Namespace, key: str) -> Optional[_Record]:
        versions = self._namespaces.get(namespace, {}).get(key)
        return self._records[versions[-1]] if versions else None

    def _get(self, namespace: Namespace, key: str) -> Optional[CheeseItem]:
        record = self._current(namespace, key)
        return _item(record) if record else None

    def _candidates(self, op: SearchOp) -> list[_Record]:
        """The newest versions in the namespace that pass the filter, newest first."""
        prefix = tuple(op.namespace_prefix)
        width = len(prefix)
        found = []
        for namespace, keys in self._namespaces.items():
            if namespace[:width] != prefix:
                continue
            for versions in keys.values():
                record = self._records[versions[-1]]
                if store_rules.passes(record.value, op.filter):
                    found.append(record)
        found.sort(key=lambda record: record.id, reverse=True)
        return found

    def _search(self, op: SearchOp, vectors: dict[str, list[float]]) -> list[CheeseSearchItem]:
        if op.filter:
            store_rules.check_filter(op.filter)
        wanted = max(op.offset, 0) + max(op.limit, 0)
        candidates = self._candidates(op)
        if not op.query:
            ranked = [(record, None) for record in candidates]
        else:
            vector = vectors.get(_query_slot(op.query))
            ranked = self._ranked_hits(str(op.query), candidates, vector, wanted)
            if len(ranked) < wanted:
                # Too few hits: the other items fill the page, unscored.
                hit_ids = {record.id for record, _score in ranked}
                ranked += [(r, None) for r in candidates if r.id not in hit_ids]
        page = ranked[op.offset : op.offset + op.limit]
        return [_search_item(record, score) for record, score in page]

    def _ranked_hits(
        self,
        query: str,
        candidates: list[_Record],
        vector: Optional[list[float]],
        wanted: int,
    ) -> list[tuple[_Record, Optional[float]]]:
        """The best ``wanted`` of ``candidates`` for the query, best first.

        One page search of the agent, kept to the candidates' ids inside the
        engine, so older versions and the app's own records never take the
        page. A query vector the agent's vectors cannot be compared with (an
        index of another dimension) ranks by words alone.
        """
        if not candidates or wanted <= 0:
            return []
        by_id = {record.id: record for record in candidates}
        page = self._agent.search_page(query, vector=vector, limit=wanted, among=list(by_id))
        return [(by_id[found.id], float(found.score)) for found in page.found]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[Namespace]:
        namespaces = list(self._namespaces)
        conditions = op.match_conditions or ()
        matching = [ns for ns in namespaces if all(store_rules.matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            matching = list({ns[: op.max_depth] for ns in matching})
        matching.sort()
        return matching[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------
    # State kept in step with the agent

    def _rebuild(self) -> None:
        for node in self._agent.list():
            record = _decode(node)
            if record is not None:
                self._add(record)

    def _add(self, record: _Record) -> None:
        self._records[record.id] = record
        keys = self._namespaces.setdefault(record.namespace, {})
        versions = keys.setdefault(record.key, [])
        versions.append(record.id)
        if len(versions) > 1 and versions[-2] > record.id:
            versions.sort()

    def _forget(self, node_id: int) -> Removed:
        """Drops a recalled id from the state; says which item it was."""
        record = self._records.pop(node_id, None)
        if record is None:
            return Removed(None, None, node_id)
        keys = self._namespaces[record.namespace]
        versions = keys[record.key]
        versions.remove(node_id)
        if not versions:
            del keys[record.key]
            if not keys:
                del self._namespaces[record.namespace]
        return Removed(record.namespace, record.key, node_id)

    def _recall_key(self, namespace: Namespace, key: str, mode: str) -> list[Removed]:
        removed: list[Removed] = []
        # Newest first: a newer version learned from an older one dies with it,
        # and is then skipped here.
        for version_id in reversed(list(self._namespaces.get(namespace, {}).get(key, ()))):
            if version_id not in self._records:
                continue
            cascaded = self._agent.recall(version_id, mode=mode, erase=self._erase)
            removed.append(self._forget(version_id))
            removed.extend(self._forget(int(dead)) for dead in cascaded)
        removed.sort(key=lambda entry: entry.id)
        return removed

    def _source_id(self, source: Source) -> int:
        if isinstance(source, Item):
            source_id = getattr(source, "id", None)
            if source_id is None:
                current = self._current(tuple(source.namespace), source.key)
                if current is None:
                    raise KeyError(f"no item at {tuple(source.namespace)!r} {source.key!r}")
                return current.id
            return int(source_id)
        if isinstance(source, tuple) and len(source) == 2 and isinstance(source[1], str):
            namespace, key = tuple(source[0]), source[1]
            current = self._current(namespace, key)
            if current is None:
                raise KeyError(f"no item at {namespace!r} {key!r}")
            return current.id
        if isinstance(source, int) and not isinstance(source, bool):
            return source
        raise TypeError(
            "a source is an id (int), an item, or a (namespace, key) pair; "
            f"got {type(source).__name__}"
        )

    # ------------------------------------------------------------------
    # Embeddings

    def _index_text(self, value: Any, index: Union[bool, list[str], None]) -> Optional[str]:
        """The text embedded for a value: the texts at the indexed fields, joined."""
        if not self.index_config or value is None or index is False:
            return None
        if index is None or index is True:
            paths = self.index_config["__tokenized_fields"]
        else:
            paths = [(path, tokenize_path(path)) for path in index]
        texts: list[str] = []
        for _path, field in paths:
            texts.extend(get_text_at_path(value, field))
        texts = [text for text in texts if text]
        return "\n".join(texts) if texts else None

    def _texts_to_embed(self, ops: list[Op]) -> tuple[list[str], list[str]]:
        documents: list[str] = []
        queries: list[str] = []
        if not self.embeddings:
            return documents, queries
        for op in ops:
            if isinstance(op, PutOp):
                text = self._index_text(op.value, op.index)
                if text is not None and text not in documents:
                    documents.append(text)
            elif isinstance(op, SearchOp) and op.query and op.query not in queries:
                queries.append(op.query)
        return documents, queries

    def _embed_sync(self, ops: list[Op]) -> dict[str, list[float]]:
        documents, queries = self._texts_to_embed(ops)
        if not documents and not queries:
            return {}
        assert self.embeddings is not None
        vectors = self.embeddings.embed_documents(documents) if documents else []
        query_vectors = [self.embeddings.embed_query(query) for query in queries]
        return self._vector_table(documents, vectors, queries, query_vectors)

    async def _embed_async(self, ops: list[Op]) -> dict[str, list[float]]:
        documents, queries = self._texts_to_embed(ops)
        if not documents and not queries:
            return {}
        assert self.embeddings is not None
        vectors = await self.embeddings.aembed_documents(documents) if documents else []
        query_vectors = list(
            await asyncio.gather(*(self.embeddings.aembed_query(q) for q in queries))
        )
        return self._vector_table(documents, vectors, queries, query_vectors)

    def _vector_table(
        self,
        documents: list[str],
        vectors: Sequence[Sequence[float]],
        queries: list[str],
        query_vectors: Sequence[Sequence[float]],
    ) -> dict[str, list[float]]:
        if len(vectors) != len(documents):
            raise ValueError(
                f"the embedder returned {len(vectors)} vectors for {len(documents)} texts"
            )
        table = {text: self._checked(vector) for text, vector in zip(documents, vectors)}
        for query, vector in zip(queries, query_vectors):
            table[_query_slot(query)] = self._checked(vector)
        return table

    def _checked(self, vector: Sequence[float]) -> list[float]:
        numbers = [float(number) for number in vector]
        dims = self.index_config.get("dims") if self.index_config else None
        if dims is not None and len(numbers) != dims:
            raise ValueError(f"an embedding has {len(numbers)} numbers, the index says {dims}")
        return numbers

    def _embed_value_sync(
        self, value: Mapping[str, Any], index: Union[bool, list[str], None]
    ) -> Optional[list[float]]:
        text = self._index_text(value, index)
        if text is None or self.embeddings is None:
            return None
        return self._checked(self.embeddings.embed_documents([text])[0])


# ----------------------------------------------------------------------
# Records, as JSON


def _encode(record: _Record) -> bytes:
    document = {
        _FORMAT_FIELD: _FORMAT_VERSION,
        "namespace": list(record.namespace),
        "key": record.key,
        "value": record.value,
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
    }
    try:
        return json.dumps(document, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise ValueError(f"an item's value must be JSON: {error}") from error


def _decode(node: Any) -> Optional[_Record]:
    """The item a node holds, or None for a node this store did not write."""
    if node.kind == "lot" and node.label != LOT_LABEL:
        return None
    content = node.content
    if content is None:
        return None
    try:
        document = json.loads(bytes(content).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(document, dict) or document.get(_FORMAT_FIELD) != _FORMAT_VERSION:
        return None
    try:
        return _Record(
            id=int(node.id),
            namespace=tuple(str(label) for label in document["namespace"]),
            key=str(document["key"]),
            value=dict(document["value"]),
            created_at=datetime.fromisoformat(document["created_at"]),
            updated_at=datetime.fromisoformat(document["updated_at"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _with_id(record: _Record, node_id: int) -> _Record:
    return _Record(
        id=int(node_id),
        namespace=record.namespace,
        key=record.key,
        # The value as it reads back from the record, so a read now and a read
        # after a reopen agree (tuples become lists, and so on).
        value=json.loads(json.dumps(record.value)),
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def _item(record: _Record) -> CheeseItem:
    return CheeseItem(
        id=record.id,
        value=copy.deepcopy(record.value),
        key=record.key,
        namespace=record.namespace,
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def _search_item(record: _Record, score: Optional[float]) -> CheeseSearchItem:
    return CheeseSearchItem(
        id=record.id,
        namespace=record.namespace,
        key=record.key,
        value=copy.deepcopy(record.value),
        created_at=record.created_at,
        updated_at=record.updated_at,
        score=score,
    )


def _query_slot(query: str) -> str:
    # Queries and documents share the vector table; a prefix keeps a query from
    # taking the vector of a document with the same text.
    return "\x00query\x00" + query
