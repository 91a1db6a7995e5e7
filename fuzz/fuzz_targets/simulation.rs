//! Random workloads whose every choice comes from the input, on the simulated disk, checked
//! against the model: any violation is a crash of the target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let outcome = cheesedb_sim::harness::run_from_bytes(bytes, cheesedb_sim::harness::FUZZ_OPERATIONS);
    if let Some(violation) = outcome.violation {
        panic!("{violation}");
    }
});
