"""cheesedb: agent memory with a recall button.

An AI agent learns from sources it cannot fully trust. Each memory stored here names the sources
(or other memories) it was learned from; when a source turns out to be wrong, malicious or
private, one call removes it and everything learned from it, and with ``erase=True`` its text is
gone from the files on disk before the call returns.

    import cheesedb

    with cheesedb.Store("/data/cheesedb") as store:
        token = store.create_agent("alice")
        alice = store.open_agent(token)
        a = alice.add_lot("user_message", "I live in Pune")
        m = alice.remember("user lives in Pune", legs=[[a]])
        alice.recall(a, erase=True)  # -> [m]

Every error is a subclass of :class:`cheesedb.Error`.
"""

from ._native import (
    AgentDeletedError,
    AgentExistsError,
    AlreadyRecalledError,
    Agent,
    Batch,
    BatchConflictError,
    ClosedError,
    CorruptError,
    DeadParentError,
    Error,
    FolderNotPrivateError,
    HistoryMismatchError,
    Hit,
    InternalError,
    InvalidArgumentError,
    LockedError,
    Node,
    OutcomeUnknownError,
    PoisonedError,
    ReadOnlyError,
    RepairNeededError,
    StorageError,
    Store,
    UnknownAgentError,
    UnknownIdError,
    __version__,
)

__all__ = [
    "Agent",
    "AgentDeletedError",
    "AgentExistsError",
    "AlreadyRecalledError",
    "Batch",
    "BatchConflictError",
    "ClosedError",
    "CorruptError",
    "DeadParentError",
    "Error",
    "FolderNotPrivateError",
    "HistoryMismatchError",
    "Hit",
    "InternalError",
    "InvalidArgumentError",
    "LockedError",
    "Node",
    "OutcomeUnknownError",
    "PoisonedError",
    "ReadOnlyError",
    "RepairNeededError",
    "StorageError",
    "Store",
    "UnknownAgentError",
    "UnknownIdError",
    "__version__",
]
