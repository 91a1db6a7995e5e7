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

    /// Prints `value` as one line of JSON, or the text that `text` makes. Control characters
    /// other than line ends never reach the terminal, whatever the text holds.
    pub fn result(&self, value: Value, text: impl FnOnce() -> String) -> Result<(), Failure> {
        if self.json {
            write_stdout(&format!("{value}\n"))
        } else {
            let mut text = escaped_keeping_lines(&text());
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
        write_stdout(&format!("{}\n", escaped_keeping_lines(line)))
    }
}

/// Whether `character` could drive a terminal or disguise text: a control character (escape
/// sequences, carriage return, line ends, tab, delete, C1 controls) or one that changes the
/// direction text is shown in.
fn is_unsafe_for_terminal(character: char) -> bool {
    character.is_control()
        || matches!(character, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(character: char, into: &mut String) {
    if character.is_control() {
        into.extend(character.escape_default());
    } else {
        into.push_str(&format!("\\u{{{:x}}}", u32::from(character)));
    }
}

/// Stored or received text made safe to show in a terminal, on one line: every control or
/// direction-changing character is written as an escape (`\u{1b}`, `\r`, `\n`). Every text
/// output of stored content, labels, names and paths goes through here; JSON output does not
/// need it, since JSON strings escape control characters themselves.
pub fn escaped(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for character in text.chars() {
        if is_unsafe_for_terminal(character) {
            push_escaped(character, &mut shown);
        } else {
            shown.push(character);
        }
    }
    shown
}

/// Like [`escaped`], but keeps line ends: for whole blocks of output that the command itself
/// lays out in lines, as a last guard behind the escaping of each field.
pub fn escaped_keeping_lines(text: &str) -> String {
    text.split('\n').map(escaped).collect::<Vec<_>>().join("\n")
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
        if is_unsafe_for_terminal(character) {
            push_escaped(character, &mut shown);
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
    fn terminal_controls_are_escaped_and_other_text_kept() {
        assert_eq!(escaped("a\u{1b}]0;owned\u{7}b\rc\nd\te"), "a\\u{1b}]0;owned\\u{7}b\\rc\\nd\\te");
        assert_eq!(escaped("evil\u{202e}txt.exe \u{9b}2J"), "evil\\u{202e}txt.exe \\u{9b}2J");
        assert_eq!(escaped("Pune: rain ☔, naïve"), "Pune: rain ☔, naïve");
        assert_eq!(escaped_keeping_lines("line one\u{1b}[2J\nline two\r"), "line one\\u{1b}[2J\nline two\\r");
        assert_eq!(preview("\u{1b}[31mred".as_bytes(), 20), "\\u{1b}[31mred");
    }

    #[test]
    fn previews_stay_on_one_line_and_short() {
        assert_eq!(preview(b"a\nb", 10), "a\\nb");
        assert_eq!(preview(b"abcdef", 3), "abc…");
    }
}
