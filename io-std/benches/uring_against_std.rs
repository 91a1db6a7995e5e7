//! io_uring against std, side by side in one run: the same workloads on two stores, one through
//! `FileStorage::with_io(.., Io::Std)` and one through `(.., Io::Uring)`, taking turns every few
//! writes. A durable write here costs what the shared virtual disk and its journal make it cost
//! at that moment, which drifts by tens of times when other programs write; taking turns this
//! often lets both sides meet the same moments, so the ratio holds even when the rates drift.
//!
//! ```text
//! cargo bench -p cheesedb --bench uring_against_std -- [--scale N] [--memories N] [--cold]
//! ```
//!
//! `--scale` multiplies the number of writes (default 1); `--memories` sets the size of the agent
//! that open replays (default 1,000,000); `--cold` also times opens after emptying the page cache
//! (root only). Opens are the median of five each. Each scenario is a function over two `Side`s, so
//! another benchmark driver (such as `cheesedb bench`) can call them as they are.

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
    use std::time::{Duration, Instant};

    use cheesedb::{Agent, FileHandle, FileStorage, Id, Io, Leg, Options, Storage, StorageFile, Store, Token};

    /// One side of a comparison: a store (or a bare file) on one `Io`, and the time its turns took.
    pub struct Side {
        storage: FileStorage,
        agent: Agent,
        lot: Id,
        raw_file: Option<FileHandle>,
        _folder: tempfile::TempDir,
        /// Time spent in this side's turns.
        pub busy: Duration,
        /// Writes (or memories) done in them.
        pub done: usize,
        submissions_at_start: u64,
    }

    impl Side {
        /// A fresh store with one agent and one lot to build memories on.
        pub fn new(io: Io) -> Side {
            let folder = tempfile::tempdir().unwrap();
            let storage = storage(folder.path(), io);
            let store = Store::open_with(storage.clone(), Options::default()).unwrap();
            let agent = store.open_agent(&store.create_agent("bench").unwrap()).unwrap();
            let lot = agent.add_lot("source", b"the source every memory is learned from").unwrap();
            let submissions_at_start = storage.io_uring_submissions();
            Side {
                storage,
                agent,
                lot,
                raw_file: None,
                _folder: folder,
                busy: Duration::ZERO,
                done: 0,
                submissions_at_start,
            }
        }

        /// Writes or memories per second over this side's turns.
        pub fn rate(&self) -> f64 {
            self.done as f64 / self.busy.as_secs_f64()
        }

        /// io_uring submissions made since the side was set up.
        pub fn submissions(&self) -> u64 {
            self.storage.io_uring_submissions() - self.submissions_at_start
        }
    }

    fn storage(folder: &Path, io: Io) -> FileStorage {
        FileStorage::with_io(folder, io).expect("io_uring is unavailable on this machine")
    }

    fn content(index: usize) -> Vec<u8> {
        format!("memory {index:08}: a fact learned from the source, about seventy bytes").into_bytes()
    }

    /// Runs `turns` turns on each side, switching sides after every turn and switching which
    /// side goes first in every pair, so that neither meets a quieter disk. `turn` returns how
    /// many writes it did; only its own time is counted.
    pub fn take_turns(sides: &mut [Side; 2], turns: usize, mut turn: impl FnMut(&mut Side) -> usize) {
        for index in 0..turns {
            let order = if index % 2 == 0 { [0, 1] } else { [1, 0] };
            for position in order {
                let side = &mut sides[position];
                let started = Instant::now();
                let done = turn(side);
                side.busy += started.elapsed();
                side.done += done;
            }
        }
    }

    /// The storage alone, no engine: `per_turn` times a 100-byte overwrite inside a file written
    /// ahead of time, then a data sync. Shows what the backend itself costs.
    pub fn storage_alone(side: &mut Side, per_turn: usize) -> usize {
        if side.raw_file.is_none() {
            let mut file = side.storage.open_file("raw", true).unwrap();
            file.write_at(0, &vec![0u8; 1 << 20]).unwrap();
            file.sync().unwrap();
            side.raw_file = Some(file);
        }
        let offset = (side.done * 100) % ((1 << 20) - 100);
        let file = side.raw_file.as_mut().unwrap();
        for index in 0..per_turn {
            file.write_at((offset + index * 100) as u64 % ((1 << 20) - 100), &[index as u8; 100]).unwrap();
            file.sync().unwrap();
        }
        per_turn
    }

    /// `per_turn` durable writes one at a time, each acknowledged before the next.
    pub fn single_writes(side: &mut Side, per_turn: usize) -> usize {
        for index in 0..per_turn {
            side.agent.remember(&content(side.done + index), &[Leg::from([side.lot])]).unwrap();
        }
        per_turn
    }

    /// One batch of `size` memories: one durable write.
    pub fn batch(side: &mut Side, size: usize) -> usize {
        let (lot, first) = (side.lot, side.done);
        side.agent
            .batch(|batch| {
                for index in 0..size {
                    batch.remember(&content(first + index), &[Leg::from([lot])])?;
                }
                Ok(())
            })
            .unwrap();
        size
    }

    /// `threads` threads writing `per_thread` memories each to one agent at once: their writes
    /// share syncs (group commit).
    pub fn concurrent_writers(side: &mut Side, threads: usize, per_thread: usize) -> usize {
        let barrier = Barrier::new(threads);
        std::thread::scope(|scope| {
            for thread in 0..threads {
                let (agent, barrier, lot, first) = (side.agent.clone(), &barrier, side.lot, side.done);
                scope.spawn(move || {
                    barrier.wait();
                    for index in 0..per_thread {
                        let number = first + thread * per_thread + index;
                        agent.remember(&content(number), &[Leg::from([lot])]).unwrap();
                    }
                });
            }
        });
        threads * per_thread
    }

    /// Replay without snapshots, so that open reads and checks the whole log.
    fn replay_options() -> Options {
        Options::default().snapshot_after_bytes(u64::MAX)
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

    /// Opens the store in `folder` and the agent, replaying its whole log: the time it took and
    /// the io_uring submissions it made.
    pub fn open_agent(io: Io, folder: &Path, token: &Token) -> (Duration, u64) {
        let storage = storage(folder, io);
        let started = Instant::now();
        let store = Store::open_with(storage.clone(), replay_options()).unwrap();
        let agent = store.open_agent(token).unwrap();
        let elapsed = started.elapsed();
        assert!(agent.report().records > 0);
        (elapsed, storage.io_uring_submissions())
    }

    fn print_header() {
        println!(
            "| {:<48} | {:>15} | {:>15} | {:>8} | {:>11} |",
            "scenario", "std", "io_uring", "speed", "submissions"
        );
        println!("|{:-<50}|{:->17}|{:->17}|{:->10}|{:->13}|", "", "", "", "", "");
    }

    fn print_row(name: &str, std: &str, uring: &str, speed: f64, submissions: u64) {
        println!("| {name:<48} | {std:>15} | {uring:>15} | {speed:>7.2}x | {submissions:>11} |");
    }

    /// Runs one write scenario on a fresh pair of sides and prints its row.
    fn compare(name: &str, turns: usize, mut turn: impl FnMut(&mut Side) -> usize) {
        let mut sides = [Side::new(Io::Std), Side::new(Io::Uring)];
        take_turns(&mut sides, turns, &mut turn);
        let [std, uring] = &sides;
        let rate = |side: &Side| format!("{:.0} /s", side.rate());
        print_row(name, &rate(std), &rate(uring), uring.rate() / std.rate(), uring.submissions());
    }

    fn argument(name: &str) -> Option<usize> {
        let arguments: Vec<String> = std::env::args().collect();
        let at = arguments.iter().position(|argument| argument == name)?;
        arguments.get(at + 1)?.parse().ok()
    }

    pub fn main() {
        let scale = argument("--scale").unwrap_or(1).max(1);
        let memories = argument("--memories").unwrap_or(1_000_000);
        println!("io_uring against std, taking turns (speed: io_uring relative to std, above 1 is faster)");
        print_header();
        let writes = 2_000 * scale;
        compare(&format!("storage alone: 100 B overwrite + sync ({writes})"), writes / 20, |side| {
            storage_alone(side, 20)
        });
        compare(&format!("one durable write at a time ({writes})"), writes / 20, |side| single_writes(side, 20));
        compare(&format!("batches of 64 ({} batches)", 200 * scale), 200 * scale, |side| batch(side, 64));
        compare(&format!("batches of 1,024 ({} batches)", 40 * scale), 40 * scale, |side| batch(side, 1_024));
        compare(&format!("8 threads on one agent ({writes} writes)"), 10 * scale, |side| {
            concurrent_writers(side, 8, 25)
        });
        let folder = tempfile::tempdir().unwrap();
        let token = build_large_agent(folder.path(), memories);
        let log_bytes: u64 = std::fs::read_dir(folder.path().join("agent-0000000000000001"))
            .map(|entries| entries.flatten().filter_map(|entry| entry.metadata().ok()).map(|meta| meta.len()).sum())
            .unwrap_or(0);
        let name = format!("open: full replay of {memories} memories ({:.1} MB)", log_bytes as f64 / 1e6);
        compare_opens(folder.path(), &token, &name, false);
        if std::env::args().any(|argument| argument == "--cold") {
            let name = format!("open, cold page cache: {memories} memories");
            compare_opens(folder.path(), &token, &name, true);
        }
    }

    /// Empties the page cache of clean pages (root only), so that an open reads from the disk.
    fn drop_page_cache() {
        std::fs::write("/proc/sys/vm/drop_caches", "1").expect("--cold needs root, to write /proc/sys/vm/drop_caches");
    }

    /// Opens the agent five times with each `Io`, taking turns, and prints the median times.
    fn compare_opens(folder: &Path, token: &Token, name: &str, cold: bool) {
        let (mut std_times, mut uring_times, mut submissions) = (Vec::new(), Vec::new(), 0);
        for round in 0..5 {
            let order = if round % 2 == 0 { [Io::Std, Io::Uring] } else { [Io::Uring, Io::Std] };
            for io in order {
                if cold {
                    drop_page_cache();
                }
                let (elapsed, made) = open_agent(io, folder, token);
                match io {
                    Io::Std => std_times.push(elapsed),
                    Io::Uring => {
                        uring_times.push(elapsed);
                        submissions = made;
                    }
                    other => panic!("the benchmark compares only std and uring, not {other}"),
                }
            }
        }
        std_times.sort();
        uring_times.sort();
        let (std, uring) = (std_times[2], uring_times[2]);
        let seconds = |time: Duration| format!("{:.3} s", time.as_secs_f64());
        print_row(name, &seconds(std), &seconds(uring), std.as_secs_f64() / uring.as_secs_f64(), submissions);
    }
}
