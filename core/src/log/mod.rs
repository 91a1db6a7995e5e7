//! The agent's log on disk: file names and the segment scanner.

pub mod names;
pub mod scan;
