//! Writing the benchmark's result: one line of JSON for scripts (`--json`), or a table for people.

use std::io::{ErrorKind, Write};

use serde_json::Value;

use crate::failure::Failure;

/// Where the result goes and in which form.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    /// Whether results are printed as one line of JSON rather than as text.
    pub json: bool,
}

impl Printer {
    /// Prints `value` as one line of JSON, or the text that `text` makes, ending in a line end.
    pub fn result(&self, value: Value, text: impl FnOnce() -> String) -> Result<(), Failure> {
        if self.json {
            return write_stdout(&format!("{value}\n"));
        }
        let text = text();
        write_stdout(&format!("{}\n", text.trim_end_matches('\n')))
    }
}

/// Writes to standard output. A reader that went away (`cheesedb-bench | head`) ends the
/// benchmark quietly rather than with an error about a broken pipe.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Err(Failure::quiet_end()),
        Err(error) => Err(Failure::new(format!("cannot write to standard output: {error}"))),
    }
}
