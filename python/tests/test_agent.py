"""Agent: every method, on a fresh agent."""

import pytest

import cheesedb


def test_add_lot_takes_str_and_bytes(alice):
    first = alice.add_lot("user_message", "I live in Pune")
    second = alice.add_lot("web_page", b"\x00\xffbinary")
    third = alice.add_lot("tool", bytearray(b"from a bytearray"))
    assert (first, second, third) == (1, 2, 3)
    assert alice.get(first).content == "I live in Pune".encode()
    assert alice.get(second).content == b"\x00\xffbinary"
    assert alice.get(third).content == b"from a bytearray"


def test_unicode_content_is_stored_as_utf8(alice):
    lot = alice.add_lot("note", "Pune \u092a\u0941\u0923\u0947 \U0001f327")
    assert alice.get(lot).content.decode("utf-8") == "Pune \u092a\u0941\u0923\u0947 \U0001f327"


def test_a_lot_node_says_what_it_is(alice):
    lot = alice.add_lot("user_message", "hello")
    node = alice.get(lot)
    assert node.id == lot
    assert node.kind == "lot"
    assert node.alive is True
    assert node.label == "user_message"
    assert node.legs == []
    assert node.content == b"hello"
    assert repr(node) == "Node(id=1, kind='lot', alive=True, label='user_message', content=b'hello')"


def test_remember_keeps_its_legs(alice):
    a = alice.add_lot("a", "A")
    b = alice.add_lot("b", "B")
    c = alice.add_lot("c", "C")
    memory = alice.remember("learned", legs=[[a], (c, b)])
    node = alice.get(memory)
    assert node.kind == "memory"
    assert node.label is None
    assert node.legs == [[a], [b, c]]
    assert node.content == b"learned"
    assert repr(node) == f"Node(id={memory}, kind='memory', alive=True, legs=[[1], [2, 3]], content=b'learned')"


def test_nodes_are_frozen_values(alice):
    lot = alice.add_lot("note", "x")
    node = alice.get(lot)
    assert node == alice.get(lot)
    assert hash(node) == hash(alice.get(lot))
    assert node != alice.get(alice.add_lot("note", "y"))
    with pytest.raises(AttributeError):
        node.id = 5


def test_a_long_content_is_cut_in_the_repr(alice):
    node = alice.get(alice.add_lot("note", "x" * 1000))
    assert repr(node).endswith("'...)")
    assert len(repr(node)) < 200


def test_preview_recall_and_recall_in_both_modes(alice):
    a = alice.add_lot("user_message", "I live in Pune")
    b = alice.add_lot("web_page", "profile: lives in Pune")
    c = alice.add_lot("weather_tool", "Pune: rain")
    m1 = alice.remember("user lives in Pune", legs=[[a], [b]])
    m2 = alice.remember("Pune is rainy", legs=[[c]])
    m3 = alice.remember("carry an umbrella", legs=[[m1, m2]])
    assert alice.preview_recall(c) == [m2, m3]
    assert alice.preview_recall(a, mode="fair") == []
    assert alice.preview_recall(a, mode="strict") == [m1, m3]
    assert alice.list() == [alice.get(i) for i in (a, b, c, m1, m2, m3)]  # a preview writes nothing
    assert alice.recall(c, mode="fair", erase=True) == [m2, m3]
    assert alice.get(m1).alive
    gone = alice.get(m2)
    assert gone.alive is False and gone.content is None
    assert alice.get(c).content is None
    assert [node.id for node in alice.list()] == [a, b, m1]
    assert alice.recall(a, mode="strict") == [m1]
    assert [node.id for node in alice.list()] == [b]


def test_recall_without_erase_hides_and_compact_removes(alice, store_path):
    lot = alice.add_lot("secret", "the password is swordfish")
    alice.recall(lot)
    assert alice.get(lot).content is None
    alice.compact()
    assert alice.get(lot).content is None
    for folder, _, files in __import__("os").walk(store_path):
        for name in files:
            with open(__import__("os").path.join(folder, name), "rb") as file:
                assert b"swordfish" not in file.read()


def _files_hold(store_path, needle):
    import os

    for folder, _, files in os.walk(store_path):
        for name in files:
            with open(os.path.join(folder, name), "rb") as file:
                if needle in file.read():
                    return True
    return False


def test_a_recall_past_the_threshold_is_compacted_by_itself(store_path):
    import time

    with cheesedb.Store(store_path, auto_compact_dead_nodes=5) as store:
        alice = store.open_agent(store.create_agent("alice"))
        lot = alice.add_lot("scraper", "the scraper says swordfish")
        for index in range(9):
            alice.remember(f"swordfish, learned {index}", legs=[[lot]])
        alice.recall(lot)
        started = time.monotonic()
        while alice.report()["dead_text_nodes"] > 0:
            # Milliseconds of work; the bound only keeps a compaction that never runs from hanging.
            assert time.monotonic() - started < 600, alice.report()
            time.sleep(0.005)
        assert alice.report()["segments_compacted"] >= 1
        assert not _files_hold(store_path, b"swordfish")


def test_with_auto_compaction_off_the_text_waits_for_compact(store_path):
    with cheesedb.Store(store_path, auto_compact_dead_nodes=0) as store:
        alice = store.open_agent(store.create_agent("alice"))
        lot = alice.add_lot("scraper", "the scraper says swordfish")
        alice.recall(lot)
        assert alice.report()["dead_text_nodes"] == 1
        assert alice.report()["segments_compacted"] == 0
        assert _files_hold(store_path, b"swordfish")
        alice.compact()
        assert alice.report()["dead_text_nodes"] == 0
        assert not _files_hold(store_path, b"swordfish")


def test_erase_removes_the_text_from_disk_at_once(alice, store_path):
    import os

    lot = alice.add_lot("secret", "the password is swordfish")
    alice.recall(lot, erase=True)
    for folder, _, files in os.walk(store_path):
        for name in files:
            with open(os.path.join(folder, name), "rb") as file:
                assert b"swordfish" not in file.read()


def test_list_is_empty_for_a_new_agent(alice):
    assert alice.list() == []


def test_search_finds_words_best_first(alice):
    pune = alice.add_lot("note", "Pune is in India; Pune is rainy")
    alice.add_lot("note", "Paris is in France")
    other = alice.add_lot("note", "I once visited Pune")
    hits = alice.search("pune")
    assert [hit.id for hit in hits] == [pune, other]
    assert all(isinstance(hit.score, float) and hit.score > 0 for hit in hits)
    assert hits[0].score >= hits[1].score
    assert alice.search("pune", limit=1) == hits[:1]
    assert alice.search("pune", limit=0) == []
    assert alice.search("") == []
    assert repr(hits[0]).startswith(f"Hit(id={pune}, score=")


def test_recalled_nodes_are_never_found(alice):
    lot = alice.add_lot("note", "Pune")
    alice.recall(lot)
    assert alice.search("pune") == []


def test_vectors(alice):
    north = alice.add_lot("note", "north")
    east = alice.add_lot("note", "east")
    assert alice.has_vector(north) is False
    alice.set_vector(north, [0.0, 1.0])
    alice.set_vector(east, (1.0, 0.0))
    assert alice.has_vector(north)
    hits = alice.search_vector([0.1, 0.9], limit=5)
    assert [hit.id for hit in hits] == [north, east]
    assert hits[0].score == pytest.approx(0.9938837, rel=1e-5)
    assert [hit.id for hit in alice.search_vector([1, 0], limit=1)] == [east]
    hybrid = alice.search_hybrid("east", [0.0, 1.0], limit=5)
    assert {hit.id for hit in hybrid} == {north, east}
    with pytest.raises(cheesedb.InvalidArgumentError, match="dimension"):
        alice.search_vector([1.0, 0.0, 0.0])


def test_a_search_page_is_full_past_low_trust_hits_and_shows_each_hit(tmp_path):
    rules = {"web_page": "low", "user_message": "high"}
    with cheesedb.Store(tmp_path / "store", trust_rules=rules) as store:
        alice = store.open_agent(store.create_agent("alice"))
        for index in range(30):
            alice.add_lot("web_page", f"rain rain rain {index}")
        user = [alice.add_lot("user_message", f"it may rain later, {index}") for index in range(4)]
        alice.set_vector(user[0], [1.0, 0.0])
        memory = alice.remember("rain is coming", [[user[1]]])
        assert {hit.id for hit in alice.search("rain", limit=3)}.isdisjoint(user)
        page = alice.search_page("rain", limit=3, least_trust="normal")
        assert (len(page), page.ranking, page.vector_refused) == (3, "keyword", None)
        assert all(found.id in user + [memory] and found.trust == "high" for found in page.found)
        every = alice.search_page("rain", limit=100, among=[user[0], memory])
        assert sorted(found.id for found in every.found) == [user[0], memory]
        shown = {found.id: found for found in every.found}
        lot, learned = shown[user[0]], shown[memory]
        assert (lot.kind, lot.label, lot.content, lot.has_vector) == ("lot", "user_message", b"it may rain later, 0", True)
        assert (learned.kind, learned.label, learned.tracked_parents, learned.has_vector) == ("memory", None, [], False)
        assert repr(lot).startswith(f"Found(id={user[0]}, score=")
        hybrid = alice.search_page("rain", vector=[1.0, 0.0], limit=3, least_trust="high")
        assert hybrid.ranking == "hybrid" and hybrid.found[0].id == user[0]
        refused = alice.search_page("rain", vector=[1.0, 0.0, 0.0], limit=3, least_trust="normal")
        assert refused.ranking == "keyword"
        assert isinstance(refused.vector_refused, cheesedb.InvalidArgumentError)
        assert "dimension" in str(refused.vector_refused)
        assert [found.id for found in refused.found] == [found.id for found in page.found]
        alice.recall(user[1])
        assert memory not in {found.id for found in alice.search_page("rain", limit=100).found}
        with pytest.raises(cheesedb.InvalidArgumentError):
            alice.search_page("rain", least_trust="shady")
        with pytest.raises(TypeError):
            alice.search_page("rain", among="12")


def test_verify_returns_a_fingerprint_that_grows(alice):
    empty = alice.verify()
    assert isinstance(empty, str)
    alice.add_lot("note", "x")
    later = alice.verify()
    assert later != empty
    assert alice.verify(kept=empty) == later
    with pytest.raises(cheesedb.InvalidArgumentError):
        alice.verify(kept="not a fingerprint")


def test_report_is_a_dict_of_counts(alice):
    report = alice.report()
    assert isinstance(report, dict)
    assert report["segments"] >= 1
    assert report["repaired_anything"] is False
    assert report["snapshot_ignored"] is None
    assert set(report) >= {
        "segments",
        "records",
        "dropped_bytes",
        "erasures_completed_on_open",
        "key_slots_cut_on_open",
        "dead_text_nodes",
        "segments_compacted",
    }


def test_two_handles_of_one_agent_share_its_memory(store):
    token = store.create_agent("alice")
    first = store.open_agent(token)
    second = store.open_agent(token)
    lot = first.add_lot("note", "shared")
    assert second.get(lot).content == b"shared"
    first.close()
    assert second.get(lot).content == b"shared"


def test_agent_context_manager_and_close(store):
    token = store.create_agent("alice")
    with store.open_agent(token) as alice:
        lot = alice.add_lot("note", "x")
        assert repr(alice) == "Agent(name='alice')"
    with pytest.raises(cheesedb.ClosedError):
        alice.get(lot)
    assert repr(alice) == "Agent(name='alice', closed)"
    alice.close()  # closing twice does nothing
    with store.open_agent(token) as again:
        assert again.get(lot).content == b"x"


def test_every_call_on_a_closed_agent_raises_closed_error(alice):
    lot = alice.add_lot("note", "x")
    alice.close()
    calls = [
        lambda: alice.add_lot("note", "y"),
        lambda: alice.remember("m", legs=[[lot]]),
        lambda: alice.preview_recall(lot),
        lambda: alice.recall(lot),
        lambda: alice.get(lot),
        lambda: alice.list(),
        lambda: alice.search("x"),
        lambda: alice.set_vector(lot, [1.0]),
        lambda: alice.search_vector([1.0]),
        lambda: alice.search_hybrid("x", [1.0]),
        lambda: alice.has_vector(lot),
        lambda: alice.verify(),
        lambda: alice.batch(),
        lambda: alice.compact(),
        lambda: alice.report(),
        lambda: alice.search_page("x"),
    ]
    for call in calls:
        with pytest.raises(cheesedb.ClosedError, match="closed"):
            call()
    assert alice.name == "alice"


def test_docstrings_on_every_public_method():
    for cls in (
        cheesedb.Store,
        cheesedb.Agent,
        cheesedb.Batch,
        cheesedb.Node,
        cheesedb.Hit,
        cheesedb.SearchPage,
        cheesedb.Found,
    ):
        assert cls.__doc__, cls
        for name in dir(cls):
            if name.startswith("_"):
                continue
            assert getattr(cls, name).__doc__, f"{cls.__name__}.{name}"


def test_the_package_exports_its_names():
    assert cheesedb.__version__
    for name in cheesedb.__all__:
        assert hasattr(cheesedb, name), name
    assert cheesedb.Store.__module__ == "cheesedb"
