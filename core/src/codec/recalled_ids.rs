//! The ids of a recall of several nodes at once, in their encoded form: a count, then each id
//! as its distance from the one before (the first from zero) in LEB128, seven bits a byte,
//! low bits first. The ids are strictly ascending, so every distance is at least one, and a
//! member applying a space's recall to thousands of neighbouring shared nodes writes about a
//! byte for each.
//!
//! ```text
//! count u32, then count distances, each 1 to 10 bytes (high bit = another byte follows)
//! ```

use alloc::vec::Vec;

use super::bytes::{Reader, Writer};

/// The most ids one record holds: the recall of more is several records of one write.
pub const RECALLED_IDS_MAX: usize = 1 << 20;

/// The most bytes one distance takes (64 bits, seven a byte).
pub const DISTANCE_MAX_BYTES: usize = 10;

/// Recalled ids as a record holds them, checked when parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecalledIds<'a> {
    count: u32,
    raw: &'a [u8],
}

impl<'a> RecalledIds<'a> {
    /// Encodes `ids`, which must be strictly ascending and at most [`RECALLED_IDS_MAX`], without
    /// their count; `None` when they are not.
    #[must_use]
    pub fn encode(ids: &[u64]) -> Option<Vec<u8>> {
        if ids.is_empty() || ids.len() > RECALLED_IDS_MAX {
            return None;
        }
        let mut out = Vec::with_capacity(ids.len() + 8);
        let mut previous = 0u64;
        for id in ids {
            let distance = id.checked_sub(previous).filter(|distance| *distance > 0)?;
            put_distance(distance, &mut out);
            previous = *id;
        }
        Some(out)
    }

    /// A view of `count` encoded ids in `raw`; `None` unless `raw` holds exactly that many
    /// distances, each in its shortest form, at least one, with no sum past `u64::MAX`.
    #[must_use]
    pub fn parse(count: u32, raw: &'a [u8]) -> Option<RecalledIds<'a>> {
        if count == 0 || usize::try_from(count).ok()? > RECALLED_IDS_MAX {
            return None;
        }
        let mut reader = Reader::new(raw);
        let mut id = 0u64;
        for _ in 0..count {
            let distance = take_distance(&mut reader)?;
            id = id.checked_add(distance).filter(|_| distance > 0)?;
        }
        (reader.remaining() == 0).then_some(RecalledIds { count, raw })
    }

    /// How many ids.
    #[must_use]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The encoded distances.
    #[must_use]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The ids, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        let mut reader = Reader::new(self.raw);
        let mut id = 0u64;
        (0..self.count).map_while(move |_| {
            id = id.checked_add(take_distance(&mut reader)?)?;
            Some(id)
        })
    }

    /// Whether `id` is one of them.
    #[must_use]
    pub fn contains(&self, id: u64) -> bool {
        self.iter().take_while(|each| *each <= id).any(|each| each == id)
    }
}

/// Appends `distance` in LEB128.
fn put_distance(mut distance: u64, out: &mut Vec<u8>) {
    while distance >= 0x80 {
        out.put_u8(low_seven_bits(distance) | 0x80);
        distance >>= 7;
    }
    out.put_u8(low_seven_bits(distance));
}

/// The low seven bits of `value`.
fn low_seven_bits(value: u64) -> u8 {
    u8::try_from(value & 0x7f).unwrap_or(0)
}

/// Reads one distance in its shortest LEB128 form; `None` for one cut short, longer than it
/// needs to be, or past 64 bits.
fn take_distance(reader: &mut Reader<'_>) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0u32;
    for _ in 0..DISTANCE_MAX_BYTES {
        let byte = reader.u8()?;
        let bits = u64::from(byte & 0x7f);
        let shifted = bits.checked_shl(shift).filter(|shifted| shifted >> shift == bits)?;
        value |= shifted;
        if byte & 0x80 == 0 {
            // A last byte of zero after others is a longer form of a shorter number.
            return (shift == 0 || byte != 0).then_some(value);
        }
        shift += 7;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn neighbouring_ids_take_a_byte_each_and_the_golden_bytes_hold() {
        let raw = RecalledIds::encode(&[3, 4, 5, 300]).unwrap();
        assert_eq!(raw, [3, 1, 1, 0xa7, 0x02]);
        let view = RecalledIds::parse(4, &raw).unwrap();
        assert_eq!(view.iter().collect::<Vec<_>>(), [3, 4, 5, 300]);
        assert!(view.contains(300) && view.contains(4) && !view.contains(6));
    }

    #[test]
    fn ids_not_strictly_ascending_or_none_or_too_many_are_not_encoded() {
        assert_eq!(RecalledIds::encode(&[]), None);
        assert_eq!(RecalledIds::encode(&[0]), None);
        assert_eq!(RecalledIds::encode(&[4, 4]), None);
        assert_eq!(RecalledIds::encode(&[5, 4]), None);
        let too_many: Vec<u64> = (1..=RECALLED_IDS_MAX as u64 + 1).collect();
        assert_eq!(RecalledIds::encode(&too_many), None);
    }

    #[test]
    fn malformed_distances_are_refused() {
        // A zero distance, a longer form of 1, a cut-short byte, a trailing byte, 65 bits.
        assert_eq!(RecalledIds::parse(2, &[1, 0]), None);
        assert_eq!(RecalledIds::parse(1, &[0x81, 0x00]), None);
        assert_eq!(RecalledIds::parse(1, &[0x81]), None);
        assert_eq!(RecalledIds::parse(1, &[1, 1]), None);
        assert_eq!(RecalledIds::parse(0, &[]), None);
        let past_64_bits = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(RecalledIds::parse(1, &past_64_bits), None);
        let largest = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(RecalledIds::parse(1, &largest).unwrap().iter().collect::<Vec<_>>(), [u64::MAX]);
        // Two ids whose sum passes u64::MAX.
        let mut overflowing = largest.to_vec();
        overflowing.push(1);
        assert_eq!(RecalledIds::parse(2, &overflowing), None);
    }

    proptest! {
        #[test]
        fn parse_of_encode_gives_the_ids_back(mut ids in proptest::collection::vec(1u64.., 1..200)) {
            ids.sort_unstable();
            ids.dedup();
            let raw = RecalledIds::encode(&ids).unwrap();
            let view = RecalledIds::parse(u32::try_from(ids.len()).unwrap(), &raw).unwrap();
            prop_assert_eq!(view.iter().collect::<Vec<_>>(), ids);
        }

        #[test]
        fn arbitrary_bytes_never_panic(count in 0u32..64, raw in proptest::collection::vec(any::<u8>(), 0..128)) {
            if let Some(view) = RecalledIds::parse(count, &raw) {
                prop_assert_eq!(view.iter().count(), count as usize);
            }
        }
    }
}
