"""The rules the LangGraph store applies as langgraph's own stores do: namespace validation,
value filters (exact values, nested dicts, lists, ``$eq``/``$ne``/``$gt``/``$gte``/``$lt``/
``$lte``), namespace match conditions, and the preparation of an index configuration."""

from __future__ import annotations

from typing import Any, Callable, Optional

from langgraph.store.base import (
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
    tokenize_path,
)

Namespace = tuple[str, ...]

FILTER_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def prepare_index(index: Optional[IndexConfig]) -> Optional[dict[str, Any]]:
    if not index:
        return None
    config: dict[str, Any] = dict(index)
    if config.get("embed") is None:
        raise ValueError("index needs an 'embed' function or Embeddings")
    config["__tokenized_fields"] = [
        (path, tokenize_path(path)) if path != "$" else (path, path)
        for path in (config.get("fields") or ["$"])
    ]
    return config


def validate_labels(namespace: Namespace) -> None:
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} in {namespace}: labels must be strings."
            )
        if not label:
            raise InvalidNamespaceError(f"Namespace labels cannot be empty: {namespace}")
        if "." in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} in {namespace}: labels cannot contain '.'."
            )
        if "\x00" in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} in {namespace}: labels cannot contain NUL."
            )


def validate_put_namespace(namespace: Namespace) -> None:
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    validate_labels(namespace)
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(
            f'Root label for namespace cannot be "langgraph". Got: {namespace}'
        )


def validate_ops(ops: list[Op]) -> None:
    """Checks every namespace before anything runs, so a bad op writes nothing."""
    for op in ops:
        if isinstance(op, PutOp):
            namespace = tuple(op.namespace)
            if op.value is None:
                validate_labels(namespace)
            else:
                validate_put_namespace(namespace)
        elif isinstance(op, GetOp):
            validate_labels(tuple(op.namespace))
        elif isinstance(op, SearchOp):
            validate_labels(tuple(op.namespace_prefix))
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                validate_labels(tuple(condition.path))


def check_filter(filter_value: Any) -> None:
    """Refuses an unknown ``$`` operator even where no item reaches it."""
    if isinstance(filter_value, dict):
        for name, inner in filter_value.items():
            if isinstance(name, str) and name.startswith("$") and name not in FILTER_OPERATORS:
                raise ValueError(f"Unsupported operator: {name}")
            check_filter(inner)
    elif isinstance(filter_value, (list, tuple)):
        for inner in filter_value:
            check_filter(inner)


def passes(value: dict[str, Any], filter_value: Optional[dict[str, Any]]) -> bool:
    if not filter_value:
        return True
    return all(_compare(value.get(name), wanted) for name, wanted in filter_value.items())


def _compare(item_value: Any, filter_value: Any) -> bool:
    """Matches a value against a filter the way langgraph's stores do (JSONB-like)."""
    if isinstance(filter_value, dict):
        if any(isinstance(name, str) and name.startswith("$") for name in filter_value):
            return all(
                _apply_operator(item_value, operator, operand)
                for operator, operand in filter_value.items()
            )
        if not isinstance(item_value, dict):
            return False
        return all(_compare(item_value.get(name), inner) for name, inner in filter_value.items())
    if isinstance(filter_value, (list, tuple)):
        return (
            isinstance(item_value, (list, tuple))
            and len(item_value) == len(filter_value)
            and all(_compare(got, wanted) for got, wanted in zip(item_value, filter_value))
        )
    return item_value == filter_value


_ORDERINGS: dict[str, Callable[[float, float], bool]] = {
    "$gt": lambda got, bound: got > bound,
    "$gte": lambda got, bound: got >= bound,
    "$lt": lambda got, bound: got < bound,
    "$lte": lambda got, bound: got <= bound,
}


def _apply_operator(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return value == operand
    if operator == "$ne":
        return value != operand
    ordering = _ORDERINGS.get(operator)
    if ordering is None:
        raise ValueError(f"Unsupported operator: {operator}")
    try:
        return ordering(float(value), float(operand))
    except (TypeError, ValueError):
        return False


def matches(condition: MatchCondition, namespace: Namespace) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(wanted == "*" or label == wanted for label, wanted in pairs)
