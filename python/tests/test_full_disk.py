"""A really full disk, from Python: a small tmpfs filled to the brim.

The write that does not fit raises StorageError with kind 'no space left'; every write acknowledged
before it is still there after a reopen, and the store takes writes again once space is freed.
Skipped, with the reason, where this process may not mount a tmpfs.
"""

import errno
import os
import subprocess

import pytest

import cheesedb

WRITES_MAX = 10_000


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs mounted for this test, unmounted after it."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"no tmpfs to fill: {mounted.stderr.strip() or 'mount refused'}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(folder):
    """Writes a file until the disk is full; returns its path."""
    filler = folder / "filler"
    chunk = b"\0" * 65536
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(chunk)
                handle.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC, error
    return filler


def test_a_full_disk_is_a_storage_error_and_nothing_acknowledged_is_lost(small_disk):
    folder = small_disk / "store"
    acknowledged = {}
    with cheesedb.Store(folder) as store:
        token = store.create_agent("alice")
        alice = store.open_agent(token)
        acknowledged[alice.add_lot("note", "before the disk filled")] = b"before the disk filled"
        filler = fill(small_disk)
        with pytest.raises(cheesedb.StorageError) as refused:
            for index in range(WRITES_MAX):
                content = (f"fact {index} " * 200).encode()
                acknowledged[alice.add_lot("note", content)] = content
        assert refused.value.kind == "no space left"
        assert "no space" in str(refused.value)
    os.remove(filler)

    with cheesedb.Store(folder) as store:
        alice = store.open_agent(token)
        for lot, content in acknowledged.items():
            assert alice.get(lot).content == content, f"lot {lot} was lost"
        after = alice.add_lot("note", "after space was freed")
        assert alice.get(after).content == b"after space was freed"
