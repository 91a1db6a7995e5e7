"""The Python package's speed against the same calls from Rust, measured side by side.

Runs the same work from Python (through the installed `cheesedb` package) and from Rust (the
example python/examples/rate_from_rust.rs, built in release mode), alternating so both see the
same disk, and prints the rates and their ratio:

- durable add_lot: each call synced to disk before it returns;
- loading memories in batches (one commit and one sync per batch).

    python python/bench/rate.py [--writes 2000] [--memories 100000] [--batch 10000] [--rounds 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import cheesedb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def python_rates(folder, writes, memories, batch_size):
    """(add_lot per second, memories per second) from Python."""
    with cheesedb.Store(folder) as store:
        writer = store.open_agent(store.create_agent("durable"))
        started = time.perf_counter()
        for index in range(writes):
            writer.add_lot("user_message", f"message number {index} from the user")
        add_lot_rate = writes / (time.perf_counter() - started)

        loader = store.open_agent(store.create_agent("loader"))
        source = loader.add_lot("import", "the source of every memory")
        legs = [[source]]
        started = time.perf_counter()
        loaded = 0
        while loaded < memories:
            count = min(batch_size, memories - loaded)
            with loader.batch() as batch:
                for index in range(loaded, loaded + count):
                    batch.remember(f"memory number {index}: something learned", legs)
            loaded += count
        return add_lot_rate, memories / (time.perf_counter() - started)


def rust_rates(binary, folder, writes, memories, batch_size):
    """(add_lot per second, memories per second) from Rust."""
    output = subprocess.run(
        [binary, folder, str(writes), str(memories), str(batch_size)], check=True, capture_output=True, text=True
    ).stdout
    rates = json.loads(output)
    return rates["add_lot_per_second"], rates["memories_per_second"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()

    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "-p", "cheesedb-python", "--example", "rate_from_rust"],
        check=True,
        cwd=ROOT,
    )
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    binary = os.path.join(target, "release", "examples", "rate_from_rust")

    results = {"python": [], "rust": []}
    for round_number in range(arguments.rounds):
        for side in ("rust", "python") if round_number % 2 else ("python", "rust"):
            with tempfile.TemporaryDirectory(dir=ROOT + "/target") as folder:
                store = os.path.join(folder, "store")
                work = (store, arguments.writes, arguments.memories, arguments.batch)
                rates = python_rates(*work) if side == "python" else rust_rates(binary, *work)
                results[side].append(rates)

    def median(side, which):
        return statistics.median(rates[which] for rates in results[side])

    print(f"{arguments.rounds} rounds, medians; {arguments.writes} durable writes, "
          f"{arguments.memories} memories in batches of {arguments.batch}")
    print(f"{'':28}{'Rust':>12}{'Python':>12}{'Python/Rust':>14}")
    for label, which in (("durable add_lot per second", 0), ("memories loaded per second", 1)):
        rust, python = median("rust", which), median("python", which)
        print(f"{label:28}{rust:>12,.0f}{python:>12,.0f}{python / rust:>13.2f}x")


if __name__ == "__main__":
    main()
