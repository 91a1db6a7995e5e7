//! Helpers shared by the integration tests in `tests/`: the [`backend::Backend`] abstraction
//! and the [`conformance!`] macro that runs one behaviour suite on every storage backend, and
//! storage wrappers that inject failures or fix the random bytes. The reference model is the
//! simulator's, [`cheesedb_sim::model`], so the property tests and the simulator cannot drift.

use std::path::{Path, PathBuf};

/// Every file below `folder`, recursively, with its bytes.
pub fn all_files(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                found.push((path, bytes));
            }
        }
    }
    found
}

/// The files below `folder` whose bytes contain `needle`.
pub fn files_containing(folder: &Path, needle: &[u8]) -> Vec<PathBuf> {
    all_files(folder)
        .into_iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|window| window == needle))
        .map(|(path, _)| path)
        .collect()
}

/// The segment files of the only agent in the store at `folder`, in order.
pub fn segment_files(folder: &Path) -> Vec<PathBuf> {
    let mut segments: Vec<PathBuf> = all_files(folder)
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| path.extension().is_some_and(|extension| extension == "log"))
        .collect();
    segments.sort();
    segments
}

/// One test alone in a child process of the test binary.
pub mod own_process;
pub use own_process::{alone_in_a_process, test_name};

pub mod faulty;

pub mod backend;

pub mod seeded;

pub mod small_disk;

pub mod key_recovery;
