//! Writing results: a stable JSON shape for scripts (`--json`), or text for people.

use std::io::{ErrorKind, Write};

use serde_json::Value;

use crate::failure::{Failure, EXIT_SUCCESS};

/// Where a command's result goes and in which form.
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

    /// Prints `value` as one line of JSON, or the text that `text` makes.
    pub fn result(&self, value: Value, text: impl FnOnce() -> String) -> Result<(), Failure> {
        if self.json {
            write_stdout(&format!("{value}\n"))
        } else {
            let mut text = text();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            write_stdout(&text)
        }
    }

    /// Prints a line of text for people; nothing in JSON mode, whose output is one object.
    pub fn text_line(&self, line: &str) -> Result<(), Failure> {
        if self.json {
            return Ok(());
        }
        write_stdout(&format!("{line}\n"))
    }
}

/// Writes to standard output. A reader that went away (`cheesedb list | head`) ends the
/// command quietly rather than with an error about a broken pipe.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Err(Failure::silent(EXIT_SUCCESS)),
        Err(error) => Err(Failure::new(format!("cannot write to standard output: {error}"))),
    }
}

/// Content bytes as JSON: text when they are UTF-8, else lowercase hex; with the encoding used.
pub fn content_json(content: &[u8]) -> (Value, &'static str) {
    match std::str::from_utf8(content) {
        Ok(text) => (Value::from(text), "utf-8"),
        Err(_) => (Value::from(hex(content)), "hex"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A short, one-line preview of content for text output: at most `characters_max` characters,
/// control characters shown as escapes, non-UTF-8 bytes as replacement characters.
pub fn preview(content: &[u8], characters_max: usize) -> String {
    let text = String::from_utf8_lossy(content);
    let mut shown = String::new();
    for (count, character) in text.chars().enumerate() {
        if count == characters_max {
            shown.push('…');
            break;
        }
        if character.is_control() {
            shown.extend(character.escape_default());
        } else {
            shown.push(character);
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_text_when_it_can_be() {
        assert_eq!(content_json(b"rain"), (Value::from("rain"), "utf-8"));
        assert_eq!(content_json(&[0xff, 0x00]), (Value::from("ff00"), "hex"));
    }

    #[test]
    fn previews_stay_on_one_line_and_short() {
        assert_eq!(preview(b"a\nb", 10), "a\\nb");
        assert_eq!(preview(b"abcdef", 3), "abc…");
    }
}
