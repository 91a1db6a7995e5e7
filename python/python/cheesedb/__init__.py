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

When a memory server (``cheesedb serve``) holds the store, several programs share it:
``cheesedb.connect(path)`` returns a :class:`Client`, a Store whose calls go to the server, and the agents
it opens have the same methods, values and exceptions as local ones.

    with cheesedb.connect("/data/cheesedb") as client:
        alice = client.open_agent(token)
        alice.track_reads(True)  # what it reads becomes a parent of what it remembers

Every error is a subclass of :class:`cheesedb.Error`.
"""

from ._native import (
    Agent,
    AgentDeletedError,
    AgentExistsError,
    AgentInUseError,
    AlreadyEncryptedError,
    AlreadyRecalledError,
    Batch,
    BatchConflictError,
    Client,
    ClosedError,
    connect,
    ConnectionLostError,
    CorruptError,
    DeadParentError,
    Error,
    FolderNotPrivateError,
    ForkedProcessError,
    Found,
    StoredNotShippedError,
    SocketRefusedError,
    FrameTooLargeError,
    HistoryMismatchError,
    Hit,
    InternalError,
    InvalidArgumentError,
    LastAdminError,
    LockedError,
    MalformedMessageError,
    Node,
    OutcomeUnknownError,
    PeerRefusedError,
    PoisonedError,
    ReadOnlyError,
    RepairNeededError,
    RoleTooLowError,
    SearchPage,
    ServerBusyError,
    ServerUnavailableError,
    Space,
    SpaceExistsError,
    StorageError,
    Store,
    UnknownAgentError,
    UnknownIdError,
    UnknownSpaceError,
    VersionMismatchError,
    __version__,
)

__all__ = [
    "Agent",
    "AgentDeletedError",
    "AgentExistsError",
    "AgentInUseError",
    "AlreadyEncryptedError",
    "AlreadyRecalledError",
    "Batch",
    "BatchConflictError",
    "Client",
    "ClosedError",
    "connect",
    "ConnectionLostError",
    "CorruptError",
    "DeadParentError",
    "Error",
    "FolderNotPrivateError",
    "ForkedProcessError",
    "Found",
    "StoredNotShippedError",
    "SocketRefusedError",
    "FrameTooLargeError",
    "HistoryMismatchError",
    "Hit",
    "InternalError",
    "InvalidArgumentError",
    "LastAdminError",
    "LockedError",
    "MalformedMessageError",
    "Node",
    "OutcomeUnknownError",
    "PeerRefusedError",
    "PoisonedError",
    "ReadOnlyError",
    "RepairNeededError",
    "RoleTooLowError",
    "SearchPage",
    "ServerBusyError",
    "ServerUnavailableError",
    "Space",
    "SpaceExistsError",
    "StorageError",
    "Store",
    "UnknownAgentError",
    "UnknownIdError",
    "UnknownSpaceError",
    "VersionMismatchError",
    "__version__",
]
