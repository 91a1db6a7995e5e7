//! The simulator's integration tests, one binary with a module per topic: exhaustive crash
//! states, determinism, group commit, the seams and every regression seed. One topic runs alone
//! with `cargo test -p cheesedb-sim --test integration TOPIC::`.

mod determinism;
mod exhaustive;
mod group_commit;
mod key_erase_garbled_write;
mod lost_write;
mod regressions;
mod seams;
