//! Contents that can be found again: every lot and memory the harness writes carries a unique
//! marker at its start and at its end, so a byte search of every file tells exactly whose text is
//! still stored.
//!
//! A marker is `<c:` + 16 hex digits of the run's seed + `:` + 8 hex digits of a serial + `:` +
//! the same 8 digits again + `>`. The filler between the two markers never contains `<`, so
//! markers never overlap. The serial is written twice so that a flipped bit (a fault the
//! simulator injects into stored bytes) cannot turn one node's marker into another's: a marker
//! counts only if both copies agree.

use std::collections::BTreeSet;

use crate::random::Random;

const MARKER_START: &[u8] = b"<c:";
/// The bytes filler is drawn from: never `<`, so no marker can appear inside filler.
const FILLER: &[u8] = b"abcdefghijklmnopqrstuvwxyz ";
/// Bytes of one marker.
pub const MARKER_BYTES: usize = 3 + 16 + 1 + 8 + 1 + 8 + 1;
/// Where the first copy of the serial starts in a marker.
const SERIAL_AT: usize = 3 + 16 + 1;

/// The marker of `serial` in the run of `seed`.
pub fn marker(seed: u64, serial: u64) -> Vec<u8> {
    let serial = serial & 0xffff_ffff;
    format!("<c:{seed:016x}:{serial:08x}:{serial:08x}>").into_bytes()
}

/// A content for `serial`: marker, up to `filler_max_bytes` of lowercase filler, marker.
pub fn content(seed: u64, serial: u64, filler_max_bytes: u64, random: &mut Random) -> Vec<u8> {
    let mark = marker(seed, serial);
    let filler = random.below(filler_max_bytes + 1) as usize;
    let mut out = Vec::with_capacity(2 * MARKER_BYTES + filler);
    out.extend_from_slice(&mark);
    for _ in 0..filler {
        out.push(FILLER.get(random.index(FILLER.len())).copied().unwrap_or(b' '));
    }
    out.extend_from_slice(&mark);
    out
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

/// Adds to `found` the serial of every marker of `seed` anywhere in `bytes`.
pub fn find_markers(bytes: &[u8], seed: u64, found: &mut BTreeSet<u64>) {
    let seed_digits = format!("{seed:016x}").into_bytes();
    let mut position = 0;
    while let Some(offset) = bytes
        .get(position..)
        .and_then(|rest| rest.windows(MARKER_START.len()).position(|window| window == MARKER_START))
    {
        let start = position + offset;
        position = start + 1;
        let Some(candidate) = bytes.get(start..start + MARKER_BYTES) else { break };
        if candidate.get(3..19) != Some(&seed_digits[..]) || candidate.get(MARKER_BYTES - 1) != Some(&b'>') {
            continue;
        }
        if let Some(serial) = serial_of(candidate) {
            found.insert(serial);
        }
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
    fn a_content_starts_and_ends_with_its_marker() {
        let text = content(3, 77, 50, &mut Random::seeded(2));
        assert_eq!(serial_of(&text), Some(77));
        assert!(text.ends_with(&marker(3, 77)));
        assert!(!text.get(MARKER_BYTES..text.len() - MARKER_BYTES).unwrap().contains(&b'<'));
    }
}
