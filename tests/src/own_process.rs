//! Running one test alone in a process of its own: the integration tests share one binary, and
//! a test that changes something process-wide (a resource limit) or counts what the process
//! holds (open descriptors) must not share it with the others.

use std::process::Command;

/// The variable that tells a child of the test binary which test it is there to run.
const ALONE_VARIABLE: &str = "CHEESEDB_TEST_ALONE";

/// The name libtest gives the test function `test` of the module `module` (`module_path!()`):
/// its path below the crate, without the crate's own name, as `--exact` wants it.
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, below_crate)) => format!("{below_crate}::{test}"),
        None => String::from(test),
    }
}

/// Whether the calling test should run its body here. The first call, in the ordinary test
/// run, starts the test binary again with only that test (`--exact`, one thread) and fails if
/// the child fails, then returns `false`; in that child it returns `true`.
///
/// `module` is `module_path!()` and `test` the test function's name, so the name cannot drift
/// from the function it belongs to.
pub fn alone_in_a_process(module: &str, test: &str) -> bool {
    let name = test_name(module, test);
    if std::env::var(ALONE_VARIABLE).is_ok_and(|wanted| wanted == name) {
        return true;
    }
    let binary = std::env::current_exe().expect("the test binary knows its path");
    let status = Command::new(binary)
        .args(["--exact", &name, "--nocapture", "--test-threads", "1"])
        .env(ALONE_VARIABLE, &name)
        .status()
        .expect("the test binary starts again");
    assert!(status.success(), "{name}, run alone in a process of its own, failed: {status}");
    false
}
