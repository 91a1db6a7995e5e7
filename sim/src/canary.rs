//! Contents and vectors that can be found again: every lot, memory and vector the harness writes
//! carries a unique marker at its start and at its end, so a byte search of every file tells
//! exactly whose text and whose vectors are still stored.
//!
//! A text marker is `<c:` + 16 hex digits of the run's seed + `:` + 8 hex digits of a serial +
//! `:` + the same 8 digits again + `>`. The filler between the two markers (words of a small
//! vocabulary, so that keyword searches find several nodes) never contains `<`, so markers never
//! overlap. The serial is written twice so that a flipped bit (a fault the simulator injects
//! into stored bytes) cannot turn one node's marker into another's: a marker counts only if
//! both copies agree.
//!
//! A vector marker is four numbers whose 16 bytes (little-endian, as a record stores them) read
//! `<v`, the serial's 4 bytes, the same 4 again and `v>`, spread over the three low bytes of
//! each number; the high byte of each is 0x3f or 0xbf, which keeps every number finite and
//! between 0.5 and 2 in size, whatever the serial. Vectors take their serials from the same
//! counter as contents, so a serial names one text or one vector.

use std::collections::BTreeSet;

use crate::random::Random;

const MARKER_START: &[u8] = b"<c:";
/// The words filler is drawn from, the first most often: never `<`, so no marker can appear
/// inside filler. Some are capitalised or accented, so that searches meet case folding.
const VOCABULARY: [&str; 24] = [
    "the", "cheese", "memory", "agent", "recall", "Erase", "log", "brie", "gouda", "café", "search", "vector", "index",
    "Straße", "naïve", "ZÜRICH", "word", "token", "fondue", "über", "comté", "rind", "whey", "curd",
];
/// The first bytes of a vector marker.
const VECTOR_MARKER_START: &[u8] = b"<v";
/// Numbers of one vector marker.
pub const VECTOR_MARKER_NUMBERS: usize = 4;
/// Bytes of one vector marker.
const VECTOR_MARKER_BYTES: usize = 4 * VECTOR_MARKER_NUMBERS;
/// The fewest numbers of a vector with markers: one marker at each end.
pub const VECTOR_DIMENSION_MIN: usize = 2 * VECTOR_MARKER_NUMBERS;
/// Bytes of one marker.
pub const MARKER_BYTES: usize = 3 + 16 + 1 + 8 + 1 + 8 + 1;
/// Where the first copy of the serial starts in a marker.
const SERIAL_AT: usize = 3 + 16 + 1;

/// The marker of `serial` in the run of `seed`.
pub fn marker(seed: u64, serial: u64) -> Vec<u8> {
    let serial = serial & 0xffff_ffff;
    format!("<c:{seed:016x}:{serial:08x}:{serial:08x}>").into_bytes()
}

/// A content for `serial`: marker, up to `filler_max_bytes` of words, marker.
pub fn content(seed: u64, serial: u64, filler_max_bytes: u64, random: &mut Random) -> Vec<u8> {
    let mark = marker(seed, serial);
    let filler = random.below(filler_max_bytes + 1) as usize;
    let mut out = Vec::with_capacity(2 * MARKER_BYTES + filler);
    out.extend_from_slice(&mark);
    // Zipf-like: the n-th word is drawn about 1/n as often as the first.
    let weights: Vec<u64> = (1..=VOCABULARY.len() as u64).map(|rank| 720 / rank).collect();
    let mut written = 0;
    loop {
        let word = VOCABULARY.get(random.weighted(&weights)).copied().unwrap_or("the");
        if written + word.len() + 1 > filler {
            break;
        }
        out.extend_from_slice(word.as_bytes());
        out.push(b' ');
        written += word.len() + 1;
    }
    out.extend_from_slice(&mark);
    out
}

/// The words filler is made of.
pub fn vocabulary() -> &'static [&'static str] {
    &VOCABULARY
}

/// The serial of the marker at the start of `content`, if it has one.
pub fn serial_of(content: &[u8]) -> Option<u64> {
    let digits = content.get(SERIAL_AT..SERIAL_AT + 8)?;
    let copy = content.get(SERIAL_AT + 9..SERIAL_AT + 17)?;
    if digits != copy || content.get(SERIAL_AT + 8) != Some(&b':') {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// The 16 bytes of the vector marker of `serial`, with the sign of each number from `signs`.
fn vector_marker_bytes(serial: u64, signs: [bool; VECTOR_MARKER_NUMBERS]) -> [u8; VECTOR_MARKER_BYTES] {
    let serial = (serial as u32).to_le_bytes();
    let mut free = Vec::with_capacity(12);
    free.extend_from_slice(VECTOR_MARKER_START);
    free.extend_from_slice(&serial);
    free.extend_from_slice(&serial);
    free.extend_from_slice(b"v>");
    let mut bytes = [0u8; VECTOR_MARKER_BYTES];
    for ((number, chunk), negative) in bytes.chunks_exact_mut(4).zip(free.chunks_exact(3)).zip(signs) {
        number.iter_mut().zip(chunk).for_each(|(to, from)| *to = *from);
        if let Some(high) = number.get_mut(3) {
            *high = if negative { 0xbf } else { 0x3f };
        }
    }
    bytes
}

fn numbers_of(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes.chunks_exact(4).filter_map(|chunk| <[u8; 4]>::try_from(chunk).ok()).map(f32::from_le_bytes)
}

/// A vector of `dimension` numbers (at least [`VECTOR_DIMENSION_MIN`]) for `serial`: marker,
/// numbers between -4 and 4, marker.
pub fn vector(serial: u64, dimension: usize, random: &mut Random) -> Vec<f32> {
    let mut signs = || [(); VECTOR_MARKER_NUMBERS].map(|_| random.chance(0.5));
    let first = vector_marker_bytes(serial, signs());
    let last = vector_marker_bytes(serial, signs());
    let middle = dimension.saturating_sub(VECTOR_DIMENSION_MIN);
    let mut numbers: Vec<f32> = numbers_of(&first).collect();
    for _ in 0..middle {
        numbers.push((random.below(1 << 24) as f32 / (1u32 << 21) as f32) - 4.0);
    }
    numbers.extend(numbers_of(&last));
    numbers
}

/// The bytes of `vector` as a record stores them.
pub fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|number| number.to_le_bytes()).collect()
}

/// The serial of the marker at the start of `bytes`, if a whole vector marker is there.
fn vector_serial_at(bytes: &[u8]) -> Option<u64> {
    let marker = bytes.get(..VECTOR_MARKER_BYTES)?;
    if marker.chunks_exact(4).any(|number| number.get(3).is_some_and(|high| high & 0x7f != 0x3f)) {
        return None;
    }
    let free: Vec<u8> = marker.chunks_exact(4).flat_map(|number| number.iter().take(3).copied()).collect();
    let (start, rest) = free.split_at(2);
    let (serial, rest) = rest.split_at(4);
    let (copy, end) = rest.split_at(4);
    if start != VECTOR_MARKER_START || serial != copy || end != b"v>" {
        return None;
    }
    Some(u64::from(u32::from_le_bytes(<[u8; 4]>::try_from(serial).ok()?)))
}

/// The serial of a vector the harness made.
pub fn vector_serial_of(vector: &[f32]) -> Option<u64> {
    vector_serial_at(&vector_bytes(vector))
}

/// Adds to `found` the serial of every text marker of `seed` anywhere in `bytes`.
pub fn find_markers(bytes: &[u8], seed: u64, found: &mut BTreeSet<u64>) {
    let seed_digits = format!("{seed:016x}").into_bytes();
    for start in memchr::memmem::find_iter(bytes, MARKER_START) {
        if let Some(serial) = bytes.get(start..).and_then(|rest| text_serial_at(rest, &seed_digits)) {
            found.insert(serial);
        }
    }
}

/// The serial of the text marker of the seed written as `seed_digits` at the start of `bytes`.
fn text_serial_at(bytes: &[u8], seed_digits: &[u8]) -> Option<u64> {
    let candidate = bytes.get(..MARKER_BYTES)?;
    if candidate.get(3..19) != Some(seed_digits) || candidate.get(MARKER_BYTES - 1) != Some(&b'>') {
        return None;
    }
    serial_of(candidate)
}

/// Adds to `found` the serial of every vector marker anywhere in `bytes`.
pub fn find_vector_markers(bytes: &[u8], found: &mut BTreeSet<u64>) {
    for start in memchr::memmem::find_iter(bytes, VECTOR_MARKER_START) {
        if let Some(serial) = bytes.get(start..).and_then(vector_serial_at) {
            found.insert(serial);
        }
    }
}

/// Adds to `found` the serial of every text marker of `seed` and every vector marker in
/// `bytes`, in one pass (both start with `<`).
pub fn find_all_markers(bytes: &[u8], seed: u64, found: &mut BTreeSet<u64>) {
    let seed_digits = format!("{seed:016x}").into_bytes();
    for start in memchr::memchr_iter(b'<', bytes) {
        let Some(rest) = bytes.get(start..) else { continue };
        let serial = if rest.starts_with(MARKER_START) {
            text_serial_at(rest, &seed_digits)
        } else if rest.starts_with(VECTOR_MARKER_START) {
            vector_serial_at(rest)
        } else {
            None
        };
        found.extend(serial);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found_wherever_they_are() {
        let mut random = Random::seeded(1);
        let first = content(9, 1, 100, &mut random);
        let second = content(9, 12, 0, &mut random);
        let mut disk = b"junk<c:".to_vec();
        disk.extend_from_slice(&first);
        disk.extend_from_slice(b"<<");
        disk.extend_from_slice(second.get(..MARKER_BYTES).unwrap());
        let mut found = BTreeSet::new();
        find_markers(&disk, 9, &mut found);
        assert_eq!(found, BTreeSet::from([1, 12]));
        let mut other_seed = BTreeSet::new();
        find_markers(&disk, 10, &mut other_seed);
        assert!(other_seed.is_empty());
    }

    #[test]
    fn a_flipped_bit_never_makes_the_marker_of_another_serial() {
        // Seed 874 of the swarm campaign: a bit flipped in a serial digit of one node's marker
        // made it read as another node's, whose text had been erased.
        let mark = marker(9, 0x16);
        for index in 0..mark.len() {
            for bit in 0..8 {
                let mut flipped = mark.clone();
                flipped[index] ^= 1 << bit;
                let mut found = BTreeSet::new();
                find_markers(&flipped, 9, &mut found);
                assert!(found.is_empty() || found == BTreeSet::from([0x16]), "{index} {bit}: {found:?}");
            }
        }
    }

    #[test]
    fn vector_markers_are_found_at_both_ends_and_numbers_stay_tame() {
        let mut random = Random::seeded(4);
        let vector = vector(0x1234_5678, 12, &mut random);
        assert_eq!(vector.len(), 12);
        assert_eq!(vector_serial_of(&vector), Some(0x1234_5678));
        assert!(vector.iter().all(|number| number.is_finite() && number.abs() <= 4.0));
        let bytes = vector_bytes(&vector);
        let mut found = BTreeSet::new();
        find_vector_markers(bytes.get(bytes.len() - VECTOR_MARKER_BYTES..).unwrap(), &mut found);
        assert_eq!(found, BTreeSet::from([0x1234_5678]));
        let mut junk = b"<v<v".to_vec();
        junk.extend_from_slice(&bytes);
        let mut found = BTreeSet::new();
        find_vector_markers(&junk, &mut found);
        assert_eq!(found, BTreeSet::from([0x1234_5678]));
    }

    #[test]
    fn a_flipped_bit_never_makes_the_vector_marker_of_another_serial() {
        let bytes = vector_bytes(&vector(0x16, 8, &mut Random::seeded(5)));
        for index in 0..VECTOR_MARKER_BYTES {
            for bit in 0..8 {
                let mut flipped = bytes.get(..VECTOR_MARKER_BYTES).unwrap().to_vec();
                flipped[index] ^= 1 << bit;
                let mut found = BTreeSet::new();
                find_vector_markers(&flipped, &mut found);
                assert!(found.is_empty() || found == BTreeSet::from([0x16]), "{index} {bit}: {found:?}");
            }
        }
    }

    #[test]
    fn one_pass_finds_text_and_vector_markers() {
        let mut random = Random::seeded(6);
        let mut disk = content(9, 3, 40, &mut random);
        disk.extend_from_slice(b"<<v<c");
        disk.extend(vector_bytes(&vector(4, 8, &mut random)));
        let mut found = BTreeSet::new();
        find_all_markers(&disk, 9, &mut found);
        assert_eq!(found, BTreeSet::from([3, 4]));
    }

    #[test]
    fn a_content_starts_and_ends_with_its_marker() {
        let text = content(3, 77, 50, &mut Random::seeded(2));
        assert_eq!(serial_of(&text), Some(77));
        assert!(text.ends_with(&marker(3, 77)));
        assert!(!text.get(MARKER_BYTES..text.len() - MARKER_BYTES).unwrap().contains(&b'<'));
    }
}
