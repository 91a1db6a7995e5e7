#!/usr/bin/env bash
# io_uring checks, run by .ci/run after the tests (Linux only):
#  1. the io_uring backend is really used: a conformance test on io_uring makes io_uring_enter
#     system calls, counted by strace, and the same test on std files makes none;
#  2. where the kernel refuses io_uring (ENOSYS, EPERM, injected by strace), the probe fails
#     with an error that says why.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)" != Linux ]; then
  echo "not Linux: io_uring checks skipped"
  exit 0
fi
if ! command -v strace >/dev/null; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null
fi

# The path of the executable that a cargo build or test command produces (its last one).
executable() {
  "$@" --message-format=json 2>/dev/null | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1
}

# The conformance suite's binary, from the build the test step made.
tests=$(bash .ci/test_binary.sh tests)
probe=$(executable cargo build -q -p cheesedb-io-uring --example probe)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# How many io_uring_enter calls the test named $1 made, by strace's summary (calls column).
enter_calls() {
  strace -f -qq -c -e trace=io_uring_enter -o "$log" "$tests" --exact "$1" --test-threads 1 >/dev/null
  awk '$NF == "io_uring_enter" { calls = $4 } END { print calls + 0 }' "$log"
}

failures=0
uring=$(enter_calls semantics::io_uring::everything_survives_a_reopen)
std=$(enter_calls semantics::std_files::everything_survives_a_reopen)
echo "io_uring_enter calls: $uring with Io::Uring, $std with Io::Std"
if [ "$uring" -lt 10 ] || [ "$std" -ne 0 ]; then
  echo "FAILED: the io_uring backend is not what runs"
  failures=$((failures + 1))
fi

echo "probe: $("$probe")"
for errno in ENOSYS EPERM; do
  message=$(strace -f -qq -o /dev/null -e trace=io_uring_setup -e inject=io_uring_setup:error=$errno "$probe" || true)
  echo "probe with io_uring_setup failing with $errno: $message"
  if ! grep -q "io_uring is unavailable: .*($errno)" <<<"$message"; then
    echo "FAILED: the probe does not name $errno"
    failures=$((failures + 1))
  fi
done

echo "uring: $((3 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
