#!/usr/bin/env bash
# Fails when any tracked file still holds a merge-conflict marker: a line that starts with
# "<<<<<<< " or ">>>>>>> ", or is exactly "=======". A half-resolved merge must not land, in code
# or in a document.
set -euo pipefail
cd "$(dirname "$0")/.."

if git grep -nE '^(<<<<<<< |>>>>>>> |=======$)' -- . ':!.ci/conflict_markers.sh'; then
    echo "conflict markers above: resolve the merge" >&2
    exit 1
fi
echo "no conflict markers in $(git ls-files | wc -l) tracked files"
