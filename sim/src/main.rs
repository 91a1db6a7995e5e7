//! The `cheesedb-sim` command.
fn main() {}
