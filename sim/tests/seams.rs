//! The simulated disk is a disk, nothing more: it knows no name the engine gives its files, and
//! what it does depends on its arguments only, never on the environment of the process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use cheesedb_sim::harness::TRACE_ECHO_VARIABLE;
use cheesedb_sim::storage::SimStorage;

/// Every source file of the simulated disk, with its name.
const DISK_SOURCES: [(&str, &str); 8] = [
    ("mod.rs", include_str!("../src/storage/mod.rs")),
    ("disk.rs", include_str!("../src/storage/disk.rs")),
    ("operations.rs", include_str!("../src/storage/operations.rs")),
    ("faults.rs", include_str!("../src/storage/faults.rs")),
    ("crash.rs", include_str!("../src/storage/crash.rs")),
    ("inspect.rs", include_str!("../src/storage/inspect.rs")),
    ("checking.rs", include_str!("../src/storage/checking.rs")),
    ("error.rs", include_str!("../src/storage/error.rs")),
];

#[test]
fn the_disk_knows_no_file_name_of_the_engine() {
    let engine_words = ["segment", "catalog", "snapshot", "journal", "log::names", "agent_folder"];
    for (file, source) in DISK_SOURCES {
        for (number, line) in source.lines().enumerate() {
            // Comments may explain with the engine's words; the code may not use them.
            let code = line.split("//").next().unwrap_or_default().to_lowercase();
            for word in engine_words {
                assert!(!code.contains(word), "storage/{file}:{}: the disk names the engine's {word}", number + 1);
            }
        }
    }
}

#[test]
fn a_new_disk_reads_no_environment_variable() {
    // This test binary runs alone in its process, so setting the variable disturbs no other test.
    std::env::set_var(TRACE_ECHO_VARIABLE, "1");
    let storage = SimStorage::without_faults(1);
    assert!(!storage.is_echoing_trace(), "SimStorage::new turned the echo on from the environment");
    storage.echo_trace(true);
    assert!(storage.is_echoing_trace());
    std::env::remove_var(TRACE_ECHO_VARIABLE);
}
