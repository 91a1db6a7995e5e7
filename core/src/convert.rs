//! Conversions between integer widths, each named after what it converts and resting on the
//! limit that makes it safe, stated here once. The core denies bare `as` casts that could
//! truncate, wrap or lose a sign; every narrowing goes through one of these functions or
//! `try_from`.
//!
//! Three kinds live here:
//! - conversions a limit guarantees, which return `Error::Internal` if the limit was somehow
//!   bypassed, so a broken invariant is reported and never panics or wraps;
//! - lengths written into fields of the on-disk format by encoders that cannot fail, which
//!   saturate: a length over its field then disagrees with the bytes that follow, and the
//!   decoder refuses the record, where a wrapped length could have looked plausible;
//! - fields unpacked from a packed word, which keep the low bits on purpose.

use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::limits::{NODES_PER_AGENT_MAX, SEGMENTS_PER_AGENT_MAX, SEGMENT_MAX_BYTES};

/// A segment number in the 16 bits a location keeps in RAM: an agent has at most
/// `SEGMENTS_PER_AGENT_MAX` (65,535) segments, so every segment number fits.
pub(crate) fn segment_number_u16(segment: u64) -> Result<u16, Error> {
    debug_assert!(SEGMENTS_PER_AGENT_MAX <= u64::from(u16::MAX));
    u16::try_from(segment).map_err(|_| Error::Internal { what: InternalRule::SegmentNumberFitsIn16Bits })
}

/// A byte offset inside a segment in the 32 bits a location keeps in RAM: a segment is sealed
/// once it passes `segment_size_max_bytes`, which is at most `SEGMENT_MAX_BYTES` (half of
/// `u32::MAX`), and the batch that passes it is far smaller than the other half.
pub(crate) fn segment_offset_u32(offset: u64) -> Result<u32, Error> {
    debug_assert!(SEGMENT_MAX_BYTES <= u64::from(u32::MAX) / 2);
    u32::try_from(offset).map_err(|_| Error::Internal { what: InternalRule::SegmentOffsetFitsIn32Bits })
}

/// A byte offset or length inside a segment as a position in memory: segments are limited as
/// for `segment_offset_u32`, so any `usize` of 32 bits or more holds it.
pub(crate) fn segment_offset_usize(offset: u64) -> Result<usize, Error> {
    usize::try_from(offset).map_err(|_| Error::Internal { what: InternalRule::SegmentOffsetFitsInMemory })
}

/// A byte count bounded by a limit of the engine (a content, a batch, a preallocation: all far
/// under 4 GiB) as a length in memory.
pub(crate) fn bounded_bytes_usize(bytes: u64) -> Result<usize, Error> {
    usize::try_from(bytes).map_err(|_| Error::Internal { what: InternalRule::BoundedByteCountFitsInMemory })
}

/// A count or length bounded by a limit of the engine (records of a batch, bytes of a content,
/// both far under 4 Gi) in 32 bits.
pub(crate) fn bounded_count_u32(count: usize) -> Result<u32, Error> {
    u32::try_from(count).map_err(|_| Error::Internal { what: InternalRule::BoundedCountFitsIn32Bits })
}

/// The index in RAM of the node with id `id` (ids start at 1): an agent holds at most
/// `NODES_PER_AGENT_MAX` (2^30 - 1) nodes, so every index fits in 32 bits.
pub(crate) fn node_index_u32(id: u64) -> Result<u32, Error> {
    debug_assert!(NODES_PER_AGENT_MAX < u64::from(u32::MAX));
    id.checked_sub(1)
        .and_then(|index| u32::try_from(index).ok())
        .ok_or_else(|| Error::Internal { what: InternalRule::NodeIdWithinLimit })
}

/// As `node_index_u32`, for places that cannot return an error and whose ids were checked
/// before: an id without an index gives `u32::MAX`, an index no node has, so a lookup with it
/// finds nothing rather than another node.
pub(crate) fn node_index_or_none_u32(id: u64) -> u32 {
    node_index_u32(id).unwrap_or(u32::MAX)
}

/// A position in one of the recall graph's arrays in RAM, in the 32 bits the graph stores:
/// their lengths follow the node limit (2^30 - 1 nodes, each with a bounded number of legs and
/// parents). Saturates at `u32::MAX`, a position past the end of every array.
pub(crate) fn graph_position_u32(position: usize) -> u32 {
    u32::try_from(position).unwrap_or(u32::MAX)
}

/// A length written into a 16-bit field of the format by an encoder that cannot fail: labels,
/// names and leg counts are checked against their limits (all under 65,536) before they reach
/// an encoder. Saturates, so an unchecked length is refused when read back.
pub(crate) fn field_length_u16(length: usize) -> u16 {
    u16::try_from(length).unwrap_or(u16::MAX)
}

/// A length written into a 32-bit field of the format by an encoder that cannot fail: records,
/// contents and entry counts are checked against their limits (all under 4 GiB) before they
/// reach an encoder. Saturates, so an unchecked length is refused when read back.
pub(crate) fn field_length_u32(length: usize) -> u32 {
    u32::try_from(length).unwrap_or(u32::MAX)
}

/// A length written into an 8-bit field by an encoder that cannot fail (a file name, checked
/// against the names the engine makes before it reaches the encoder). Saturates.
pub(crate) fn field_length_u8(length: usize) -> u8 {
    u8::try_from(length).unwrap_or(u8::MAX)
}

/// The low 32 bits of a packed word.
pub(crate) fn low_u32(word: u64) -> u32 {
    let [byte0, byte1, byte2, byte3, ..] = word.to_le_bytes();
    u32::from_le_bytes([byte0, byte1, byte2, byte3])
}

/// The low 16 bits of a packed word.
pub(crate) fn low_u16(word: u64) -> u16 {
    let [byte0, byte1, ..] = word.to_le_bytes();
    u16::from_le_bytes([byte0, byte1])
}

/// The low 8 bits of a packed word.
pub(crate) fn low_u8(word: u64) -> u8 {
    let [byte0, ..] = word.to_le_bytes();
    byte0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::CONTENT_MAX_BYTES;

    #[test]
    fn limits_fit_their_fields() {
        assert_eq!(segment_number_u16(SEGMENTS_PER_AGENT_MAX).unwrap(), u16::MAX);
        assert!(segment_offset_u32(SEGMENT_MAX_BYTES * 2).is_ok());
        assert_eq!(node_index_u32(NODES_PER_AGENT_MAX).unwrap(), (1 << 30) - 2);
        assert!(bounded_count_u32(CONTENT_MAX_BYTES).is_ok());
    }

    #[test]
    fn values_past_a_limit_are_internal_errors_not_wraps() {
        assert!(matches!(segment_number_u16(1 << 16), Err(Error::Internal { .. })));
        assert!(matches!(segment_offset_u32(1 << 32), Err(Error::Internal { .. })));
        assert!(matches!(node_index_u32(0), Err(Error::Internal { .. })));
        assert!(matches!(node_index_u32((1 << 32) + 1), Err(Error::Internal { .. })));
        assert_eq!(node_index_or_none_u32(0), u32::MAX);
    }

    #[test]
    fn encoder_lengths_saturate() {
        assert_eq!(field_length_u16(256), 256);
        assert_eq!(field_length_u16(1 << 16), u16::MAX);
        assert_eq!(field_length_u32(7), 7);
        assert_eq!(field_length_u32(usize::MAX), u32::MAX);
        assert_eq!(graph_position_u32(12), 12);
    }

    #[test]
    fn low_bits_are_kept() {
        let word = 0x0123_4567_89ab_cdef_u64;
        assert_eq!(low_u32(word), 0x89ab_cdef);
        assert_eq!(low_u16(word), 0xcdef);
        assert_eq!(low_u8(word), 0xef);
    }
}
