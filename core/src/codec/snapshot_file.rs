//! A snapshot: the recall graph of an agent at one committed point of its log, so that open
//! loads it and replays only the records after that point. It holds ids, flags, record
//! locations, legs and child edges, never content.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "CHEESEDB"
//!      8     1  format version (1)
//!      9     1  file kind (3 = snapshot)
//!     10     2  snapshot layout (4: with child rows, the vector flag and shared nodes)
//!     12     4  reserved, zero
//!     16     8  agent number
//!     24     8  segment of the point
//!     32     8  offset of the point in that segment (a commit boundary)
//!     40     8  sequence at the point
//!     48    32  chain hash at the point
//!     80     8  node count (N)
//!     88     8  leg word count (W)
//!     96     8  child edge count (E)
//!    104     8  shared node count (S)
//!    112     4  crc32c of the node slots
//!    116     4  crc32c of the leg words
//!    120     4  crc32c of the leg word ends
//!    124     4  crc32c of the child row starts
//!    128     4  crc32c of the child row
//!    132     4  crc32c of the shared nodes
//!    136     4  reserved, zero
//!    140     4  crc32c of bytes [0, 140)
//!    144     …  body: N node slots (u64), W leg words (u32), N leg word ends (u32),
//!               N + 1 child row starts (u32), E children (u32), S shared nodes (each the
//!               space's number, the node's id in the space and the shared node's id, u64)
//! ```
//!
//! Each part of the body has its own checksum, so a reader can check it as it takes it in.

use alloc::vec::Vec;

use super::bytes::{Reader, Writer};
use super::segment_header::{FORMAT_VERSION, MAGIC};
use crate::checksum::{crc32c, Crc32cDigest};
use crate::corrupt_reason::CorruptReason;
use crate::digest::Hash;
use crate::graph::GraphParts;

/// The file kind byte of a snapshot.
pub const FILE_KIND_SNAPSHOT: u8 = 3;
/// The snapshot layout this build writes and reads. Layout 1 had no child rows, layout 2 no
/// vector flag (a node flag bit that layout 3 gives a meaning), layout 3 no shared nodes (an
/// agent holding one kept no snapshot); a snapshot of another layout is ignored like a damaged
/// one, and open replays the log instead.
pub const SNAPSHOT_LAYOUT: u16 = 4;
/// Bytes of a snapshot header.
pub const SNAPSHOT_HEADER_BYTES: usize = 144;
/// Bytes of one shared node in the body.
const SHARED_NODE_BYTES: u64 = 24;
/// How many parts the body has.
const PARTS: usize = 6;

/// A shared node as a snapshot holds it: the agent's node `id` stands for node `space_id` of
/// space `space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SnapshotShared {
    /// The space's number in the store.
    pub space: u64,
    /// The node's id in the space.
    pub space_id: u64,
    /// The shared node's id in the agent.
    pub id: u64,
}

/// The committed point of the log a snapshot describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotPoint {
    /// The agent.
    pub agent: u64,
    /// The segment holding the point.
    pub segment: u64,
    /// The offset just after the last commit marker the snapshot covers.
    pub offset: u64,
    /// The sequence of the last record covered.
    pub sequence: u64,
    /// The chain hash after it.
    pub chain: Hash,
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// Where in the log it was taken.
    pub point: SnapshotPoint,
    /// The graph's node slots.
    pub slots: Vec<u64>,
    /// The graph's packed leg words.
    pub leg_words: Vec<u32>,
    /// Where each node's words end in `leg_words`.
    pub leg_node_ends: Vec<u32>,
    /// Where each node's children start in `child_row`.
    pub child_row_starts: Vec<u32>,
    /// Every node's children, node after node.
    pub child_row: Vec<u32>,
    /// The shared nodes, ascending by space, then node in the space, then id.
    pub shared: Vec<SnapshotShared>,
}

fn u64_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|value| value.to_le_bytes()).collect()
}

fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|value| value.to_le_bytes()).collect()
}

impl SnapshotFile {
    /// The graph this snapshot holds, as borrowed parts: what [`SnapshotFile::encode`] takes,
    /// so a decoded snapshot can be written again.
    #[must_use]
    pub fn graph_parts(&self) -> GraphParts<'_> {
        GraphParts {
            slots: &self.slots,
            leg_words: &self.leg_words,
            leg_node_ends: &self.leg_node_ends,
            child_row_starts: &self.child_row_starts,
            child_row: &self.child_row,
        }
    }

    /// The snapshot's bytes.
    pub fn encode(point: &SnapshotPoint, graph: GraphParts<'_>, shared: &[SnapshotShared]) -> Vec<u8> {
        let shared_words: Vec<u64> = shared.iter().flat_map(|node| [node.space, node.space_id, node.id]).collect();
        let parts = [
            u64_bytes(graph.slots),
            u32_bytes(graph.leg_words),
            u32_bytes(graph.leg_node_ends),
            u32_bytes(graph.child_row_starts),
            u32_bytes(graph.child_row),
            u64_bytes(&shared_words),
        ];
        let body_length: usize = parts.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(SNAPSHOT_HEADER_BYTES + body_length);
        out.put_bytes(&MAGIC);
        out.put_u8(FORMAT_VERSION);
        out.put_u8(FILE_KIND_SNAPSHOT);
        out.put_u16(SNAPSHOT_LAYOUT);
        out.put_u32(0);
        out.put_u64(point.agent);
        out.put_u64(point.segment);
        out.put_u64(point.offset);
        out.put_u64(point.sequence);
        out.put_bytes(&point.chain);
        out.put_u64(graph.slots.len() as u64);
        out.put_u64(graph.leg_words.len() as u64);
        out.put_u64(graph.child_row.len() as u64);
        out.put_u64(shared.len() as u64);
        for part in &parts {
            out.put_u32(crc32c(part));
        }
        out.put_u32(0);
        let header_checksum = crc32c(&out);
        out.put_u32(header_checksum);
        debug_assert_eq!(out.len(), SNAPSHOT_HEADER_BYTES);
        for part in &parts {
            out.extend_from_slice(part);
        }
        out
    }

    /// Decodes a snapshot held in `bytes`, or says which check failed.
    pub fn decode(bytes: &[u8]) -> Result<SnapshotFile, CorruptReason> {
        SnapshotFile::read(bytes.len() as u64, |offset, out| {
            let start = usize::try_from(offset).ok()?;
            out.copy_from_slice(bytes.get(start..start.checked_add(out.len())?)?);
            Some(())
        })
    }

    /// Decodes a snapshot of `length` bytes that `read_at` fills in piece by piece (`None` if
    /// it cannot), so that a large snapshot is never held twice in memory. Says which check
    /// failed. Nothing is allocated before the counts are found to match `length`.
    pub fn read(
        length: u64,
        mut read_at: impl FnMut(u64, &mut [u8]) -> Option<()>,
    ) -> Result<SnapshotFile, CorruptReason> {
        let mut header_bytes = [0u8; SNAPSHOT_HEADER_BYTES];
        if length < SNAPSHOT_HEADER_BYTES as u64 {
            return Err(CorruptReason::SnapshotCutShort);
        }
        read_at(0, &mut header_bytes).ok_or(UNREADABLE)?;
        let header = Header::decode(&header_bytes)?;
        let body_length = header.part_lengths.iter().try_fold(0u64, |sum, length| sum.checked_add(*length));
        match body_length.and_then(|body| body.checked_add(SNAPSHOT_HEADER_BYTES as u64)) {
            Some(expected) if expected > length => return Err(CorruptReason::SnapshotBodyShorterThanCounts),
            Some(expected) if expected < length => return Err(CorruptReason::SnapshotBodyLongerThanCounts),
            Some(_) => {}
            None => return Err(CorruptReason::SnapshotBodyShorterThanCounts),
        }
        let mut offset = SNAPSHOT_HEADER_BYTES as u64;
        let [slots, words, ends, starts, row, shared] = header.part_lengths;
        let [slots_crc, words_crc, ends_crc, starts_crc, row_crc, shared_crc] = header.part_checksums;
        let slots = read_part(&mut read_at, &mut offset, slots, slots_crc, u64::from_le_bytes)?;
        let leg_words = read_part(&mut read_at, &mut offset, words, words_crc, u32::from_le_bytes)?;
        let leg_node_ends = read_part(&mut read_at, &mut offset, ends, ends_crc, u32::from_le_bytes)?;
        let child_row_starts = read_part(&mut read_at, &mut offset, starts, starts_crc, u32::from_le_bytes)?;
        let child_row = read_part(&mut read_at, &mut offset, row, row_crc, u32::from_le_bytes)?;
        let shared_words = read_part(&mut read_at, &mut offset, shared, shared_crc, u64::from_le_bytes)?;
        let shared = shared_words
            .chunks_exact(3)
            .filter_map(|node| match node {
                [space, space_id, id] => Some(SnapshotShared { space: *space, space_id: *space_id, id: *id }),
                _ => None,
            })
            .collect();
        Ok(SnapshotFile { point: header.point, slots, leg_words, leg_node_ends, child_row_starts, child_row, shared })
    }
}

const UNREADABLE: CorruptReason = CorruptReason::SnapshotUnreadable;
/// Bytes taken in at a time: large enough to keep reads few, small enough to stay in cache.
const PIECE_BYTES: usize = 256 * 1024;

/// The header's facts.
struct Header {
    point: SnapshotPoint,
    /// Bytes of the slots, leg words, leg word ends, child row starts, child row and shared
    /// nodes.
    part_lengths: [u64; PARTS],
    part_checksums: [u32; PARTS],
}

impl Header {
    fn decode(header: &[u8; SNAPSHOT_HEADER_BYTES]) -> Result<Header, CorruptReason> {
        let missing = CorruptReason::SnapshotCutShort;
        let (checked, stored_checksum) = header.split_at(SNAPSHOT_HEADER_BYTES - 4);
        let mut reader = Reader::new(header);
        if reader.array::<8>() != Some(MAGIC) {
            return Err(CorruptReason::BadMagic);
        }
        if Reader::new(stored_checksum).u32() != Some(crc32c(checked)) {
            return Err(CorruptReason::SnapshotHeaderChecksumMismatch);
        }
        if reader.u8() != Some(FORMAT_VERSION) || reader.u8() != Some(FILE_KIND_SNAPSHOT) {
            return Err(CorruptReason::SnapshotOfAnotherFormatVersion);
        }
        if reader.u16() != Some(SNAPSHOT_LAYOUT) {
            return Err(CorruptReason::SnapshotOfAnotherLayout);
        }
        if reader.u32() != Some(0) {
            return Err(CorruptReason::ReservedSnapshotBytesSet);
        }
        let point = SnapshotPoint {
            agent: reader.u64().ok_or(missing)?,
            segment: reader.u64().ok_or(missing)?,
            offset: reader.u64().ok_or(missing)?,
            sequence: reader.u64().ok_or(missing)?,
            chain: reader.array().ok_or(missing)?,
        };
        let too_many = CorruptReason::SnapshotCountsImpossiblyLarge;
        let node_count = reader.u64().ok_or(missing)?;
        let word_count = reader.u64().ok_or(missing)?;
        let edge_count = reader.u64().ok_or(missing)?;
        let shared_count = reader.u64().ok_or(missing)?;
        let part_lengths = [
            node_count.checked_mul(8).ok_or(too_many)?,
            word_count.checked_mul(4).ok_or(too_many)?,
            node_count.checked_mul(4).ok_or(too_many)?,
            node_count.checked_add(1).and_then(|starts| starts.checked_mul(4)).ok_or(too_many)?,
            edge_count.checked_mul(4).ok_or(too_many)?,
            shared_count.checked_mul(SHARED_NODE_BYTES).ok_or(too_many)?,
        ];
        let mut part_checksums = [0u32; PARTS];
        for checksum in &mut part_checksums {
            *checksum = reader.u32().ok_or(missing)?;
        }
        if reader.u32() != Some(0) {
            return Err(CorruptReason::ReservedSnapshotBytesSet);
        }
        Ok(Header { point, part_lengths, part_checksums })
    }
}

/// Reads `length` bytes at `offset` as little-endian values of `N` bytes each, checking their
/// crc32c, and moves `offset` past them.
fn read_part<T, const N: usize>(
    read_at: &mut impl FnMut(u64, &mut [u8]) -> Option<()>,
    offset: &mut u64,
    length: u64,
    checksum: u32,
    from_bytes: fn([u8; N]) -> T,
) -> Result<Vec<T>, CorruptReason> {
    const { assert!(PIECE_BYTES % N == 0) };
    let length = usize::try_from(length).map_err(|_| CorruptReason::SnapshotTooLargeForThisMachine)?;
    let mut values = Vec::with_capacity(length / N);
    let mut piece = alloc::vec![0u8; length.min(PIECE_BYTES)];
    let mut digest = Crc32cDigest::new();
    let mut remaining = length;
    while remaining > 0 {
        let taken = piece.get_mut(..remaining.min(PIECE_BYTES)).unwrap_or_default();
        read_at(*offset, taken).ok_or(UNREADABLE)?;
        digest.update(taken);
        values.extend(taken.chunks_exact(N).map(|chunk| from_bytes(chunk.try_into().unwrap_or([0; N]))));
        remaining -= taken.len();
        *offset += taken.len() as u64;
    }
    if digest.finish() != checksum {
        return Err(CorruptReason::SnapshotBodyChecksumMismatch);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn point() -> SnapshotPoint {
        SnapshotPoint { agent: 1, segment: 2, offset: 300, sequence: 9, chain: [3; 32] }
    }

    fn encode(slots: &[u64], leg_words: &[u32], child_row_starts: &[u32], child_row: &[u32]) -> Vec<u8> {
        let leg_node_ends = node_ends(slots.len());
        SnapshotFile::encode(
            &point(),
            GraphParts { slots, leg_words, leg_node_ends: &leg_node_ends, child_row_starts, child_row },
            &[SnapshotShared { space: 4, space_id: 9, id: 1 }],
        )
    }

    fn node_ends(node_count: usize) -> Vec<u32> {
        (0..u32::try_from(node_count).unwrap()).collect()
    }

    #[test]
    fn golden_header_bytes() {
        let bytes = encode(&[7], &[5, 6], &[0, 0], &[]);
        assert_eq!(bytes.get(..16), Some(&b"CHEESEDB\x01\x03\x04\x00\x00\x00\x00\x00"[..]));
        assert_eq!(
            bytes.get(80..112),
            Some(&[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0][..])
        );
        assert_eq!(bytes.len(), SNAPSHOT_HEADER_BYTES + 8 + 8 + 4 + 8 + 24);
        let shared_at = SNAPSHOT_HEADER_BYTES + 28;
        assert_eq!(bytes.get(shared_at..shared_at + 9), Some(&[4, 0, 0, 0, 0, 0, 0, 0, 9][..]));
        assert_eq!(bytes.get(SNAPSHOT_HEADER_BYTES + 8..SNAPSHOT_HEADER_BYTES + 12), Some(&[5, 0, 0, 0][..]));
        assert_eq!(bytes.get(SNAPSHOT_HEADER_BYTES..SNAPSHOT_HEADER_BYTES + 2), Some(&[7, 0][..]));
    }

    #[test]
    fn every_flipped_byte_is_refused() {
        let bytes = encode(&[7, 8], &[5], &[0, 1, 1], &[1]);
        for index in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[index] ^= 0x04;
            assert!(SnapshotFile::decode(&damaged).is_err(), "flip at {index} passed");
        }
    }

    #[test]
    fn a_cut_or_lengthened_snapshot_is_refused() {
        let bytes = encode(&[7, 8], &[5], &[0, 1, 1], &[1]);
        for length in 0..bytes.len() {
            assert!(SnapshotFile::decode(&bytes[..length]).is_err(), "cut at {length} passed");
        }
        let mut longer = bytes;
        longer.push(0);
        assert_eq!(SnapshotFile::decode(&longer), Err(CorruptReason::SnapshotBodyLongerThanCounts));
    }

    #[test]
    fn a_large_snapshot_comes_back_through_many_pieces() {
        let slots: Vec<u64> = (0..100_000).collect();
        let words: Vec<u32> = (0..70_001).collect();
        let bytes = encode(&slots, &words, &[0; 100_001], &[]);
        let back = SnapshotFile::decode(&bytes).unwrap();
        assert_eq!((back.slots, back.leg_words), (slots, words));
    }

    #[test]
    fn counts_larger_than_the_file_allocate_nothing_and_are_refused() {
        let mut bytes = encode(&[7], &[5], &[0, 1], &[1]);
        bytes[80..88].copy_from_slice(&u64::MAX.to_le_bytes());
        let checksum = crc32c(&bytes[..140]);
        bytes[140..144].copy_from_slice(&checksum.to_le_bytes());
        assert_eq!(SnapshotFile::decode(&bytes).err(), Some(CorruptReason::SnapshotCountsImpossiblyLarge));
        bytes[80..88].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let checksum = crc32c(&bytes[..140]);
        bytes[140..144].copy_from_slice(&checksum.to_le_bytes());
        assert_eq!(SnapshotFile::decode(&bytes).err(), Some(CorruptReason::SnapshotBodyShorterThanCounts));
    }

    proptest! {
        #[test]
        fn decode_of_encode_is_identity(
            slots in prop::collection::vec(any::<u64>(), 0..20),
            words in prop::collection::vec(any::<u32>(), 0..20),
            row in prop::collection::vec(any::<u32>(), 0..20),
        ) {
            let starts: Vec<u32> = (0..=u32::try_from(slots.len()).unwrap()).collect();
            let bytes = encode(&slots, &words, &starts, &row);
            let leg_node_ends = node_ends(slots.len());
            let shared = alloc::vec![SnapshotShared { space: 4, space_id: 9, id: 1 }];
            let expected = SnapshotFile { point: point(), slots, leg_words: words, leg_node_ends, child_row_starts: starts, child_row: row, shared };
            prop_assert_eq!(SnapshotFile::decode(&bytes), Ok(expected));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = SnapshotFile::decode(&bytes);
        }
    }
}
