//! `cheesedb-bench --erase-floor`: what the disk allows an Erase whose records are scattered
//! over the log, measured without any engine.
//!
//! An Erase must overwrite each erased record where it lies and make that durable. The graph
//! section's families are spread over the whole history, so their records sit on as many pages
//! as there are records. This writes a file the size of the graph section's log, then times
//! what no engine can do with less: the same number of small overwrites at random places of it,
//! in ascending order, and one `fdatasync`. The file is written just before, as the log was, so
//! its pages are in the page cache for both.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use fastrand::Rng;
use serde_json::json;

use crate::failure::Failure;
use crate::figures::median;
use crate::folder::BenchFolder;
use crate::output::Printer;

/// The shape of the measurement.
#[derive(Debug, Clone, Copy)]
pub struct FloorSize {
    /// Bytes of the file: the graph section's log (268 MiB at the full size).
    pub file_bytes: u64,
    /// Overwrites: the records of the family an Erase of the graph section removes.
    pub records: usize,
    /// Bytes of each overwrite: a memory's text and salt in the graph section.
    pub record_bytes: usize,
}

/// The graph section's full size: its plaintext log, and an encrypted agent's key table of as
/// many nodes (80 bytes a slot), whose erased slots are as scattered.
pub const FULL: [(&str, FloorSize); 2] = [
    ("a plaintext agent's log", FloorSize { file_bytes: 268 << 20, records: 10_001, record_bytes: 96 }),
    ("an encrypted agent's key table", FloorSize { file_bytes: 1_100_004 * 80, records: 10_001, record_bytes: 80 }),
];
/// Sizes that only show it works.
pub const SMOKE: [(&str, FloorSize); 1] =
    [("a small file", FloorSize { file_bytes: 4 << 20, records: 200, record_bytes: 96 })];

/// Bytes written at a time while the file is made.
const FILL_BYTES: usize = 1 << 20;

fn failed<'a>(what: &'a str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Failure + 'a {
    move |error| Failure::new(format!("{what} {}: {error}", path.display()))
}

/// Makes the file, durably, as a log written before an Erase would be.
fn fill(path: &Path, size: FloorSize) -> Result<File, Failure> {
    let file =
        OpenOptions::new().create_new(true).read(true).write(true).open(path).map_err(failed("cannot create", path))?;
    let chunk = vec![b'm'; FILL_BYTES];
    let mut written = 0u64;
    while written < size.file_bytes {
        let length = FILL_BYTES.min(usize::try_from(size.file_bytes - written).unwrap_or(FILL_BYTES));
        file.write_all_at(&chunk[..length], written).map_err(failed("cannot write", path))?;
        written += length as u64;
    }
    file.sync_all().map_err(failed("cannot sync", path))?;
    Ok(file)
}

/// What one measurement took: the overwrites into the page cache, then the sync that puts
/// them on the disk.
#[derive(Debug, Clone, Copy)]
struct Overwritten {
    writes: Duration,
    sync: Duration,
}

/// The overwrites and the sync, timed.
fn overwrite(file: &File, path: &Path, size: FloorSize, seed: u64) -> Result<Overwritten, Failure> {
    let mut random = Rng::with_seed(seed);
    let room = size.file_bytes.saturating_sub(size.record_bytes as u64).max(1);
    let mut offsets: Vec<u64> = (0..size.records).map(|_| random.u64(..room)).collect();
    offsets.sort_unstable();
    let zeros = vec![0u8; size.record_bytes];
    let started = Instant::now();
    for offset in offsets {
        file.write_all_at(&zeros, offset).map_err(failed("cannot overwrite", path))?;
    }
    let written = Instant::now();
    file.sync_data().map_err(failed("cannot sync", path))?;
    Ok(Overwritten { writes: written - started, sync: written.elapsed() })
}

/// Runs each case `repeat` times, each on a fresh file, and prints the medians.
pub fn run(folder: &BenchFolder, cases: &[(&str, FloorSize)], repeat: u32, printer: Printer) -> Result<(), Failure> {
    let mut measured = Vec::new();
    for (case, (name, size)) in cases.iter().enumerate() {
        let (mut writes, mut syncs) = (Vec::new(), Vec::new());
        for run in 1..=repeat.max(1) {
            let path = folder.fresh(&format!("erase-floor-{case}"), run)?.join("file");
            let file = fill(&path, *size)?;
            let took = overwrite(&file, &path, *size, u64::from(run))?;
            writes.push(took.writes.as_secs_f64() * 1000.0);
            syncs.push(took.sync.as_secs_f64() * 1000.0);
            drop(file);
            std::fs::remove_file(&path).map_err(failed("cannot remove", &path))?;
        }
        measured.push((*name, *size, median(&mut writes), median(&mut syncs)));
    }
    let value = json!({
        "runs": repeat.max(1),
        "cases": measured.iter().map(|(name, size, writes, sync)| json!({
            "case": name,
            "file_bytes": size.file_bytes,
            "records": size.records,
            "record_bytes": size.record_bytes,
            "writes_ms": writes,
            "sync_ms": sync,
        })).collect::<Vec<_>>(),
    });
    printer.result(value, || {
        measured
            .iter()
            .map(|(name, size, writes, sync)| {
                format!(
                    "{name}: {} overwrites of {} bytes at random places of a {:.0} MiB file: {writes:.1} ms into the page cache, then {sync:.1} ms for one fdatasync (medians of {})",
                    size.records,
                    size.record_bytes,
                    size.file_bytes as f64 / f64::from(1u32 << 20),
                    repeat.max(1),
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overwrites_land_where_they_say_and_nowhere_else() {
        let folder = BenchFolder::new(None).unwrap();
        let path = folder.fresh("erase-floor", 1).unwrap().join("log");
        let size = SMOKE[0].1;
        let file = fill(&path, size).unwrap();
        let took = overwrite(&file, &path, size, 7).unwrap();
        assert!(took.writes > Duration::ZERO && took.sync > Duration::ZERO);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, size.file_bytes);
        let zeroed = bytes.iter().filter(|byte| **byte == 0).count();
        assert!(zeroed > 0 && zeroed <= size.records * size.record_bytes, "{zeroed}");
        assert!(bytes.iter().all(|byte| *byte == 0 || *byte == b'm'));
    }
}
