//! Hiding token digits in text that a message repeats. It sits below both the error messages
//! that quote what a user typed and the tokens themselves.

use alloc::string::String;

/// The shortest run of hex digits that [`conceal_token_digits`] hides: over a third of a
/// token's 64, and more than any file name of a store holds (16).
pub const CONCEALED_HEX_RUN_MIN: usize = 24;

/// `text` with every run of `CONCEALED_HEX_RUN_MIN` (24) or more hex digits replaced by `…`, so
/// that a message quoting what a user typed never repeats a token, or most of one, even one
/// mistyped or cut short.
#[must_use]
pub fn conceal_token_digits(text: &str) -> String {
    let mut concealed = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, into: &mut String| {
        if run.len() >= CONCEALED_HEX_RUN_MIN {
            into.push('…');
        } else {
            into.push_str(run);
        }
        run.clear();
    };
    for character in text.chars() {
        if character.is_ascii_hexdigit() {
            run.push(character);
        } else {
            flush(&mut run, &mut concealed);
            concealed.push(character);
        }
    }
    flush(&mut run, &mut concealed);
    concealed
}
