//! Finding the words of ASCII text fast, by the rules of Unicode word boundaries (UAX #29)
//! restricted to ASCII:
//! - a run of letters, digits and underscores is one word (WB5, WB8-WB10, WB13a, WB13b);
//! - a single `:` `.` `'` between two letters joins them (WB6, WB7), and a single `,` `;` `.`
//!   `'` between two digits joins them (WB11, WB12);
//! - a segment with no letter and no digit (a run of underscores, punctuation, spaces) is not
//!   a word.
//!
//! Building an index spends much of its time splitting words, and a byte-by-byte loop pays a
//! mispredicted branch at the end of every word. Here eight bytes at a time are classified with
//! integer arithmetic (each byte's high bit answers "is it a letter, digit or underscore?"),
//! 64 such answers make a mask, and the words are the runs of ones in the masks, found with
//! trailing-zero counts: about one unpredictable branch per 64 bytes instead of one per word.

/// The class bits of an ASCII byte, for the rules that join characters into one word.
pub(crate) const CORE: u8 = 1; // letters, digits and '_'
pub(crate) const LETTER: u8 = 2;
pub(crate) const DIGIT: u8 = 4;
pub(crate) const UPPER: u8 = 8;
pub(crate) const JOINS_LETTERS: u8 = 16; // ':' '.' '\''
pub(crate) const JOINS_DIGITS: u8 = 32; // ',' ';' '.' '\''
/// ASCII bytes that never join anything, around which UAX #29 always breaks (the default
/// rule WB999) unless a non-ASCII mark follows them (WB4): everything but the bytes above and
/// the double quote (which joins Hebrew letters, WB7b and WB7c).
pub(crate) const SEPARATES: u8 = 64;

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

/// The class bits of `byte`.
pub(crate) fn class_of(byte: u8) -> u8 {
    CLASSES.get(usize::from(byte)).copied().unwrap_or(0)
}

/// Calls `visit` with the start and end (exclusive) of each word of `bytes`, all ASCII, in
/// order.
pub(crate) fn for_each_ascii_word_span(bytes: &[u8], mut visit: impl FnMut(usize, usize)) {
    let mut runs = Runs { bytes, pending: None };
    let mut in_run = false;
    let mut run_start = 0;
    // The mask bit of the byte before the current block, so a run crossing blocks is one run.
    let mut carried = 0u64;
    let mut base = 0;
    let mut blocks = bytes.chunks_exact(BLOCK_BYTES);
    let mut on_transitions = |mask: u64, base: usize, carried: &mut u64| {
        let mut transitions = mask ^ (mask << 1 | *carried);
        *carried = mask >> 63;
        while transitions != 0 {
            let position = base + bit_position(transitions);
            transitions &= transitions - 1;
            if in_run {
                runs.push(run_start, position, &mut visit);
            } else {
                run_start = position;
            }
            in_run = !in_run;
        }
    };
    for block in blocks.by_ref() {
        on_transitions(core_mask(block), base, &mut carried);
        base += BLOCK_BYTES;
    }
    // The last, partial block: the bytes past the end count as zero bytes, which are not
    // letters, so a run reaching the end of the text ends there.
    let rest = blocks.remainder();
    if !rest.is_empty() {
        on_transitions(core_mask(rest), base, &mut carried);
    } else if in_run {
        runs.push(run_start, bytes.len(), &mut visit);
    }
    runs.finish(&mut visit);
}

/// The bytes of one mask.
const BLOCK_BYTES: usize = 64;

/// The position of the lowest set bit of a non-zero mask.
fn bit_position(mask: u64) -> usize {
    usize::try_from(mask.trailing_zeros()).unwrap_or(0)
}

/// Runs of letters, digits and underscores, joined into words by the mid-word marks between
/// them. The last run is held back until the next one shows whether it continues it.
struct Runs<'a> {
    bytes: &'a [u8],
    pending: Option<(usize, usize)>,
}

impl Runs<'_> {
    #[inline]
    fn push(&mut self, start: usize, end: usize, visit: &mut impl FnMut(usize, usize)) {
        match self.pending {
            Some((pending_start, pending_end)) if pending_end + 1 == start && self.joins_at(pending_end) => {
                self.pending = Some((pending_start, end));
            }
            _ => {
                self.finish(visit);
                self.pending = Some((start, end));
            }
        }
    }

    fn finish(&mut self, visit: &mut impl FnMut(usize, usize)) {
        if let Some((start, end)) = self.pending.take() {
            if self.has_letter_or_digit(start, end) {
                visit(start, end);
            }
        }
    }

    /// Whether the byte at `position`, between two runs, joins them: a mark between two letters
    /// or two digits that it may join.
    fn joins_at(&self, position: usize) -> bool {
        let Some(&mark) = self.bytes.get(position) else { return false };
        let class = class_of(mark);
        if class & (JOINS_LETTERS | JOINS_DIGITS) == 0 {
            return false;
        }
        let (Some(&before), Some(&after)) = (self.bytes.get(position.wrapping_sub(1)), self.bytes.get(position + 1))
        else {
            return false;
        };
        let both = class_of(before) & class_of(after);
        (class & JOINS_LETTERS != 0 && both & LETTER != 0) || (class & JOINS_DIGITS != 0 && both & DIGIT != 0)
    }

    /// Whether the word holds more than underscores (checked byte by byte only when it starts
    /// with one, which is rare).
    #[inline]
    fn has_letter_or_digit(&self, start: usize, end: usize) -> bool {
        let Some(word) = self.bytes.get(start..end) else { return false };
        match word.first() {
            Some(&first) if class_of(first) & (LETTER | DIGIT) != 0 => true,
            _ => word.iter().any(|&byte| class_of(byte) & (LETTER | DIGIT) != 0),
        }
    }
}

/// Eight bytes with each byte's value repeated.
const fn repeated(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

const HIGH_BITS: u64 = repeated(0x80);

/// The high bit of each byte of `word` (every byte below 0x80) set where the byte is at least
/// `floor`: adding 0x80 - floor carries into the high bit exactly then, and never across bytes.
fn at_least(word: u64, floor: u8) -> u64 {
    word.wrapping_add(repeated(0x80 - floor)) & HIGH_BITS
}

/// The high bit of each byte set where the byte is within `low..=high`.
fn within(word: u64, low: u8, high: u8) -> u64 {
    at_least(word, low) & !at_least(word, high + 1)
}

/// The bit i set where byte i of `word` is a letter, digit or underscore.
fn core_bits(word: u64) -> u64 {
    // Setting bit 5 of every byte turns capitals into small letters; it also moves some
    // punctuation, but none of it into a..z.
    let letters = within(word | repeated(0x20), b'a', b'z');
    let digits = within(word, b'0', b'9');
    let underscores = within(word, b'_', b'_');
    gather_high_bits(letters | digits | underscores)
}

/// The high bit of each of the 8 bytes, gathered into the low 8 bits (byte i to bit i): the
/// multiplication moves each byte's bit to bit 56 + i without carries.
fn gather_high_bits(high_bits: u64) -> u64 {
    (high_bits >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// The mask of a block of at most 64 bytes: bit i set where byte i is a letter, digit or
/// underscore.
fn core_mask(block: &[u8]) -> u64 {
    let mut mask = 0;
    let mut chunks = block.chunks_exact(8);
    for (index, eight) in chunks.by_ref().enumerate() {
        let word = <[u8; 8]>::try_from(eight).map_or(0, u64::from_le_bytes);
        mask |= core_bits(word) << (8 * index);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // Gathered byte by byte, with zeros above: no copy into a buffer, which would stall
        // the wide read that follows it.
        let word = rest.iter().rev().fold(0u64, |word, &byte| word << 8 | u64::from(byte));
        mask |= core_bits(word) << (block.len() - rest.len());
    }
    mask
}

/// The word `bytes[start..end]` (ASCII) lower-cased and packed as `pack_bytes` packs, if it has
/// at most 8 bytes: read as one integer when 8 bytes are there to read, and lower-cased by
/// setting bit 5 of every capital letter.
pub(crate) fn packed_lowercase(bytes: &[u8], start: usize, end: usize) -> Option<u64> {
    let length = end.checked_sub(start).filter(|&length| length <= 8)?;
    let word = match bytes.get(start..start + 8).and_then(|eight| <[u8; 8]>::try_from(eight).ok()) {
        Some(eight) => u64::from_le_bytes(eight) & low_bytes(length),
        None => pack_bytes(bytes.get(start..end)?)?,
    };
    Some(word | within(word, b'A', b'Z') >> 2)
}

/// A mask of the low `length` bytes (1 to 8).
fn low_bytes(length: usize) -> u64 {
    u64::MAX.checked_shr(u32::try_from(64 - 8 * length).unwrap_or(0)).unwrap_or(0)
}

/// At most 8 bytes without a zero byte, packed into an integer, the first byte lowest (so the
/// zero bytes above tell the length).
pub(crate) fn pack_bytes(bytes: &[u8]) -> Option<u64> {
    if bytes.len() > 8 {
        return None;
    }
    // Shifted in byte by byte: copying the bytes into a buffer and reading the buffer back as
    // an integer would stall the processor, which cannot forward small stores to a wide load.
    let mut packed = 0u64;
    for (index, &byte) in bytes.iter().enumerate() {
        if byte == 0 {
            return None;
        }
        packed |= u64::from(byte) << (8 * index);
    }
    Some(packed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn spans(text: &str) -> Vec<&str> {
        let mut found = Vec::new();
        for_each_ascii_word_span(text.as_bytes(), |start, end| found.push(&text[start..end]));
        found
    }

    #[test]
    fn byte_masks_classify_every_ascii_byte() {
        for byte in 0u8..0x80 {
            let word = u64::from_le_bytes([b' ', byte, b' ', b' ', b' ', b' ', b' ', byte]);
            let expected = if class_of(byte) & CORE != 0 { 0b1000_0010 } else { 0 };
            assert_eq!(core_bits(word), expected, "byte {byte:#x}");
        }
    }

    #[test]
    fn runs_cross_blocks_and_end_with_the_text() {
        let long = "x".repeat(150);
        assert_eq!(spans(&long), [long.as_str()]);
        let text = format!("{} ab {}", "y".repeat(62), "z".repeat(64));
        assert_eq!(spans(&text), ["y".repeat(62).as_str(), "ab", "z".repeat(64).as_str()]);
        assert_eq!(spans(&"w".repeat(64)), ["w".repeat(64).as_str()]);
        assert!(spans("").is_empty());
        assert!(spans(" __ ").is_empty());
        assert_eq!(spans("a.b.c 1,2 a.1 _x"), ["a.b.c", "1,2", "a", "1", "_x"]);
    }

    #[test]
    fn packed_words_are_lower_cased_wherever_they_sit() {
        let text = b"xx HeLLo zZ";
        assert_eq!(packed_lowercase(text, 3, 8), pack_bytes(b"hello"));
        assert_eq!(packed_lowercase(text, 9, 11), pack_bytes(b"zz"));
        assert_eq!(packed_lowercase(b"ABCDEFGH", 0, 8), pack_bytes(b"abcdefgh"));
        assert_eq!(packed_lowercase(b"ABCDEFGHI", 0, 9), None);
        assert_eq!(pack_bytes(b"a\0"), None);
    }

    proptest! {
        #[test]
        fn packing_in_place_equals_packing_the_lowered_word(text in "[a-zA-Z0-9_@\\[`{ ]{1,20}", start in 0usize..20, length in 1usize..9) {
            let bytes = text.as_bytes();
            let start = start % bytes.len();
            let length = length.min(bytes.len() - start);
            let word = text[start..start + length].to_ascii_lowercase();
            prop_assert_eq!(packed_lowercase(bytes, start, start + length), pack_bytes(word.as_bytes()));
        }
    }
}
