#!/usr/bin/env bash
# The long run of the mixed-clients test (cli/tests/serve_mixed_clients.rs): 16 library,
# command-line and MCP clients on two agents through one memory server that is killed with
# SIGKILL and started again (once per 25,000 operations unless told otherwise); afterwards
# every acknowledged write is looked up and every agent verified.
#
#   bash .ci/soak.sh [OPERATIONS [KILLS]]       (200,000 operations by default)
#
# The environment variables CHEESEDB_MIXED_OPERATIONS and CHEESEDB_MIXED_KILLS work as well.
# Not part of .ci/run: it takes minutes. The binary and the test are built in release.
set -euo pipefail
cd "$(dirname "$0")/.."

operations=${1:-${CHEESEDB_MIXED_OPERATIONS:-200000}}
kills=${2:-${CHEESEDB_MIXED_KILLS:-}}
export CHEESEDB_MIXED_OPERATIONS=$operations
if [ -n "$kills" ]; then
    export CHEESEDB_MIXED_KILLS=$kills
fi

cargo test --release -p cheesedb-cli --test integration --no-run

output=$(mktemp)
trap 'rm -f "$output"' EXIT
started=$SECONDS
cargo test -q --release -p cheesedb-cli --test integration serve_mixed_clients:: -- --nocapture | tee "$output"
python3 - "$output" "$((SECONDS - started))" <<'PYTHON'
import re
import sys

text = open(sys.argv[1]).read()
line = next((line for line in text.splitlines() if line.startswith("mixed clients:")), None)
assert line, "the test printed no figures"
figures = {
    name: re.search(pattern, line).group(1)
    for name, pattern in (
        ("operations", r"(\d+) operations"),
        ("writes", r"(\d+) acknowledged writes"),
        ("recalls", r"(\d+) acknowledged recalls"),
        ("kills", r"(\d+) kills"),
        ("seconds", r"([\d.]+) s of work"),
    )
}
print(
    "soak: {operations} operations, {writes} acknowledged writes, {recalls} acknowledged recalls, "
    "{kills} kills, {seconds} s of work".format(**figures)
    + f" ({sys.argv[2]} s with the final check); nothing lost"
)
PYTHON
