#!/usr/bin/env bash
# Benchmark checks (the cheesedb-bench crate, tests/bench/), run by .ci/run:
#  1. its tests with the SQLite side: SQLite and cheesedb remove the same ids on the same data,
#     Fair and Strict, so the comparison times the same work; SQLite's Erase leaves the text in
#     no file; cheesedb's keyword search and SQLite FTS5 match the same texts for the same OR
#     queries;
#  2. every scenario of `cheesedb-bench --compare sqlite` runs and prints its JSON, at a tiny
#     size whose figures mean nothing (docs/BENCHMARKS.md has the real command);
#  3. `cheesedb-bench --encryption` measures an encrypted agent beside a plaintext one and SQLite;
#  4. `cheesedb-bench --server` starts the `cheesedb` command built beside it as a server,
#     measures both sides and stops it cleanly;
#  5. `--auto-compaction`, `--spaces`, `--uniform-graph` and `--erase-floor` run at tiny sizes,
#     the second and third twice each beside SQLite, removing the same counts there.
# Everything is built for the whole workspace in the `test` profile, as the test step built it,
# with one feature more (cheesedb-bench/sqlite): only SQLite (about 80 s) and the benchmark are
# compiled again, and the `cheesedb` binary is the one the earlier steps used.
set -euo pipefail
cd "$(dirname "$0")/.."

features=cheesedb-bench/sqlite
tests=$(cargo test -q --workspace --features "$features" --no-run --message-format=json 2>/dev/null \
  | grep '"src_path":"[^"]*/tests/bench/src/main.rs"' | grep '"test":true' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$tests" ] || { echo "bench.sh: no test binary of cheesedb-bench was built" >&2; exit 1; }
# Run from the crate's folder, as cargo test would.
(cd tests/bench && "$tests")

cargo build -q --profile test --workspace --bins --features "$features"
bench="${CARGO_TARGET_DIR:-$PWD/target}/debug/cheesedb-bench"

output=$(mktemp)
trap 'rm -f "$output"' EXIT
"$bench" --smoke --compare sqlite --json >"$output"
python3 - "$output" <<'EOF'
import json
import sys

with open(sys.argv[1]) as file:
    result = json.load(file)
for engine in ("cheesedb", "sqlite"):
    figures = result[engine]
    for key in ("single_writes_per_second", "recall_fair_untrusted_seconds", "agent_open_seconds", "verify_bytes_per_second"):
        assert figures[key] > 0, f"{engine}: {key} missing"
    for key in ("search_keyword_median_seconds", "search_first_after_open_seconds", "search_agent_open_seconds"):
        assert figures[key] > 0, f"{engine}: {key} missing"
for key in ("search_writes_searched_per_second", "search_index_bytes_per_memory", "vector_median_seconds", "hybrid_median_seconds"):
    assert key in result["cheesedb"], f"cheesedb: {key} missing"
for kind in ("fair_untrusted", "strict_untrusted", "fair_erase", "strict_erase"):
    key = f"recall_{kind}_removed_count"
    assert result["cheesedb"][key] == result["sqlite"][key], f"{key} differs"
assert result["cheesedb"]["search_hits_count"] == result["sqlite"]["search_hits_count"], "search hits differ"
print("bench smoke run: every scenario ran on both engines; they removed the same counts and found as many hits")
EOF

"$bench" --encryption --smoke --compare sqlite --json >"$output"
python3 - "$output" <<'EOF'
import json
import sys

with open(sys.argv[1]) as file:
    result = json.load(file)
for engine in ("plaintext", "encrypted", "sqlite"):
    for key in ("single_writes_per_second", "recall_fair_erase_seconds", "agent_open_seconds"):
        assert result[engine][key] > 0, f"{engine}: {key} missing"
for kind in ("fair_untrusted", "strict_untrusted", "fair_erase", "strict_erase"):
    key = f"recall_{kind}_removed_count"
    assert result["encrypted"][key] == result["sqlite"][key] == result["plaintext"][key], f"{key} differs"
assert result["paired_writes"]["encrypted_ratio_round_median"] > 0
print("bench --encryption smoke run: both agents and SQLite measured; they removed the same counts")
EOF

"$bench" --server --smoke --json >"$output"
python3 - "$output" <<'EOF'
import json
import sys

with open(sys.argv[1]) as file:
    result = json.load(file)
for side in ("in_process", "through_server"):
    for key in ("get_median_us", "get_p99_us", "durable_writes_per_second"):
        assert result[side][key] > 0, f"{side}: {key} missing"
assert result["server_write_ratio"] > 0
print("bench --server smoke run: both sides measured")
EOF

"$bench" --auto-compaction --smoke --json >"$output"
python3 - "$output" <<'EOF'
import json
import sys

with open(sys.argv[1]) as file:
    result = json.load(file)
assert result["segments_compacted"] >= 2, result
assert result["writes_during"] >= 1 and result["write_wait_longest_ms"] > 0, result
assert result["compaction_by_hand_ms"] > 0, result
print("bench --auto-compaction smoke run: compacted by itself, writes timed meanwhile")
EOF

"$bench" --spaces --smoke --compare sqlite --repeat 2 --json >"$output"
python3 - "$output" <<'EOF'
import json
import sys

with open(sys.argv[1]) as file:
    result = json.load(file)
assert result["runs"] == 2, result
assert result["removed"] == result["sqlite_removed"] > 0, result
assert result["untrusted_ratio"] > 0 and result["space_writes_per_second"] > 0, result
print("bench --spaces smoke run: two runs on both engines; they removed the same counts")
EOF

"$bench" --uniform-graph --smoke --compare sqlite --repeat 2 --json >"$output"
python3 - "$output" <<'EOF'
import json
import sys

with open(sys.argv[1]) as file:
    result = json.load(file)
calls = {call["call"]: call for call in result["calls"]}
assert len(calls) == 4, result
assert all(call["cheesedb_ms"] > 0 and call["sqlite_ms"] > 0 for call in calls.values()), result
print("bench --uniform-graph smoke run: four calls timed on both engines")
EOF

"$bench" --erase-floor --smoke --json >"$output"
python3 - "$output" <<'EOF'
import json
import sys

with open(sys.argv[1]) as file:
    result = json.load(file)
assert all(case["sync_ms"] > 0 and case["writes_ms"] > 0 for case in result["cases"]), result
print("bench --erase-floor smoke run: overwrites and their sync timed")
EOF
