#!/usr/bin/env bash
# Fails when a tracked file holds a line that a merge left unresolved: one that starts with
# "<<<<<<< " or ">>>>>>> ", or that is exactly "=======". Binary files are skipped.
set -uo pipefail
cd "$(dirname "$0")/.."

found=$(git grep -n -I -E -e '^<<<<<<< ' -e '^>>>>>>> ' -e '^=======$' -- .)
status=$?
case $status in
  0)
    echo "unresolved merge-conflict markers:"
    echo "$found"
    exit 1
    ;;
  1) echo "no merge-conflict markers in tracked files" ;;
  # git grep itself failed (not a repository, say): that proves nothing either way.
  *) exit "$status" ;;
esac
