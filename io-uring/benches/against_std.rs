//! io_uring against std, side by side in one run: the same workloads through
//! `Store::open_with` on `FileStorage::with_io(.., Io::Std)` and `(.., Io::Uring)`, alternating
//! the two in every round so that both see the same machine, and printing each scenario's
//! median rate and the ratio.
//!
//! ```text
//! cargo bench -p cheesedb-io-uring --bench against_std -- [--rounds N] [--memories N]
//! ```
//!
//! Each scenario is a function of an `Io` returning one figure, so another benchmark driver
//! (such as `cheesedb bench`) can call them as they are.

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("io_uring exists only on Linux: nothing to compare here");
}

#[cfg(target_os = "linux")]
fn main() {
    linux::main();
}

#[cfg(target_os = "linux")]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod linux {
    use std::path::Path;
    use std::sync::Barrier;
    use std::time::Instant;

    use cheesedb::{Agent, FileStorage, Id, Io, Leg, Options, Store, Token};

    /// What one scenario measured in one run.
    #[derive(Debug, Clone, Copy)]
    pub struct Figure {
        /// The quantity measured: operations per second, or seconds for an open.
        pub value: f64,
        /// io_uring submissions made during the run (0 for std).
        pub submissions: u64,
    }

    /// Settings of a run.
    #[derive(Debug, Clone, Copy)]
    pub struct Plan {
        pub rounds: usize,
        pub single_writes: usize,
        pub batches_of_64: usize,
        pub batches_of_1024: usize,
        pub writes_per_thread: usize,
        pub threads: usize,
        pub replay_memories: usize,
    }

    impl Default for Plan {
        fn default() -> Plan {
            Plan {
                rounds: 3,
                single_writes: 2_000,
                batches_of_64: 200,
                batches_of_1024: 40,
                writes_per_thread: 250,
                threads: 8,
                replay_memories: 1_000_000,
            }
        }
    }

    fn storage(folder: &Path, io: Io) -> FileStorage {
        FileStorage::with_io(folder, io).expect("io_uring is unavailable on this machine")
    }

    /// A fresh store with one agent and one lot to build memories on.
    fn fresh_agent(folder: &Path, io: Io, options: Options) -> (FileStorage, Agent, Id) {
        let storage = storage(folder, io);
        let store = Store::open_with(storage.clone(), options).unwrap();
        let agent = store.open_agent(&store.create_agent("bench").unwrap()).unwrap();
        let lot = agent.add_lot("source", b"the source every memory is learned from").unwrap();
        (storage, agent, lot)
    }

    fn content(index: usize) -> Vec<u8> {
        format!("memory {index:08}: a fact learned from the source, about seventy bytes").into_bytes()
    }

    /// The storage alone, no engine: a 100-byte overwrite inside a file written ahead of time,
    /// then a data sync, `writes` times: writes per second. Shows what the backend itself costs.
    pub fn raw_durable_writes(io: Io, writes: usize) -> Figure {
        use cheesedb::{Storage, StorageFile};
        let folder = tempfile::tempdir().unwrap();
        let storage = storage(folder.path(), io);
        let mut file = storage.open_file("raw", true).unwrap();
        file.write_at(0, &vec![0u8; writes * 100]).unwrap();
        file.sync().unwrap();
        let before = storage.io_uring_submissions();
        let started = Instant::now();
        for index in 0..writes {
            file.write_at((index * 100) as u64, &[index as u8; 100]).unwrap();
            file.sync().unwrap();
        }
        let elapsed = started.elapsed();
        Figure { value: writes as f64 / elapsed.as_secs_f64(), submissions: storage.io_uring_submissions() - before }
    }

    /// Durable writes one at a time, each acknowledged before the next: writes per second.
    pub fn single_writes(io: Io, writes: usize) -> Figure {
        let folder = tempfile::tempdir().unwrap();
        let (storage, agent, lot) = fresh_agent(folder.path(), io, Options::default());
        let before = storage.io_uring_submissions();
        let started = Instant::now();
        for index in 0..writes {
            agent.remember(&content(index), &[Leg::from([lot])]).unwrap();
        }
        let elapsed = started.elapsed();
        Figure { value: writes as f64 / elapsed.as_secs_f64(), submissions: storage.io_uring_submissions() - before }
    }

    /// Batches of `size` memories, each batch one durable write: memories per second.
    pub fn batches(io: Io, size: usize, count: usize) -> Figure {
        let folder = tempfile::tempdir().unwrap();
        let (storage, agent, lot) = fresh_agent(folder.path(), io, Options::default());
        let before = storage.io_uring_submissions();
        let started = Instant::now();
        for batch_index in 0..count {
            agent
                .batch(|batch| {
                    for index in 0..size {
                        batch.remember(&content(batch_index * size + index), &[Leg::from([lot])])?;
                    }
                    Ok(())
                })
                .unwrap();
        }
        let elapsed = started.elapsed();
        Figure {
            value: (size * count) as f64 / elapsed.as_secs_f64(),
            submissions: storage.io_uring_submissions() - before,
        }
    }

    /// `threads` threads writing to one agent at once (group commit): writes per second.
    pub fn concurrent_writers(io: Io, threads: usize, writes_per_thread: usize) -> Figure {
        let folder = tempfile::tempdir().unwrap();
        let (storage, agent, lot) = fresh_agent(folder.path(), io, Options::default());
        let before = storage.io_uring_submissions();
        let barrier = Barrier::new(threads + 1);
        let elapsed = std::thread::scope(|scope| {
            for thread in 0..threads {
                let (agent, barrier) = (agent.clone(), &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    for index in 0..writes_per_thread {
                        agent.remember(&content(thread * writes_per_thread + index), &[Leg::from([lot])]).unwrap();
                    }
                });
            }
            barrier.wait();
            let started = Instant::now();
            // The scope joins every writer before it returns.
            started
        })
        .elapsed();
        let writes = threads * writes_per_thread;
        Figure { value: writes as f64 / elapsed.as_secs_f64(), submissions: storage.io_uring_submissions() - before }
    }

    /// Replay without snapshots, so that open reads and checks the whole log.
    fn replay_options() -> Options {
        Options { snapshot_after_bytes: u64::MAX, ..Options::default() }
    }

    /// Writes an agent of `memories` memories (with std) for [`open_agent`] to replay.
    pub fn build_large_agent(folder: &Path, memories: usize) -> Token {
        let store = Store::open_with(storage(folder, Io::Std), replay_options()).unwrap();
        let token = store.create_agent("large").unwrap();
        let agent = store.open_agent(&token).unwrap();
        let lot = agent.add_lot("source", b"the source every memory is learned from").unwrap();
        for start in (0..memories).step_by(1_024) {
            agent
                .batch(|batch| {
                    for index in start..(start + 1_024).min(memories) {
                        batch.remember(&content(index), &[Leg::from([lot])])?;
                    }
                    Ok(())
                })
                .unwrap();
        }
        token
    }

    /// Opens the store and the agent (replaying its whole log): seconds.
    pub fn open_agent(io: Io, folder: &Path, token: &Token) -> Figure {
        let storage = storage(folder, io);
        let started = Instant::now();
        let store = Store::open_with(storage.clone(), replay_options()).unwrap();
        let agent = store.open_agent(token).unwrap();
        let elapsed = started.elapsed();
        assert!(agent.report().records > 0);
        Figure { value: elapsed.as_secs_f64(), submissions: storage.io_uring_submissions() }
    }

    fn median(mut values: Vec<f64>) -> f64 {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    }

    /// Runs `scenario` for std and io_uring alternately, `rounds` times each.
    fn compare(rounds: usize, mut scenario: impl FnMut(Io) -> Figure) -> (Figure, Figure) {
        let (mut std_values, mut uring_values, mut submissions) = (Vec::new(), Vec::new(), 0);
        for round in 0..rounds {
            // Alternate which goes first, so neither always meets a warmer or cooler disk.
            let order = if round % 2 == 0 { [Io::Std, Io::Uring] } else { [Io::Uring, Io::Std] };
            for io in order {
                let figure = scenario(io);
                match io {
                    Io::Std => std_values.push(figure.value),
                    Io::Uring => {
                        uring_values.push(figure.value);
                        submissions = figure.submissions;
                    }
                }
            }
        }
        (Figure { value: median(std_values), submissions: 0 }, Figure { value: median(uring_values), submissions })
    }

    fn print_row(name: &str, unit: &str, std: Figure, uring: Figure, higher_is_better: bool) {
        let ratio = if higher_is_better { uring.value / std.value } else { std.value / uring.value };
        println!(
            "| {name:<40} | {:>12.1} {unit:<3} | {:>12.1} {unit:<3} | {ratio:>6.2}x | {:>11} |",
            std.value, uring.value, uring.submissions
        );
    }

    fn parse_plan() -> Plan {
        let mut plan = Plan::default();
        let arguments: Vec<String> = std::env::args().skip(1).collect();
        let value = |name: &str| {
            arguments.iter().position(|argument| argument == name).and_then(|at| arguments.get(at + 1)?.parse().ok())
        };
        if let Some(rounds) = value("--rounds") {
            plan.rounds = rounds;
        }
        if let Some(memories) = value("--memories") {
            plan.replay_memories = memories;
        }
        plan
    }

    pub fn main() {
        let plan = parse_plan();
        println!("io_uring against std: median of {} rounds each, run alternately", plan.rounds);
        println!(
            "| {:<40} | {:>16} | {:>16} | {:>7} | {:>11} |",
            "scenario", "std", "io_uring", "speed", "submissions"
        );
        println!("|{:-<42}|{:->18}|{:->18}|{:->9}|{:->13}|", "", "", "", "", "");
        let (std, uring) = compare(plan.rounds, |io| raw_durable_writes(io, plan.single_writes));
        print_row(&format!("storage alone: overwrite + sync ({})", plan.single_writes), "/s", std, uring, true);
        let (std, uring) = compare(plan.rounds, |io| single_writes(io, plan.single_writes));
        print_row(&format!("one durable write at a time ({})", plan.single_writes), "/s", std, uring, true);
        let (std, uring) = compare(plan.rounds, |io| batches(io, 64, plan.batches_of_64));
        print_row(&format!("batches of 64 ({} batches)", plan.batches_of_64), "/s", std, uring, true);
        let (std, uring) = compare(plan.rounds, |io| batches(io, 1_024, plan.batches_of_1024));
        print_row(&format!("batches of 1,024 ({} batches)", plan.batches_of_1024), "/s", std, uring, true);
        let (std, uring) = compare(plan.rounds, |io| concurrent_writers(io, plan.threads, plan.writes_per_thread));
        let name = format!("{} threads on one agent ({} each)", plan.threads, plan.writes_per_thread);
        print_row(&name, "/s", std, uring, true);
        let folder = tempfile::tempdir().unwrap();
        let token = build_large_agent(folder.path(), plan.replay_memories);
        let (std, uring) = compare(plan.rounds, |io| open_agent(io, folder.path(), &token));
        print_row(&format!("open, full replay of {} memories", plan.replay_memories), "s", std, uring, false);
        println!(
            "(rates are durable writes or memories per second; speed is io_uring relative to std, above 1 is faster)"
        );
    }
}
