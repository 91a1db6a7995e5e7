//! Writing the benchmark's result: one line of JSON for scripts (`--json`), or a table for people.

use std::io::{ErrorKind, Write};

use serde_json::Value;

use crate::failure::{Failure, EXIT_SUCCESS};

/// Where the result goes and in which form.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    json: bool,
}

impl Printer {
    /// A printer writing JSON when `json` is set, text otherwise.
    pub fn new(json: bool) -> Printer {
        Printer { json }
    }

    /// Whether results are printed as JSON.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Prints `value` as one line of JSON, or the text that `text` makes, ending in a line end.
    /// Control characters other than line ends never reach the terminal, whatever a path in the
    /// text holds.
    pub fn result(&self, value: Value, text: impl FnOnce() -> String) -> Result<(), Failure> {
        if self.json {
            return write_stdout(&format!("{value}\n"));
        }
        let mut text = escaped_keeping_lines(&text());
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        write_stdout(&text)
    }
}

/// `text` with every control character but the line end written as an escape (`\u{1b}`, `\r`).
pub fn escaped_keeping_lines(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for character in text.chars() {
        if character.is_control() && character != '\n' {
            shown.extend(character.escape_default());
        } else {
            shown.push(character);
        }
    }
    shown
}

/// Writes to standard output. A reader that went away (`cheesedb-bench | head`) ends the
/// benchmark quietly rather than with an error about a broken pipe.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Err(Failure::silent(EXIT_SUCCESS)),
        Err(error) => Err(Failure::new(format!("cannot write to standard output: {error}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_lines_kept() {
        assert_eq!(escaped_keeping_lines("line one\u{1b}[2J\nline two\r"), "line one\\u{1b}[2J\nline two\\r");
        assert_eq!(escaped_keeping_lines("Pune: rain ☔"), "Pune: rain ☔");
    }
}
