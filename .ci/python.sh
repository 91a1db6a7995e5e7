#!/usr/bin/env bash
# The Python package (python/): makes or reuses a virtual environment in target/ with maturin,
# pytest and langgraph, builds the wheel, installs it, and runs the pytest suite against it (with
# the `cheesedb` command built too, for the tests that connect to a memory server).
# Then proves that `pip install ./python` builds and installs the package from the source tree
# in a fresh environment. Exits non-zero when anything fails; pytest prints the summary line.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${CHEESEDB_PYTHON_VENV:-target/python-venv}"
python="${PYTHON:-python3}"
pip_quiet=(--quiet --disable-pip-version-check)

if ! "$venv/bin/python" -c 'import maturin, pytest, langgraph.store.base' 2>/dev/null; then
  echo "python.sh: creating $venv with maturin, pytest and langgraph 1.x"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install "${pip_quiet[@]}" "maturin>=1.9.4,<2" "pytest>=8,<10" "langgraph>=1,<2"
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("python.sh: maturin", m.version("maturin"), "langgraph", m.version("langgraph"))'

# A release build: the suite's timing tests (the GIL released during a slow sync) and the
# package's users see the optimised engine. The wheel lands in target/wheels.
rm -f target/wheels/cheesedb-*.whl
"$venv/bin/maturin" build --quiet --release -m python/Cargo.toml -o target/wheels
"$venv/bin/python" -m pip install "${pip_quiet[@]}" --force-reinstall --no-deps target/wheels/cheesedb-*.whl

# The tests of cheesedb.connect run a real memory server: the `cheesedb` command of this tree,
# in the `test` profile that the test step has already built (for the whole workspace, so that
# the features are the ones it unified and nothing is built again).
cargo build --quiet --profile test --workspace --bins
target_dir="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
export CHEESEDB_BINARY="$target_dir/debug/cheesedb"

# Run from outside the source tree, so that the installed wheel is what is imported. While
# working on one file: `cd python/tests && CHEESEDB_BINARY=... ../../target/python-venv/bin/python
# -m pytest -q test_connect.py` after `maturin develop -m python/Cargo.toml` in the venv.
(cd python/tests && "../../$venv/bin/python" -m pytest -q -p no:cacheprovider .)

# What a user does on a fresh machine with Rust: pip builds the package from the source tree
# through maturin, in an environment that has nothing installed yet.
fresh="target/python-fresh-venv"
rm -rf "$fresh"
"$python" -m venv "$fresh"
"$fresh/bin/python" -m pip install "${pip_quiet[@]}" ./python
(cd "$fresh" && bin/python -c '
import tempfile, cheesedb
with tempfile.TemporaryDirectory() as folder, cheesedb.Store(folder + "/store") as store:
    alice = store.open_agent(store.create_agent("alice"))
    lot = alice.add_lot("note", "installed from source")
    assert alice.get(lot).content == b"installed from source"
print("python.sh: pip install ./python works (cheesedb", cheesedb.__version__ + ")")
')
rm -rf "$fresh"
