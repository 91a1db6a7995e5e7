#!/usr/bin/env bash
# The deterministic simulation, as CI runs it: a seed campaign on the simulated disk, the
# exhaustive crash-state and corruption sweeps, every mutant caught, and the fuzz targets
# smoke-run on stable with their corpus replayed. Prints the counts; exits non-zero on any
# violation, any mutant that survives, or any fuzz failure.
#
# Knobs (environment): SIM_SEEDS (default 2000), SIM_OPS (200), SIM_CRASHES_MIN (10000),
# SIM_FUZZ_SECONDS (15), SIM_GROUP_COMMIT_SEEDS (100).
set -euo pipefail

cd "$(dirname "$0")/.."
seeds="${SIM_SEEDS:-2000}"
operations="${SIM_OPS:-200}"
crashes_min="${SIM_CRASHES_MIN:-10000}"
fuzz_seconds="${SIM_FUZZ_SECONDS:-15}"
group_commit_seeds="${SIM_GROUP_COMMIT_SEEDS:-100}"
log_dir="$(mktemp -d)"
trap 'rm -rf "$log_dir"' EXIT

section() { printf '\n== %s\n' "$*"; }
fail() { printf 'sim.sh: %s\n' "$*" >&2; exit 1; }

section "simulation: build"
cargo build --release --locked -p cheesedb-sim

section "simulation: $seeds seeds of $operations operations, swarm faults"
started=$(date +%s)
./target/release/cheesedb-sim --seeds "$seeds" --ops "$operations" --faults swarm | tee "$log_dir/campaign.txt"
echo "campaign wall time: $(( $(date +%s) - started )) s"
crashes=$(sed -n 's/.* crashes \([0-9]*\) (during recovery.*/\1/p' "$log_dir/campaign.txt" | head -n 1)
ran=$(sed -n 's/^cheesedb-sim: seeds \([0-9]*\),.*/\1/p' "$log_dir/campaign.txt" | head -n 1)
[ "${ran:-0}" -ge "$seeds" ] || fail "only ${ran:-0} seeds ran"
[ "${crashes:-0}" -ge "$crashes_min" ] || fail "only ${crashes:-0} crash-and-recover cycles (want $crashes_min)"

section "simulation: the cheesedb crate's threads and group commit, $group_commit_seeds seeds"
./target/release/cheesedb-sim --group-commit --seeds "$group_commit_seeds"

section "simulation: mutants"
# The mutants feature changes the core's features, so cargo keeps that build apart from the
# ordinary one in the same target folder, and both reuse the same dependencies. Only the binary
# at target/release/cheesedb-sim is shared: the mutants one is copied away, and the ordinary
# build run again puts the clean binary back there.
cargo build --release --locked -p cheesedb-sim --features mutants
mutant_binary="$log_dir/cheesedb-sim-mutants"
cp target/release/cheesedb-sim "$mutant_binary"
cargo build --release --locked -p cheesedb-sim
# The ordinary build names no mutant; the copied one names them all.
if ./target/release/cheesedb-sim --list-mutants 2>&1 | grep -qv 'has no mutants'; then
    fail "target/release/cheesedb-sim is still the mutants build"
fi
if "$mutant_binary" --list-mutants 2>&1 | grep -q 'has no mutants'; then
    fail "the copied binary is not the mutants build"
fi
caught=0
for mutant in $("$mutant_binary" --list-mutants); do
    if "$mutant_binary" --mutant "$mutant" --seeds "$seeds" --ops "$operations" --faults swarm > "$log_dir/$mutant.txt"; then
        cat "$log_dir/$mutant.txt"
        fail "mutant $mutant was not caught"
    fi
    grep -q "mutant $mutant caught by seed" "$log_dir/$mutant.txt" || { cat "$log_dir/$mutant.txt"; fail "mutant $mutant: no verdict"; }
    grep "mutant $mutant caught by seed" "$log_dir/$mutant.txt"
    caught=$((caught + 1))
done
[ "$caught" -ge 19 ] || fail "only $caught mutants (want the 19 of docs/SIMULATION.md)"
echo "mutants caught: $caught"

section "fuzzing: $fuzz_seconds s per target, then the corpus replayed"
if ! cargo fuzz --version > /dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
for target in record_round_trip open_segment simulation request_decoder key_files replica_head; do
    rm -rf "fuzz/artifacts/$target"
    # New inputs go to a scratch folder; the checked-in corpus is only read.
    mkdir -p "$log_dir/corpus-$target"
    if ! (cd fuzz && cargo fuzz run --sanitizer none "$target" "$log_dir/corpus-$target" "corpus/$target" -- \
        -max_total_time="$fuzz_seconds" > "$log_dir/fuzz-$target.txt" 2>&1); then
        tail -n 40 "$log_dir/fuzz-$target.txt"
        fail "fuzz target $target failed (input in fuzz/artifacts/$target; replay a simulation input with cheesedb-sim --from-bytes)"
    fi
    grep -E '^Done [0-9]+ runs' "$log_dir/fuzz-$target.txt" | sed "s/^/$target: /"
    if ! (cd fuzz && cargo fuzz run --sanitizer none "$target" "corpus/$target" -- -runs=0 > "$log_dir/replay-$target.txt" 2>&1); then
        tail -n 40 "$log_dir/replay-$target.txt"
        fail "replaying the corpus of $target failed"
    fi
    echo "$target: corpus of $(ls "fuzz/corpus/$target" | wc -l) inputs replayed"
done

section "simulation: done"
grep '^cheesedb-sim:' "$log_dir/campaign.txt"
echo "mutants caught: $caught"
