//! Splitting text into lower-cased words, the same way for what is indexed and what is asked.
//!
//! Words are the segments of Unicode's word boundaries (UAX #29) that hold a letter or a digit,
//! exactly as `unicode-segmentation`'s `unicode_words()` finds them. Almost all text an agent
//! stores is ASCII, and building an index spends much of its time here, so ASCII stretches go
//! through a splitter of their own (`ascii_words`) that applies the same rules, restricted to
//! ASCII, eight bytes at a time; only stretches with other characters reach the general
//! segmenter. The tests hold both equal to the segmenter on random text.

use alloc::string::String;
use unicode_segmentation::UnicodeSegmentation;

use super::ascii_words::{class_of, for_each_ascii_word_span, pack_bytes, packed_lowercase, SEPARATES};

/// Calls `visit` with each word of `text`, lower-cased, in order. Words are Unicode
/// word-boundary segments (UAX #29, exactly what unicode-segmentation's `unicode_words()`
/// yields) lower-cased with `char::to_lowercase`; bytes that are not UTF-8 separate words.
pub fn for_each_word(text: &[u8], mut visit: impl FnMut(&str)) {
    // Checking the whole text at once is much faster than splitting it into valid stretches,
    // and nearly all text is valid.
    if let Ok(valid) = core::str::from_utf8(text) {
        for_each_word_of_str(valid, &mut visit);
        return;
    }
    for chunk in text.utf8_chunks() {
        for_each_word_of_str(chunk.valid(), &mut visit);
    }
}

fn for_each_word_of_str(text: &str, visit: &mut impl FnMut(&str)) {
    if text.is_ascii() {
        for_each_ascii_word(text, visit);
    } else {
        for_each_word_of_pieces(text, visit);
    }
}

/// Text with some non-ASCII characters: cut where a word boundary is certain on both sides
/// (at an ASCII separator followed by an ASCII byte, so no mark can attach to it), then each
/// piece goes through the ASCII splitter if it is all ASCII, else through the general segmenter.
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

/// All-ASCII text, through the fast splitter.
fn for_each_ascii_word(text: &str, visit: &mut impl FnMut(&str)) {
    for_each_ascii_word_span(text.as_bytes(), |start, end| visit_ascii_word(text.get(start..end), visit));
}

fn visit_ascii_word(word: Option<&str>, visit: &mut impl FnMut(&str)) {
    let Some(word) = word else { return };
    if !word.bytes().any(|byte| byte.is_ascii_uppercase()) {
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

/// A word as `for_each_word_packing` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Word<'a> {
    /// A word of at most 8 bytes, lower-cased and packed as `pack_bytes` packs.
    Packed(u64),
    /// Any other word, lower-cased.
    Text(&'a str),
}

/// The words of `text` as `for_each_word` finds them, each packed into an integer when it has
/// at most 8 bytes: for the index, which looks words up by their packed form. ASCII text (the
/// common case) is packed straight from its bytes, without making a string of each word.
pub(crate) fn for_each_word_packing(text: &[u8], mut visit: impl FnMut(Word<'_>)) {
    match core::str::from_utf8(text) {
        Ok(ascii) if ascii.is_ascii() => {
            for_each_ascii_word_span(text, |start, end| match packed_lowercase(text, start, end) {
                Some(packed) => visit(Word::Packed(packed)),
                None => visit_ascii_word(ascii.get(start..end), &mut |word| visit(Word::Text(word))),
            })
        }
        _ => for_each_word(text, |word| match pack_bytes(word.as_bytes()) {
            Some(packed) => visit(Word::Packed(packed)),
            None => visit(Word::Text(word)),
        }),
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

    fn packed_words(text: &[u8]) -> Vec<Word<'static>> {
        let mut found = Vec::new();
        for_each_word_packing(text, |word| {
            found.push(match word {
                Word::Packed(packed) => Word::Packed(packed),
                Word::Text(text) => Word::Text(String::from(text).leak()),
            })
        });
        found
    }

    fn packed_reference(text: &[u8]) -> Vec<Word<'static>> {
        words(text)
            .into_iter()
            .map(|word| match pack_bytes(word.as_bytes()) {
                Some(packed) => Word::Packed(packed),
                None => Word::Text(word.leak()),
            })
            .collect()
    }

    #[test]
    fn packing_words_packs_the_short_ones() {
        let text = b"Pune IS rainy, Extraordinarily SO";
        assert_eq!(
            packed_words(text),
            [
                Word::Packed(pack_bytes(b"pune").unwrap()),
                Word::Packed(pack_bytes(b"is").unwrap()),
                Word::Packed(pack_bytes(b"rainy").unwrap()),
                Word::Text("extraordinarily"),
                Word::Packed(pack_bytes(b"so").unwrap()),
            ]
        );
        assert_eq!(packed_words("Café NAÏVE".as_bytes()), packed_reference("Café NAÏVE".as_bytes()));
    }

    proptest! {
        #[test]
        fn packing_gives_the_same_words(picks in proptest::collection::vec(0..MIXED_ALPHABET.len(), 0..60)) {
            let text: String = picks.iter().map(|&pick| MIXED_ALPHABET[pick]).collect();
            prop_assert_eq!(packed_words(text.as_bytes()), packed_reference(text.as_bytes()));
            let ascii: String = text.chars().filter(char::is_ascii).collect();
            prop_assert_eq!(packed_words(ascii.as_bytes()), packed_reference(ascii.as_bytes()));
        }

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
