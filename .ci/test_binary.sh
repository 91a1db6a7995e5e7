#!/usr/bin/env bash
# Prints the path of the integration-test binary of the crate in folder $1 (tests, cli, sim), as
# the test step built it: for the whole workspace, so that the features, and so the build, are
# the same, and nothing is built again.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test -q --workspace --no-run --message-format=json 2>/dev/null \
  | grep "\"src_path\":\"[^\"]*/$1/tests/main.rs\"" \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1
