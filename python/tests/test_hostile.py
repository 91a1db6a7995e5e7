"""Huge and hostile arguments give typed errors, never a crash or a hang."""

import pytest

import cheesedb


def test_a_label_of_ten_megabytes(alice):
    with pytest.raises(cheesedb.InvalidArgumentError, match="label"):
        alice.add_lot("x" * (10 * 1024 * 1024), "content")


def test_content_past_the_limit(alice):
    with pytest.raises(cheesedb.InvalidArgumentError, match="content"):
        alice.add_lot("note", b"x" * (16 * 1024 * 1024 + 1))


def test_a_leg_with_a_million_parents(alice):
    lot = alice.add_lot("note", "x")
    # One parent named a million times is one parent: a leg is a set.
    assert alice.get(alice.remember("m", legs=[[lot] * 1_000_000])).legs == [[lot]]
    with pytest.raises(cheesedb.InvalidArgumentError):
        alice.remember("m", legs=[list(range(1, 1_000_001))])


def test_a_million_legs(alice):
    lot = alice.add_lot("note", "x")
    with pytest.raises(cheesedb.InvalidArgumentError):
        alice.remember("m", legs=[[lot]] * 1_000_000)


@pytest.mark.parametrize("bad", [-1, -(2**70), 2**64, 2**70])
def test_ids_out_of_range(alice, bad):
    alice.add_lot("note", "x")
    for call in (
        lambda: alice.get(bad),
        lambda: alice.recall(bad),
        lambda: alice.preview_recall(bad),
        lambda: alice.has_vector(bad),
        lambda: alice.set_vector(bad, [1.0]),
        lambda: alice.remember("m", legs=[[bad]]),
    ):
        with pytest.raises(cheesedb.InvalidArgumentError, match="2\\*\\*64"):
            call()


def test_the_largest_id_is_just_unknown(alice):
    with pytest.raises(cheesedb.UnknownIdError):
        alice.get(2**64 - 1)


@pytest.mark.parametrize("bad", [-1, 2**64, 2**70])
def test_limits_out_of_range(alice, bad):
    with pytest.raises(cheesedb.InvalidArgumentError):
        alice.search("x", limit=bad)
    with pytest.raises(cheesedb.InvalidArgumentError):
        alice.search_vector([1.0], limit=bad)


def test_a_huge_limit_in_range_is_fine(alice):
    lot = alice.add_lot("note", "pune")
    alice.set_vector(lot, [1.0, 0.0])
    assert [hit.id for hit in alice.search("pune", limit=2**63)] == [lot]
    assert [hit.id for hit in alice.search_vector([1.0, 0.0], limit=2**64 - 1)] == [lot]


@pytest.mark.parametrize(
    "vector",
    [
        [float("nan")] * 4,
        [1.0, float("-inf")],
        [1e300, 1.0],  # past the range of a 32-bit float: infinite
        [0.5] * 100_000,  # past the largest dimension
    ],
)
def test_vectors_the_engine_cannot_use(alice, vector):
    lot = alice.add_lot("note", "x")
    # A search with any vector finds nothing in an agent without vectors; give it one.
    alice.set_vector(alice.add_lot("note", "with a vector"), [1.0] * min(len(vector), 8192))
    with pytest.raises(cheesedb.InvalidArgumentError):
        alice.set_vector(lot, vector)
    with pytest.raises(cheesedb.InvalidArgumentError):
        alice.search_vector(vector)


def test_lone_surrogates_are_refused_by_python(alice):
    with pytest.raises(UnicodeEncodeError):
        alice.add_lot("note", "\ud800")
    with pytest.raises(UnicodeEncodeError):
        alice.search("\udfff")


def test_an_agent_name_past_the_limit(store):
    with pytest.raises(cheesedb.InvalidArgumentError):
        store.create_agent("n" * 10_000)


def test_a_huge_token(store):
    with pytest.raises(cheesedb.UnknownAgentError):
        store.open_agent("cheesedb-" + "f" * 1_000_000)


def test_nothing_was_written_by_refused_calls(alice):
    lot = alice.add_lot("note", "x")
    for call in (
        lambda: alice.add_lot("", "x"),
        lambda: alice.remember("m", legs=[[lot]] * 1000),
        lambda: alice.set_vector(lot, [float("nan")]),
    ):
        with pytest.raises(cheesedb.InvalidArgumentError):
            call()
    assert alice.add_lot("note", "next") == lot + 1
    assert alice.has_vector(lot) is False
