"""Each named exception, raised by a real cause, with its facts as attributes."""

import os

import pytest

import cheesedb


def segment_files(store_path):
    """The segment files of every agent of the store."""
    found = []
    for folder, _, files in os.walk(store_path):
        found += [os.path.join(folder, name) for name in files if name.startswith("segment-")]
    return sorted(found)


def test_every_error_derives_from_the_base_class():
    names = [name for name in cheesedb.__all__ if name.endswith("Error")]
    assert len(names) >= 19
    for name in names:
        assert issubclass(getattr(cheesedb, name), cheesedb.Error)
    assert issubclass(cheesedb.Error, Exception)


def test_a_second_store_on_the_folder_is_locked_error(store_path):
    with cheesedb.Store(store_path):
        with pytest.raises(cheesedb.LockedError, match="in use"):
            cheesedb.Store(store_path)


def test_a_flipped_byte_is_corrupt_error_with_file_and_offset(store_path):
    with cheesedb.Store(store_path) as store:
        token = store.create_agent("alice")
        alice = store.open_agent(token)
        alice.add_lot("note", "a sentence to damage")
        # Damage at the very end would be taken for a torn write and cut; records after it
        # show it was committed.
        alice.add_lot("note", "a later record")
        alice.add_lot("note", "and another")
    [segment] = segment_files(store_path)
    with open(segment, "r+b") as file:
        data = file.read()
        offset = data.index(b"a sentence to damage") + 3
        file.seek(offset)
        file.write(bytes([data[offset] ^ 0x01]))
    with cheesedb.Store(store_path) as store:
        with pytest.raises(cheesedb.CorruptError) as raised:
            store.open_agent(token)
    error = raised.value
    assert error.file == os.path.relpath(segment, store_path)
    assert isinstance(error.offset, int) and 0 <= error.offset <= offset
    assert isinstance(error.reason, str) and error.reason
    assert error.file in str(error) and "\n" not in str(error)


def test_unknown_id_error_carries_the_id(alice):
    with pytest.raises(cheesedb.UnknownIdError, match="42") as raised:
        alice.get(42)
    assert raised.value.id == 42
    with pytest.raises(cheesedb.UnknownIdError):
        alice.recall(42)
    with pytest.raises(cheesedb.UnknownIdError):
        alice.remember("m", legs=[[42]])


def test_a_recalled_parent_is_dead_parent_error(alice):
    lot = alice.add_lot("note", "x")
    alice.recall(lot)
    with pytest.raises(cheesedb.DeadParentError) as raised:
        alice.remember("m", legs=[[lot]])
    assert raised.value.id == lot


def test_a_second_recall_is_already_recalled_error(alice):
    lot = alice.add_lot("note", "x")
    alice.recall(lot)
    with pytest.raises(cheesedb.AlreadyRecalledError) as raised:
        alice.recall(lot)
    assert raised.value.id == lot
    with pytest.raises(cheesedb.AlreadyRecalledError):
        alice.preview_recall(lot)


@pytest.mark.parametrize(
    "call",
    [
        lambda alice, lot: alice.add_lot("", "empty label"),
        lambda alice, lot: alice.remember("no legs", legs=[]),
        lambda alice, lot: alice.remember("an empty leg", legs=[[lot], []]),
        lambda alice, lot: alice.recall(lot, mode="gentle"),
        lambda alice, lot: alice.preview_recall(lot, mode="FAIR"),
        lambda alice, lot: alice.search("x", limit=-1),
        lambda alice, lot: alice.set_vector(lot, []),
        lambda alice, lot: alice.set_vector(lot, [0.0, 0.0]),
        lambda alice, lot: alice.set_vector(lot, [1.0, float("nan")]),
        lambda alice, lot: alice.set_vector(lot, [float("inf")]),
        lambda alice, lot: alice.search_vector([float("nan")]),  # the agent holds a vector
        lambda alice, lot: alice.get(-1),
        lambda alice, lot: alice.get(2**64),
    ],
)
def test_unusable_arguments_are_invalid_argument_error(alice, call):
    lot = alice.add_lot("note", "x")
    alice.set_vector(alice.add_lot("note", "with a vector"), [1.0])
    with pytest.raises(cheesedb.InvalidArgumentError):
        call(alice, lot)


def test_bad_agent_names_are_invalid_argument_error(store):
    with pytest.raises(cheesedb.InvalidArgumentError):
        store.create_agent("")
    with pytest.raises(cheesedb.InvalidArgumentError):
        store.create_agent("cheesedb-looks-like-a-token")
    with pytest.raises(cheesedb.InvalidArgumentError):
        store.create_agent("x" * 257)


def test_unknown_names_and_tokens_are_unknown_agent_error(store, tmp_path):
    with pytest.raises(cheesedb.UnknownAgentError):
        store.delete_agent("nobody")
    with pytest.raises(cheesedb.UnknownAgentError):
        store.open_agent("not a token")
    with pytest.raises(cheesedb.UnknownAgentError):
        store.open_agent("cheesedb-" + "0" * 64)
    with cheesedb.Store(tmp_path / "other") as other:
        foreign = other.create_agent("alice")
    with pytest.raises(cheesedb.UnknownAgentError, match="token"):
        store.open_agent(foreign)


def test_a_name_in_use_is_agent_exists_error(store):
    store.create_agent("alice")
    with pytest.raises(cheesedb.AgentExistsError, match="alice"):
        store.create_agent("alice")


def test_a_deleted_agent_is_agent_deleted_error(store):
    alice = store.open_agent(store.create_agent("alice"))
    store.delete_agent("alice")
    with pytest.raises(cheesedb.AgentDeletedError):
        alice.add_lot("note", "x")
    with pytest.raises(cheesedb.AgentDeletedError):
        alice.verify()


def test_a_write_to_a_read_only_store_is_read_only_error(store_path):
    cheesedb.Store(store_path).close()
    with cheesedb.Store(store_path, read_only=True) as reader:
        with pytest.raises(cheesedb.ReadOnlyError):
            reader.create_agent("alice")


def test_a_folder_others_may_write_is_folder_not_private_error(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o777)
    with pytest.raises(cheesedb.FolderNotPrivateError, match="chmod"):
        cheesedb.Store(folder)


def test_a_history_that_does_not_pass_through_the_kept_fingerprint(store):
    alice = store.open_agent(store.create_agent("alice"))
    bob = store.open_agent(store.create_agent("bob"))
    alice.add_lot("note", "alice's")
    bob.add_lot("note", "bob's")
    with pytest.raises(cheesedb.HistoryMismatchError) as raised:
        alice.verify(kept=bob.verify())
    assert raised.value.records == 1


def test_a_folder_that_cannot_be_made_is_storage_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    with pytest.raises(cheesedb.StorageError) as raised:
        cheesedb.Store(blocker / "store")
    error = raised.value
    assert isinstance(error.operation, str) and isinstance(error.path, str) and isinstance(error.kind, str)
    assert "\n" not in str(error)


def test_the_messages_are_one_line(alice):
    for call in (lambda: alice.get(9), lambda: alice.remember("m", legs=[]), lambda: alice.recall(1, mode="x")):
        with pytest.raises(cheesedb.Error) as raised:
            call()
        assert str(raised.value) and "\n" not in str(raised.value)


def test_wrong_types_are_type_error(alice):
    lot = alice.add_lot("note", "x")
    for call in (
        lambda: alice.add_lot("note", 5),
        lambda: alice.add_lot(5, "x"),
        lambda: alice.get("1"),
        lambda: alice.get(1.0),
        lambda: alice.remember("m", legs="abc"),
        lambda: alice.remember("m", legs=[lot]),
        lambda: alice.remember("m", legs=[["1"]]),
        lambda: alice.remember("m", legs=5),
        lambda: alice.set_vector(lot, "abc"),
        lambda: alice.set_vector(lot, ["a"]),
        lambda: alice.search(b"x"),
        lambda: alice.recall(lot, mode=1),
    ):
        with pytest.raises(TypeError):
            call()


def test_a_bool_is_never_an_id_or_a_limit(alice):
    # True == 1 to Python, so without a check get(True) read lot 1: a mistake taken for an id.
    lot = alice.add_lot("note", "the first lot, id 1")
    memory = alice.remember("a memory of it", [[lot]])
    assert lot == 1
    for call in (
        lambda: alice.get(True),
        lambda: alice.audit(True),
        lambda: alice.trust(True),
        lambda: alice.has_vector(True),
        lambda: alice.set_vector(True, [1.0]),
        lambda: alice.preview_recall(True),
        lambda: alice.recall(True),
        lambda: alice.remember("m", [[True]]),
        lambda: alice.remember("m", [[lot, False]]),
        lambda: alice.search("lot", limit=True),
    ):
        with pytest.raises(TypeError, match="bool"):
            call()
    with alice.batch() as batch:
        with pytest.raises(TypeError, match="bool"):
            batch.set_vector(True, [1.0])
        with pytest.raises(TypeError, match="bool"):
            batch.remember("m", [[True]])
    assert [node.id for node in alice.list()] == [lot, memory]
    assert alice.get(lot).alive
