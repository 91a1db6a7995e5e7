"""Fixtures shared by the tests of the cheesedb package: a fresh store and agent per test."""

import pytest

import cheesedb


@pytest.fixture
def store_path(tmp_path):
    """A store folder that does not exist yet (cheesedb creates it private to this user)."""
    return tmp_path / "store"


@pytest.fixture
def store(store_path):
    """An open store, closed after the test."""
    with cheesedb.Store(store_path) as opened:
        yield opened


@pytest.fixture
def alice(store):
    """An open agent named alice."""
    return store.open_agent(store.create_agent("alice"))
