//! Splitting text into lower-cased words, the same way for what is indexed and what is asked.
//!
//! Words are the segments of Unicode's word boundaries (UAX #29) that hold a letter or a digit,
//! exactly as `unicode-segmentation`'s `unicode_words()` finds them. Almost all text an agent
//! stores is ASCII, and building an index spends most of its time here, so ASCII stretches go
//! through a byte loop that applies the same rules, restricted to ASCII, without decoding
//! characters; only stretches with other characters reach the general segmenter.

use alloc::string::String;
use unicode_segmentation::UnicodeSegmentation;

/// Calls `visit` with each word of `text`, lower-cased, in order. Words are Unicode
/// word-boundary segments (UAX #29, exactly what unicode-segmentation's `unicode_words()`
/// yields) lower-cased with `char::to_lowercase`; bytes that are not UTF-8 separate words.
pub fn for_each_word(text: &[u8], mut visit: impl FnMut(&str)) {
    for chunk in text.utf8_chunks() {
        let valid = chunk.valid();
        if valid.is_ascii() {
            for_each_ascii_word(valid, &mut visit);
        } else {
            for_each_word_of_pieces(valid, &mut visit);
        }
    }
}

/// The class bits of an ASCII byte, for the rules that join characters into one word.
const CORE: u8 = 1; // letters, digits and '_': runs of them are one word (WB5, WB8-WB13b)
const LETTER: u8 = 2;
const DIGIT: u8 = 4;
const UPPER: u8 = 8;
const JOINS_LETTERS: u8 = 16; // ':' '.' '\'' between two letters stay in the word (WB6, WB7)
const JOINS_DIGITS: u8 = 32; // ',' ';' '.' '\'' between two digits stay in the word (WB11, WB12)
/// ASCII bytes that never join anything, around which UAX #29 always breaks (the default
/// rule WB999) unless a non-ASCII mark follows them (WB4): everything but the bytes above and
/// the double quote (which joins Hebrew letters, WB7b and WB7c).
const SEPARATES: u8 = 64;

/// The class bits of every byte value (non-ASCII bytes have none).
const CLASSES: [u8; 256] = byte_classes();

const fn byte_classes() -> [u8; 256] {
    let mut classes = [0u8; 256];
    let mut byte = 0u8;
    while byte < 0x80 {
        let class = match byte {
            b'a'..=b'z' => CORE | LETTER,
            b'A'..=b'Z' => CORE | LETTER | UPPER,
            b'0'..=b'9' => CORE | DIGIT,
            b'_' => CORE,
            b':' => JOINS_LETTERS,
            b'.' | b'\'' => JOINS_LETTERS | JOINS_DIGITS,
            b',' | b';' => JOINS_DIGITS,
            b'"' => 0,
            _ => SEPARATES,
        };
        // A const fn can neither use `for` nor `usize::from`; the loop ends at 0x80, so the
        // widened byte is always inside the table.
        #[allow(clippy::indexing_slicing, clippy::cast_lossless)]
        {
            classes[byte as usize] = class;
        }
        byte += 1;
    }
    classes
}

fn class_of(byte: u8) -> u8 {
    CLASSES.get(usize::from(byte)).copied().unwrap_or(0)
}

/// Text with some non-ASCII characters: cut where a word boundary is certain on both sides
/// (at an ASCII separator followed by an ASCII byte, so no mark can attach to it), then each
/// piece goes through the byte loop if it is all ASCII, else through the general segmenter.
/// Segmentation of a piece alone equals its segmentation inside the text, because no rule of
/// UAX #29 joins across such a separator or looks past it (the separator is neither a letter,
/// a digit, a mid-word mark nor a regional indicator, so it counts as the start or end of text).
fn for_each_word_of_pieces(text: &str, visit: &mut impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut piece_start = 0;
    let mut piece_is_ascii = true;
    let mut position = 0;
    while let Some(&byte) = bytes.get(position) {
        let next_is_ascii = bytes.get(position + 1).is_none_or(u8::is_ascii);
        if class_of(byte) & SEPARATES != 0 && next_is_ascii {
            visit_piece(text.get(piece_start..position), piece_is_ascii, visit);
            piece_start = position + 1;
            piece_is_ascii = true;
        } else if !byte.is_ascii() {
            piece_is_ascii = false;
        }
        position += 1;
    }
    visit_piece(text.get(piece_start..), piece_is_ascii, visit);
}

fn visit_piece(piece: Option<&str>, is_ascii: bool, visit: &mut impl FnMut(&str)) {
    match piece {
        Some(piece) if is_ascii => for_each_ascii_word(piece, visit),
        Some(piece) => for_each_unicode_word(piece, visit),
        None => {}
    }
}

/// The general case: the segmenter's words, lower-cased character by character.
fn for_each_unicode_word(text: &str, visit: &mut impl FnMut(&str)) {
    let mut lowered = String::new();
    for word in text.unicode_words() {
        if word.bytes().all(|byte| byte.is_ascii() && !byte.is_ascii_uppercase()) {
            visit(word);
            continue;
        }
        lowered.clear();
        lowered.extend(word.chars().flat_map(char::to_lowercase));
        visit(&lowered);
    }
}

/// Words up to this length are lower-cased on the stack.
const SHORT_WORD_MAX_BYTES: usize = 64;

/// All-ASCII text: a run of letters, digits and underscores is a word, and so is a longer run
/// joined by a single mid-word mark between two letters or two digits (`e.g`, `3.14`, `1,000`,
/// `don't`); a run of underscores alone is not a word.
fn for_each_ascii_word(text: &str, visit: &mut impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut position = 0;
    while let Some(&byte) = bytes.get(position) {
        if class_of(byte) & CORE == 0 {
            position += 1;
            continue;
        }
        let start = position;
        let mut seen = 0u8;
        while let Some(&byte) = bytes.get(position) {
            let class = class_of(byte);
            if class & CORE != 0 || joins_neighbours(bytes, position, class) {
                seen |= class;
                position += 1;
            } else {
                break;
            }
        }
        if seen & (LETTER | DIGIT) != 0 {
            visit_ascii_word(text.get(start..position), seen & UPPER != 0, visit);
        }
    }
}

/// Whether the mark at `position` (of class `class`) sits between two letters it may join, or
/// between two digits it may join.
fn joins_neighbours(bytes: &[u8], position: usize, class: u8) -> bool {
    if class & (JOINS_LETTERS | JOINS_DIGITS) == 0 {
        return false;
    }
    let (Some(&before), Some(&after)) = (bytes.get(position.wrapping_sub(1)), bytes.get(position + 1)) else {
        return false;
    };
    let both = class_of(before) & class_of(after);
    (class & JOINS_LETTERS != 0 && both & LETTER != 0) || (class & JOINS_DIGITS != 0 && both & DIGIT != 0)
}

fn visit_ascii_word(word: Option<&str>, has_upper: bool, visit: &mut impl FnMut(&str)) {
    let Some(word) = word else { return };
    if !has_upper {
        visit(word);
        return;
    }
    let mut buffer = [0u8; SHORT_WORD_MAX_BYTES];
    if let Some(short) = buffer.get_mut(..word.len()) {
        short.copy_from_slice(word.as_bytes());
        short.make_ascii_lowercase();
        if let Ok(lowered) = core::str::from_utf8(short) {
            visit(lowered);
        }
    } else {
        visit(&word.to_ascii_lowercase());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn words(text: &[u8]) -> Vec<String> {
        let mut found = Vec::new();
        for_each_word(text, |word| found.push(word.to_string()));
        found
    }

    /// What the brief of this module promises: the segmenter's words, lower-cased by character.
    fn reference(text: &str) -> Vec<String> {
        text.unicode_words().map(|word| word.chars().flat_map(char::to_lowercase).collect()).collect()
    }

    #[test]
    fn splits_plain_text_and_lowers_it() {
        assert_eq!(words(b"The quick  Brown fox."), ["the", "quick", "brown", "fox"]);
        assert!(words(b"").is_empty());
        assert!(words(b"  ... --- !!!").is_empty());
    }

    #[test]
    fn keeps_marks_between_letters_or_digits_together() {
        assert_eq!(
            words(b"e.g. don't 3.14 1,000,000 a:b x.1 1.x snake_case __ _a_ 2;3 a,b"),
            ["e.g", "don't", "3.14", "1,000,000", "a:b", "x", "1", "1", "x", "snake_case", "_a_", "2;3", "a", "b"]
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_separate_words() {
        assert_eq!(words(b"pune\xffrain\xc3"), ["pune", "rain"]);
        assert_eq!(words(b"caf\xc3\xa9\xffX"), ["caf\u{e9}", "x"]);
    }

    #[test]
    fn long_words_are_lowered_too() {
        let long = "A".repeat(SHORT_WORD_MAX_BYTES * 2);
        assert_eq!(words(long.as_bytes()), [long.to_ascii_lowercase()]);
    }

    #[test]
    fn mixed_unicode_text_matches_the_segmenter() {
        let text = "Émile’s café — naïve Straße, 東京タワー, ΣΊΣΥΦΟΣ 3.14! don't \u{5d0}\"\u{5d1} \
                    e\u{301}clair a\u{200d}b 🇫🇷🇩🇪 x\u{308}.y İstanbul\tTAB\nLine";
        assert_eq!(words(text.as_bytes()), reference(text));
        assert!(words(text.as_bytes()).contains(&"straße".to_string()));
    }

    /// Characters that exercise every ASCII rule, and the non-ASCII ones that interact with
    /// ASCII neighbours: accented letters, a combining mark, a zero-width joiner, a format
    /// character, Hebrew with its quote rules, Katakana, ideographs, regional indicators and
    /// emoji, other spaces and a curly apostrophe.
    const MIXED_ALPHABET: &[char] = &[
        'a', 'B', 'z', 'Q', '0', '7', '_', ':', '.', '\'', ',', ';', '"', ' ', '\t', '\n', '\r', '\u{b}', '-', '!',
        '@', '/', 'é', 'Ü', '\u{301}', '\u{200d}', '\u{ad}', 'א', 'ב', 'カ', 'ー', '東', '🇫', '🇷', '😀', '\u{a0}', '’',
        '٣', 'ß', 'İ', '\u{3000}', '\u{2060}',
    ];

    const ASCII_ALPHABET: &[u8] = b"abZQ09_:.',;\" \t\r\n\x0b-!#";

    proptest! {
        #[test]
        fn the_ascii_path_equals_the_segmenter(
            picks in proptest::collection::vec(0..ASCII_ALPHABET.len(), 0..60)
        ) {
            let text: String = picks.iter().map(|&pick| char::from(ASCII_ALPHABET[pick])).collect();
            prop_assert_eq!(words(text.as_bytes()), reference(&text));
        }

        #[test]
        fn mixed_text_equals_the_segmenter(
            picks in proptest::collection::vec(0..MIXED_ALPHABET.len(), 0..60)
        ) {
            let text: String = picks.iter().map(|&pick| MIXED_ALPHABET[pick]).collect();
            prop_assert_eq!(words(text.as_bytes()), reference(&text));
        }

        #[test]
        fn any_bytes_give_the_words_of_their_utf8_stretches(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let expected: Vec<String> =
                bytes.utf8_chunks().flat_map(|chunk| reference(chunk.valid())).collect();
            prop_assert_eq!(words(&bytes), expected);
        }
    }
}
