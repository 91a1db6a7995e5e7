//! The postings of each word, the documents that hold it and how often, compressed, in one
//! arena shared by all words.
//!
//! Each posting is one variable-length integer (7 bits a byte, low bits first) holding the gap
//! from the previous document number shifted left once, its low bit set when the word occurs
//! once there; otherwise a second integer holds the frequency. Most words occur once in a
//! memory, and gaps of common words are small, so most postings take one or two bytes. The
//! last posting stays unencoded while its document is being added, so that each occurrence
//! only raises its frequency.
//!
//! A word's bytes lie in a chain of blocks of the arena, each twice the size of the one before
//! up to a cap, each ending with the position of the next. Unlike one growing array per word,
//! nothing is ever copied to grow, and little room is left unused: a few bytes per rare word,
//! at most one block per common one. The arena itself is a list of fixed-size chunks, so it
//! never moves either, and a chunk is only touched once written.
//!
//! Building writes postings of many words in turn, each to another place of a large arena, so
//! each write would be a cache miss, and so would each read of the word's state if the state
//! were large. So the state of a word takes 32 bytes, two to a cache line, and encoded postings
//! first gather in 8 of them, reaching the arena 8 bytes at a time with one store: each block
//! keeps 8 bytes past its room for postings (the link to the next block and 4 spare bytes), so
//! a store that runs past the room stays inside the block, and what it writes past the
//! postings is overwritten by the next store or the link. A rare word's few postings never
//! leave its state.

mod append;

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use crate::convert::{low_u16, low_u8};

/// The bytes of one chunk of the arena.
const CHUNK_BYTES: usize = 1 << 20;
/// Blocks start at multiples of this, and their positions count in this unit, so that 32 bits
/// address 128 GiB of postings (far beyond the RAM of any agent's index).
const UNIT_BYTES: usize = 32;
/// The size of the first block of a word, in bytes; each next one doubles, up to the last.
const BLOCK_FIRST_BYTES: usize = 32;
const BLOCK_SIZE_CLASSES: u8 = 5;
/// The position of the next block, right after the room for postings of each block.
const LINK_BYTES: usize = 4;
/// The bytes each store writes, and so the bytes at the end of a block past its room for
/// postings: the link and spare bytes.
const STORE_BYTES: usize = 8;

/// Where every word's postings are written.
#[derive(Debug, Clone, Default)]
pub(crate) struct PostingsArena {
    chunks: Vec<Box<[u8]>>,
    /// Bytes used in the last chunk.
    last_chunk_used: usize,
}

impl PostingsArena {
    /// The position (in units) of a new block of `size` bytes, a multiple of the unit, never
    /// split across chunks; `None` past what 32 bits address.
    fn allocate(&mut self, size: usize) -> Option<u32> {
        if self.chunks.is_empty() || self.last_chunk_used + size > CHUNK_BYTES {
            self.chunks.push(vec![0u8; CHUNK_BYTES].into_boxed_slice());
            self.last_chunk_used = 0;
        }
        let bytes = (self.chunks.len() - 1).checked_mul(CHUNK_BYTES)?.checked_add(self.last_chunk_used)?;
        let position = u32::try_from(bytes / UNIT_BYTES).ok()?;
        self.last_chunk_used += size;
        Some(position)
    }

    /// The `length` bytes from `offset` bytes into the block at `block`.
    fn bytes(&self, block: u32, offset: usize, length: usize) -> Option<&[u8]> {
        let (chunk, start) = chunk_and_start(block, offset)?;
        self.chunks.get(chunk)?.get(start..start.checked_add(length)?)
    }

    fn bytes_mut(&mut self, block: u32, offset: usize, length: usize) -> Option<&mut [u8]> {
        let (chunk, start) = chunk_and_start(block, offset)?;
        self.chunks.get_mut(chunk)?.get_mut(start..start.checked_add(length)?)
    }

    /// The bytes of RAM it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.chunks.len() * CHUNK_BYTES + self.chunks.capacity() * core::mem::size_of::<Box<[u8]>>()
    }
}

/// The chunk holding the byte `offset` bytes into the block at `block`, and where in it.
fn chunk_and_start(block: u32, offset: usize) -> Option<(usize, usize)> {
    let position = usize::try_from(block).ok()?.checked_mul(UNIT_BYTES)?.checked_add(offset)?;
    Some((position / CHUNK_BYTES, position % CHUNK_BYTES))
}

/// The size of a block of size class `class`.
fn block_bytes(class: u8) -> usize {
    BLOCK_FIRST_BYTES << class
}

/// Room for postings in a block of size class `class`.
fn room_bytes(class: u8) -> usize {
    block_bytes(class) - STORE_BYTES
}

/// The postings of one word, in ascending document order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Postings {
    /// The position of its first block in the arena (meaningless before one is allocated).
    first_block: u32,
    /// The position of the block being written.
    current_block: u32,
    /// Encoded postings not yet in the arena: the low `gathered_bytes` bytes.
    gathered: u64,
    /// Three small counters in 16 bits, see `Counters`.
    counters: Counters,
    /// The last posting, not yet encoded: its frequency (saturating at 65,535, where BM25 no
    /// longer tells frequencies apart) and document (valid when `documents` is above zero).
    last_frequency: u16,
    last_document: u32,
    /// The document of the last encoded posting (0 before any).
    encoded_last_document: u32,
    /// How many postings there are, the last one included.
    documents: u32,
}

/// Bytes written in the block being written (bits 0-8, at most 504), bytes gathered (bits
/// 9-12, at most 8), and the size class of the block being written plus one (bits 13-15, 0
/// before any block).
#[derive(Debug, Clone, Copy, Default)]
struct Counters(u16);

impl Counters {
    fn used(self) -> usize {
        usize::from(self.0 & 0x1ff)
    }

    fn gathered(self) -> usize {
        usize::from(self.0 >> 9 & 0xf)
    }

    /// The size class of the block being written, if there is one.
    fn class(self) -> Option<u8> {
        low_u8(u64::from(self.0 >> 13)).checked_sub(1)
    }

    fn with(used: usize, gathered: usize, class: Option<u8>) -> Counters {
        let class = class.map_or(0, |class| u64::from(class) + 1);
        Counters(low_u16(widen(used) & 0x1ff | (widen(gathered) & 0xf) << 9 | (class & 0x7) << 13))
    }
}

impl Postings {
    /// Counts one more occurrence in `document`, which is the last document given or a later
    /// one.
    #[inline]
    pub(crate) fn add_occurrence(&mut self, document: u32, arena: &mut PostingsArena) {
        if self.documents > 0 && self.last_document == document {
            self.last_frequency = self.last_frequency.saturating_add(1);
        } else {
            self.add(document, 1, arena);
        }
    }

    /// Adds a posting for `document`, which is after every document given before.
    #[inline]
    pub(crate) fn add(&mut self, document: u32, frequency: u32, arena: &mut PostingsArena) {
        if self.documents > 0 {
            self.encode_last(arena);
        }
        self.last_document = document;
        self.last_frequency = u16::try_from(frequency).unwrap_or(u16::MAX);
        self.documents = self.documents.saturating_add(1);
    }

    /// How many documents hold the word (removed ones included).
    pub(crate) fn documents(&self) -> u32 {
        self.documents
    }

    /// Each posting: its document and frequency, in ascending document order.
    pub(crate) fn iter<'a>(&'a self, arena: &'a PostingsArena) -> PostingsIter<'a> {
        let blocks = self
            .counters
            .class()
            .map(|_| BlockReader::new(arena, self.first_block, self.current_block, self.counters.used()));
        PostingsIter {
            bytes: PostingsBytes {
                blocks,
                gathered: self.gathered.to_le_bytes(),
                gathered_bytes: self.counters.gathered(),
                gathered_read: 0,
            },
            previous: 0,
            last: (self.documents > 0).then_some((self.last_document, u32::from(self.last_frequency))),
        }
    }

    fn encode_last(&mut self, arena: &mut PostingsArena) {
        // A gap below 2^32 and a frequency below 2^16 take at most 5 + 3 bytes: one integer.
        let gap = u64::from(self.last_document - self.encoded_last_document);
        let (encoded, length) = if self.last_frequency == 1 {
            varint(gap << 1 | 1)
        } else {
            let (gap, gap_length) = varint(gap << 1);
            let (frequency, frequency_length) = varint(u64::from(self.last_frequency));
            (gap | frequency << (8 * gap_length), gap_length + frequency_length)
        };
        let gathered = self.counters.gathered();
        if gathered + length <= STORE_BYTES {
            self.gathered |= encoded << (8 * gathered);
            self.counters = Counters::with(self.counters.used(), gathered + length, self.counters.class());
        } else {
            self.append(self.gathered, gathered, arena);
            self.gathered = encoded;
            self.counters = Counters::with(self.counters.used(), length, self.counters.class());
        }
        self.encoded_last_document = self.last_document;
    }

    /// Appends the `length` (at most 8) low bytes of `encoded` to the word's blocks, with one
    /// store, or two when the room of the last block runs out.
    fn append(&mut self, mut encoded: u64, mut length: usize, arena: &mut PostingsArena) {
        while length > 0 {
            let room = self.counters.class().map_or(0, room_bytes) - self.counters.used();
            if room == 0 {
                if !self.start_block(arena) {
                    return;
                }
                continue;
            }
            let count = length.min(room);
            let used = self.counters.used();
            if let Some(target) = arena.bytes_mut(self.current_block, used, STORE_BYTES) {
                target.copy_from_slice(&encoded.to_le_bytes());
            }
            self.counters = Counters::with(used + count, self.counters.gathered(), self.counters.class());
            encoded = encoded.checked_shr(u32::try_from(8 * count).unwrap_or(64)).unwrap_or(0);
            length -= count;
        }
    }

    /// Starts the next block; false if the arena is full (then the postings stop growing).
    fn start_block(&mut self, arena: &mut PostingsArena) -> bool {
        let previous = self.counters.class();
        let class = previous.map_or(0, |class| (class + 1).min(BLOCK_SIZE_CLASSES - 1));
        let Some(block) = arena.allocate(block_bytes(class)) else { return false };
        match previous {
            None => self.first_block = block,
            Some(previous) => {
                if let Some(link) = arena.bytes_mut(self.current_block, room_bytes(previous), LINK_BYTES) {
                    link.copy_from_slice(&block.to_le_bytes());
                }
            }
        }
        self.current_block = block;
        self.counters = Counters::with(0, self.counters.gathered(), Some(class));
        true
    }
}

fn widen(count: usize) -> u64 {
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// The largest value `varint` encodes: 35 bits, 5 bytes of 7 bits.
const VARINT_MAX: u64 = (1 << 35) - 1;

/// `value` (at most `VARINT_MAX`, larger values are cut to it) as a variable-length integer
/// (7 bits a byte, low bits first, the high bit of every byte but the last set), in the low
/// bytes of an integer, and how many bytes it takes. Without a loop or a branch: each 7-bit
/// group is shifted to its byte, and the high bits are set from the length.
#[inline]
fn varint(value: u64) -> (u64, usize) {
    let value = value.min(VARINT_MAX);
    let bits = 64 - value.leading_zeros();
    let length = usize::try_from(bits.div_ceil(7).max(1)).unwrap_or(5);
    let spread = (value & 0x7f)
        | (value << 1 & 0x7f00)
        | (value << 2 & 0x007f_0000)
        | (value << 3 & 0x7f00_0000)
        | (value << 4 & 0x007f_0000_0000);
    let continuations = repeated_high_bits() & low_bytes_mask(length - 1);
    (spread | continuations, length)
}

/// The high bit of every byte.
fn repeated_high_bits() -> u64 {
    u64::from_le_bytes([0x80; 8])
}

/// A mask of the low `count` bytes (0 to 8).
fn low_bytes_mask(count: usize) -> u64 {
    u64::MAX.checked_shr(u32::try_from(64 - 8 * count.min(8)).unwrap_or(64)).unwrap_or(0)
}

/// Reads a word's bytes through its chain of blocks.
#[derive(Debug)]
struct BlockReader<'a> {
    arena: &'a PostingsArena,
    /// The postings of the block being read, and how many of them were read.
    block: &'a [u8],
    read: usize,
    /// Where the block being read is, and its size class.
    position: u32,
    class: u8,
    /// The last block, and how many of its bytes hold postings.
    last_block: u32,
    last_used: usize,
}

impl<'a> BlockReader<'a> {
    fn new(arena: &'a PostingsArena, first_block: u32, last_block: u32, last_used: usize) -> BlockReader<'a> {
        let mut reader =
            BlockReader { arena, block: &[], read: 0, position: first_block, class: 0, last_block, last_used };
        reader.block = reader.postings_of_block();
        reader
    }

    /// The bytes holding postings of the block at `self.position`.
    fn postings_of_block(&self) -> &'a [u8] {
        let length = if self.position == self.last_block { self.last_used } else { room_bytes(self.class) };
        self.arena.bytes(self.position, 0, length).unwrap_or(&[])
    }

    fn next_byte(&mut self) -> Option<u8> {
        loop {
            if let Some(&byte) = self.block.get(self.read) {
                self.read += 1;
                return Some(byte);
            }
            if !self.advance() {
                return None;
            }
        }
    }

    /// Moves on to the next block of the chain; false after the last one.
    fn advance(&mut self) -> bool {
        if self.position == self.last_block {
            return false;
        }
        let link = self.arena.bytes(self.position, room_bytes(self.class), LINK_BYTES);
        let Some(link) = link.and_then(|link| <[u8; LINK_BYTES]>::try_from(link).ok()) else { return false };
        self.position = u32::from_le_bytes(link);
        self.class = (self.class + 1).min(BLOCK_SIZE_CLASSES - 1);
        self.block = self.postings_of_block();
        self.read = 0;
        true
    }
}

/// A word's encoded postings, byte by byte: first those in the arena, then those gathered.
#[derive(Debug)]
struct PostingsBytes<'a> {
    blocks: Option<BlockReader<'a>>,
    gathered: [u8; STORE_BYTES],
    gathered_bytes: usize,
    gathered_read: usize,
}

impl PostingsBytes<'_> {
    fn next_byte(&mut self) -> Option<u8> {
        if let Some(byte) = self.blocks.as_mut().and_then(BlockReader::next_byte) {
            return Some(byte);
        }
        self.blocks = None;
        if self.gathered_read == self.gathered_bytes {
            return None;
        }
        let byte = self.gathered.get(self.gathered_read).copied();
        self.gathered_read += 1;
        byte
    }

    fn next_varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = self.next_byte()?;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Some(value);
            }
            shift += 7;
        }
    }
}

/// The postings of a word, decoded one by one.
#[derive(Debug)]
pub(crate) struct PostingsIter<'a> {
    bytes: PostingsBytes<'a>,
    /// The document of the posting read last (0 before any).
    previous: u32,
    /// The unencoded last posting, until it is given.
    last: Option<(u32, u32)>,
}

impl Iterator for PostingsIter<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        let Some(value) = self.bytes.next_varint() else {
            return self.last.take();
        };
        let frequency = match value & 1 {
            1 => 1,
            _ => self.bytes.next_varint().unwrap_or(0),
        };
        let document = u64::from(self.previous) + (value >> 1);
        self.previous = u32::try_from(document).unwrap_or(u32::MAX);
        Some((self.previous, u32::try_from(frequency).unwrap_or(u32::MAX)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn occurrences_add_up_per_document() {
        let mut arena = PostingsArena::default();
        let mut postings = Postings::default();
        for document in [0, 0, 3, 200, 200, 200, 70_000, 4_000_000_000] {
            postings.add_occurrence(document, &mut arena);
        }
        assert_eq!(postings.documents(), 5);
        let decoded: Vec<(u32, u32)> = postings.iter(&arena).collect();
        assert_eq!(decoded, [(0, 2), (3, 1), (200, 3), (70_000, 1), (4_000_000_000, 1)]);
        assert!(Postings::default().iter(&arena).next().is_none());
    }

    #[test]
    fn a_posting_of_frequency_one_and_a_small_gap_takes_one_byte() {
        let mut arena = PostingsArena::default();
        let mut postings = Postings::default();
        for document in 0..1001 {
            postings.add_occurrence(document, &mut arena);
        }
        // 1000 encoded bytes, of which 992 reached the arena, 8 at a time, in blocks with room
        // for 24, 56, 120 and 248 bytes, then two with room for 504 each.
        assert_eq!(arena.last_chunk_used, 32 + 64 + 128 + 256 + 512 * 2);
        // A few postings stay out of the arena.
        let mut rare = Postings::default();
        for document in [5, 900, 70_000] {
            rare.add_occurrence(document, &mut arena);
        }
        assert_eq!(arena.last_chunk_used, 32 + 64 + 128 + 256 + 512 * 2);
        assert_eq!(rare.iter(&arena).collect::<Vec<_>>(), [(5, 1), (900, 1), (70_000, 1)]);
        assert_eq!(postings.iter(&arena).count(), 1001);
    }

    #[test]
    fn the_state_of_a_word_takes_32_bytes() {
        assert_eq!(core::mem::size_of::<Postings>(), 32);
        let counters = Counters::with(504, 8, Some(4));
        assert_eq!((counters.used(), counters.gathered(), counters.class()), (504, 8, Some(4)));
        assert_eq!(Counters::default().class(), None);
    }

    #[test]
    fn variable_length_integers_take_seven_bits_a_byte() {
        assert_eq!(varint(0), (0, 1));
        assert_eq!(varint(0x7f), (0x7f, 1));
        assert_eq!(varint(0x80), (0x0180, 2));
        assert_eq!(varint(0x3fff), (0x7fff, 2));
        assert_eq!(varint(0x4000), (0x01_8080, 3));
        assert_eq!(varint(u64::from(u32::MAX) << 1 | 1).1, 5);
        assert_eq!(varint(VARINT_MAX), (0x7f_ffff_ffff, 5));
        assert_eq!(varint(u64::MAX), varint(VARINT_MAX));
        for value in (0..40).map(|shift| (1u64 << shift) - 1).chain((0..40).map(|shift| 1u64 << shift)) {
            let value = value.min(VARINT_MAX);
            let (encoded, length) = varint(value);
            let bytes = encoded.to_le_bytes();
            let mut decoded = 0u64;
            for (index, byte) in bytes.iter().take(length).enumerate() {
                decoded |= u64::from(byte & 0x7f) << (7 * index);
                assert_eq!(byte & 0x80 != 0, index + 1 < length);
            }
            assert_eq!(decoded, value);
            assert!(bytes.iter().skip(length).all(|&byte| byte == 0));
        }
    }

    proptest! {
        #[test]
        fn interleaved_postings_decode_to_what_was_added(
            additions in proptest::collection::vec((0usize..3, 0u32..100_000, 1u32..1000), 0..400)
        ) {
            let mut arena = PostingsArena::default();
            let mut words = [Postings::default(), Postings::default(), Postings::default()];
            let mut expected = [Vec::new(), Vec::new(), Vec::new()];
            let mut next_document = [0u32; 3];
            for (word, gap, frequency) in additions {
            let frequency = if frequency > 900 { frequency * 1000 } else { frequency };
                let document = next_document[word] + gap;
                next_document[word] = document + 1;
                words[word].add(document, frequency, &mut arena);
                expected[word].push((document, frequency.min(u32::from(u16::MAX))));
            }
            for (postings, expected) in words.iter().zip(&expected) {
                prop_assert_eq!(&postings.iter(&arena).collect::<Vec<_>>(), expected);
            }
        }
    }
}
