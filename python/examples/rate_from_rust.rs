//! The Rust side of the Python package's rate comparison (python/bench/rate.py): the same
//! durable `add_lot` calls and the same batched load of memories, timed from Rust.
//!
//! `cargo run --release -p cheesedb-python --example rate_from_rust -- FOLDER WRITES MEMORIES
//! BATCH` prints one line of JSON: `{"add_lot_per_second": .., "memories_per_second": ..}`.

use std::time::Instant;

use cheesedb::{Leg, Store};

/// The arguments: where, how many durable writes, how many memories, how many per batch.
struct Settings {
    folder: String,
    writes: usize,
    memories: usize,
    batch_size: usize,
}

fn settings() -> Result<Settings, String> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [folder, writes, memories, batch_size] = arguments.as_slice() else {
        return Err("usage: rate_from_rust FOLDER WRITES MEMORIES BATCH".to_owned());
    };
    let number = |text: &str| text.parse::<usize>().map_err(|error| format!("{text}: {error}"));
    Ok(Settings {
        folder: folder.clone(),
        writes: number(writes)?,
        memories: number(memories)?,
        batch_size: number(batch_size)?.max(1),
    })
}

fn run(settings: &Settings) -> Result<(f64, f64), cheesedb::Error> {
    let store = Store::open(&settings.folder)?;
    let writer = store.open_agent(&store.create_agent("durable")?)?;
    let started = Instant::now();
    for index in 0..settings.writes {
        writer.add_lot("user_message", format!("message number {index} from the user").as_bytes())?;
    }
    let add_lot_per_second = rate(settings.writes, started);

    let loader = store.open_agent(&store.create_agent("loader")?)?;
    let source = loader.add_lot("import", b"the source of every memory")?;
    let legs = [Leg::from([source])];
    let started = Instant::now();
    let mut loaded = 0;
    while loaded < settings.memories {
        let count = settings.batch_size.min(settings.memories - loaded);
        loader.batch(|batch| {
            for index in loaded..loaded + count {
                batch.remember(format!("memory number {index}: something learned").as_bytes(), &legs)?;
            }
            Ok(())
        })?;
        loaded += count;
    }
    Ok((add_lot_per_second, rate(settings.memories, started)))
}

/// Items per second since `started`.
fn rate(items: usize, started: Instant) -> f64 {
    // Counts in the millions: far within the 52 bits a float holds exactly.
    #[allow(clippy::cast_precision_loss)]
    let items = items as f64;
    items / started.elapsed().as_secs_f64()
}

fn main() -> std::process::ExitCode {
    let outcome = settings().and_then(|settings| run(&settings).map_err(|error| error.to_string()));
    match outcome {
        Ok((add_lot_per_second, memories_per_second)) => {
            println!(
                "{{\"add_lot_per_second\": {add_lot_per_second:.1}, \"memories_per_second\": {memories_per_second:.1}}}"
            );
            std::process::ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("rate_from_rust: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}
