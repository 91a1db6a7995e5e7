#!/usr/bin/env bash
# The MCP server against the official MCP Python SDK (2.x): builds the cheesedb binary (in the
# `test` profile and for the whole workspace, with the features the test step unified, so what
# it built is reused rather than built again), makes a
# virtual environment with the SDK and pytest (kept in target/ so later runs reuse it), and runs
# tests/mcp/. Exits non-zero when anything fails; pytest prints the summary line.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${CHEESEDB_MCP_VENV:-target/mcp-venv}"
python="${PYTHON:-python3}"

if ! "$venv/bin/python" -c 'import mcp, pytest, sys; sys.exit(0 if int(__import__("importlib.metadata").metadata.version("mcp").split(".")[0]) >= 2 else 1)' 2>/dev/null; then
  echo "mcp.sh: creating $venv with the MCP Python SDK 2.x and pytest"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp>=2,<3" pytest
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("mcp.sh: MCP Python SDK", m.version("mcp"))'

cargo build --quiet --profile test --workspace --bins
export CHEESEDB_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/cheesedb"

"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/mcp
