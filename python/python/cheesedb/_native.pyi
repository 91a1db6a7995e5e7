"""Type stubs of the native module; the package re-exports everything here."""

import os
from types import TracebackType
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Type, Union

from typing_extensions import Literal, Self, TypedDict, final

__version__: str

Content = Union[str, bytes, bytearray]
Legs = Iterable[Iterable[int]]
Vector = Sequence[float]
RecallMode = Literal["fair", "strict"]
TrustLevel = Literal["low", "normal", "high"]

class Report(TypedDict):
    """What opening an agent found and did, and the dead text compaction would take out now."""

    segments: int
    records: int
    records_from_snapshot: int
    snapshot_ignored: Optional[str]
    dropped_bytes: int
    dropped_records: int
    erasures_completed_on_open: int
    temporary_files_removed: int
    segments_started_on_open: int
    unfinished_rolls_undone_on_open: int
    erase_journals_replayed_on_open: int
    erase_journals_discarded_on_open: int
    key_slots_restored_on_open: int
    key_slots_cut_on_open: int
    epoch_slots_cut_on_open: int
    epoch_slots_destroyed_on_open: int
    epoch_rotations_finished_on_open: int
    dead_text_nodes: int
    segments_compacted: int
    repaired_anything: bool

class Store:
    """A store folder holding any number of agents.

    Opening creates the folder (private to this user) if needed and locks it: a second Store on
    the same folder, in this process or another, raises LockedError until this one is closed.
    With read_only=True nothing is written or locked and every write raises ReadOnlyError.
    trust_rules (lot label -> "low", "normal" or "high") sets what Agent.trust answers; every
    label is "normal" without it. auto_compact_dead_nodes sets how many recalled lots and
    memories may keep their text in the files before compaction starts by itself, in the
    background (10,000 without it; 0 turns it off). Also a context manager that closes the
    store at the end.
    """

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        read_only: bool = False,
        trust_rules: Optional[Mapping[str, TrustLevel]] = None,
        auto_compact_dead_nodes: Optional[int] = None,
    ) -> None: ...
    @property
    def path(self) -> str:
        """The store folder, as given; for a Client, the server's socket."""
    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only."""
    def create_agent(self, name: str, encrypted: bool = False) -> str:
        """Creates an agent named `name` and returns its token, shown only now. With
        encrypted=True its contents, lot labels and vectors are sealed under keys derived from
        the token, which the store never keeps."""
    def encrypt_agent(self, token: str) -> str:
        """Converts the plaintext agent `token` opens into an encrypted one (same name, token,
        ids and history; the plaintext files overwritten with zeros and removed) and returns
        its new fingerprint, since the history is chained anew. Raises AgentInUseError while a
        handle of it is open, AlreadyEncryptedError for an encrypted agent."""
    def open_agent(self, token: str) -> "Agent":
        """Opens the agent that `token` belongs to."""
    def create_space(self, name: str, first_admin: "Agent") -> "Space":
        """Creates the space `name` with `first_admin` (an agent of this store) as its first
        admin; returns that agent's handle to it."""
    def space_names(self) -> List[str]:
        """The names of the spaces, in the order they were created."""
    def delete_agent(self, name: str) -> None:
        """Deletes the agent named `name` and every file made for it."""
    def agent_names(self) -> List[str]:
        """The names of all agents, in the order they were created."""
    def close(self) -> None:
        """Closes the store and every agent opened from it, releasing the folder."""
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exception_type: Optional[Type[BaseException]],
        _exception: Optional[BaseException] = None,
        _traceback: Optional[TracebackType] = None,
    ) -> bool: ...

def connect(path: Union[str, "os.PathLike[str]"]) -> "Client":
    """Connects to the memory server (`cheesedb serve`) at `path`: its socket, or the data
    folder holding cheesedb.sock. Raises ServerUnavailableError when none answers there."""

@final
class Client(Store):
    """A connection to a memory server: a Store whose every call is a request to the server.

    Its path is the server's socket. Shared between threads; each agent it opens has a
    connection and a session of its own. Closing it closes those connections, not the server.
    """

class SpaceRecall(TypedDict):
    space: List[int]
    members: Dict[str, List[int]]

@final
class Space:
    """A member's handle to a space its store shares between agents, bounded by the member's
    role at each call ("read", "write" or "admin")."""

    @property
    def name(self) -> str: ...
    def add_lot(self, label: str, content: Content) -> int: ...
    def remember(self, content: Content, legs: Legs) -> int: ...
    def share(self, id: int) -> int:
        """The member's own id standing for node `id` of the space, to name in its legs."""
    def get(self, id: int) -> "Node": ...
    def author_of(self, id: int) -> str: ...
    def written_by(self, agent: str) -> List[int]: ...
    def list(self) -> List["Node"]: ...
    def recall(self, id: int, mode: RecallMode = "fair", erase: bool = False) -> SpaceRecall:
        """Recalls `id` in the space, with what every member built on it."""
    def preview_recall(self, id: int, mode: RecallMode = "fair") -> SpaceRecall: ...
    def members(self) -> List[Tuple[str, str]]: ...
    def grant(self, agent: str, role: Literal["read", "write", "admin"]) -> None: ...
    def revoke(self, agent: str) -> None: ...

@final
class Agent:
    """One agent's memory, opened with Store.open_agent(token) or Client.open_agent(token)
    (through a memory server, with the same methods, values and exceptions); shared between
    threads."""

    @property
    def name(self) -> str:
        """The name this agent was created with."""
    @property
    def is_encrypted(self) -> bool:
        """Whether the agent's contents, lot labels and vectors are sealed under keys derived
        from its token."""
    def space(self, name: str) -> "Space":
        """This agent's handle to the space `name`, if it holds a role in it (else
        UnknownSpaceError)."""
    def add_lot(self, label: str, content: Content) -> int:
        """Adds a source (a lot) and returns its id; durable when it returns."""
    def remember(self, content: Content, legs: Legs) -> int:
        """Adds a memory learned through `legs` (such as [[a], [b, c]]) and returns its id."""
    def preview_recall(self, id: int, mode: RecallMode = "fair") -> List[int]:
        """The memories that recall(id, mode) would remove, without writing anything."""
    def recall(self, id: int, mode: RecallMode = "fair", erase: bool = False) -> List[int]:
        """Recalls `id` and every memory that depended on it; returns the memories removed."""
    def get(self, id: int) -> "Node":
        """One lot or memory, read from disk and checked against its digest."""
    def audit(self, id: int) -> "Node":
        """As get, but a recalled node keeps its content until erased or compacted away."""
    def list(self) -> List["Node"]:
        """The alive lots and memories, ascending by id."""
    def search(self, query: str, limit: int = 10) -> List["Hit"]:
        """Lots and memories whose content holds words of `query`, best first (BM25)."""
    def set_vector(self, id: int, vector: Vector) -> None:
        """Attaches a vector to the lot or memory `id`, replacing any it had."""
    def search_vector(self, vector: Vector, limit: int = 10) -> List["Hit"]:
        """The lots and memories whose vectors are nearest to `vector` by cosine."""
    def search_hybrid(self, query: str, vector: Vector, limit: int = 10) -> List["Hit"]:
        """A keyword search and a vector search fused by reciprocal rank."""
    def search_page(
        self,
        query: str,
        vector: Optional[Vector] = None,
        limit: int = 10,
        least_trust: TrustLevel = "low",
        among: Optional[Iterable[int]] = None,
    ) -> "SearchPage":
        """One page of hits with what is shown of each, trust below `least_trust` passed over."""
    def has_vector(self, id: int) -> bool:
        """Whether the lot or memory `id` has a vector."""
    def verify(self, kept: Optional[str] = None) -> str:
        """Re-reads and checks the whole history; returns its head fingerprint."""
    def batch(self) -> "Batch":
        """Writes that commit together: use as `with agent.batch() as batch:`."""
    def compact(self) -> None:
        """Rewrites the agent's files without the text of recalled lots and memories."""
    def report(self) -> Report:
        """What opening this agent found and did."""
    def trust(self, id: int) -> TrustLevel:
        """How far to believe the lot or memory `id` under the trust rules."""
    def track_reads(self, on: bool) -> None:
        """Turns read tracking on or off: what get() and the searches return becomes a parent
        of the next memory remembered through this handle."""
    def close(self) -> None:
        """Closes this handle; later calls raise ClosedError."""
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exception_type: Optional[Type[BaseException]],
        _exception: Optional[BaseException] = None,
        _traceback: Optional[TracebackType] = None,
    ) -> bool: ...

@final
class Batch:
    """Writes that commit together with one sync when the `with` block ends."""

    def add_lot(self, label: str, content: Content) -> int:
        """Adds a source to the batch; returns the id it will have."""
    def remember(self, content: Content, legs: Legs) -> int:
        """Adds a memory to the batch; returns the id it will have."""
    def set_vector(self, id: int, vector: Vector) -> None:
        """Attaches a vector to a lot or memory, alive or added earlier in the batch."""
    def __len__(self) -> int: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exception_type: Optional[Type[BaseException]],
        _exception: Optional[BaseException] = None,
        _traceback: Optional[TracebackType] = None,
    ) -> bool: ...

@final
class Node:
    """One lot or memory; frozen."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> Literal["lot", "memory", "shared"]: ...
    @property
    def alive(self) -> bool: ...
    @property
    def content(self) -> Optional[bytes]: ...
    @property
    def label(self) -> Optional[str]: ...
    @property
    def legs(self) -> List[List[int]]: ...
    @property
    def tracked_parents(self) -> List[int]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Hit:
    """One answer of a search; frozen."""

    @property
    def id(self) -> int: ...
    @property
    def score(self) -> float: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class SearchPage:
    """One page of search hits, best first, and how they were ranked; frozen."""

    @property
    def found(self) -> List["Found"]: ...
    @property
    def ranking(self) -> Literal["keyword", "hybrid"]: ...
    @property
    def vector_refused(self) -> Optional["Error"]: ...
    def __len__(self) -> int: ...

@final
class Found:
    """One alive lot or memory a page search found, with what is shown of it; frozen."""

    @property
    def id(self) -> int: ...
    @property
    def score(self) -> float: ...
    @property
    def kind(self) -> Literal["lot", "memory"]: ...
    @property
    def label(self) -> Optional[str]: ...
    @property
    def tracked_parents(self) -> List[int]: ...
    @property
    def content(self) -> bytes: ...
    @property
    def trust(self) -> TrustLevel: ...
    @property
    def has_vector(self) -> bool: ...

class Error(Exception):
    """The base of every error cheesedb raises."""

class LockedError(Error): ...

class CorruptError(Error):
    file: str
    offset: int
    reason: str

class StorageError(Error):
    operation: str
    path: str
    kind: str

class OutcomeUnknownError(Error):
    operation: str
    path: str
    kind: str

class PoisonedError(Error): ...

class UnknownIdError(Error):
    id: int

class DeadParentError(Error):
    id: int

class AlreadyRecalledError(Error):
    id: int

class InvalidArgumentError(Error): ...
class UnknownAgentError(Error): ...
class AgentExistsError(Error): ...

class SpaceExistsError(Error):
    name: str

class UnknownSpaceError(Error):
    name: str

class RoleTooLowError(Error):
    held: str
    needed: str

class LastAdminError(Error): ...
class AgentDeletedError(Error): ...
class ReadOnlyError(Error): ...
class RepairNeededError(Error): ...
class FolderNotPrivateError(Error): ...

class HistoryMismatchError(Error):
    records: int

class BatchConflictError(Error): ...
class ServerUnavailableError(Error):
    path: str
    reason: str

class ConnectionLostError(Error):
    reason: str
    write_in_flight: bool

class VersionMismatchError(Error):
    client: int
    server: int

class FrameTooLargeError(Error):
    size_bytes: int
    limit_bytes: int

class MalformedMessageError(Error):
    reason: str

class ServerBusyError(Error):
    connections_max: int

class PeerRefusedError(Error):
    uid: int

class AgentInUseError(Error):
    name: str

class AlreadyEncryptedError(Error):
    name: str

class ForkedProcessError(Error):
    opening_process_id: int
    current_process_id: int

class StoredNotShippedError(Error):
    id: int | None
    reason: str

class SocketRefusedError(Error):
    path: str
    problem: str

class ClosedError(Error): ...
class InternalError(Error): ...
