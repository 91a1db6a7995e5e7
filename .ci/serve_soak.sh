#!/usr/bin/env bash
# The memory server's longer run: 16 library clients on 4 agents write and recall for a minute
# (SERVE_SOAK_MS to change it), the server is killed with SIGKILL, started again on its stale
# socket, and every acknowledged write and recall must be there, with no id handed out twice.
# The same test runs for 1.5 s in `cargo test`. It runs in the `test` profile (optimised, with
# debug assertions), which the test step has already built: a release build of the whole
# command would cost CI minutes and check nothing more.
set -euo pipefail
cd "$(dirname "$0")/.."

# The command's test binary, from the build the test step made.
tests=$(bash .ci/test_binary.sh cli)
[ -x "$tests" ] || { echo "serve_soak.sh: no test binary of the command was built" >&2; exit 1; }
# Run from the crate's folder, as cargo test would.
(cd cli && SERVE_SOAK_MS="${SERVE_SOAK_MS:-60000}" "$tests" serve_durability:: --nocapture)
