//! The postings of one word: the documents that hold it and how often, compressed.
//!
//! Each posting is one variable-length integer (7 bits a byte, low bits first) holding the gap
//! from the previous document number shifted left once, its low bit set when the word occurs
//! once there; otherwise a second integer holds the frequency. Most words occur once in a
//! memory, and gaps of common words are small, so most postings take one or two bytes. The
//! last posting stays unencoded while its document is being added, so that each occurrence
//! only raises its frequency.

use alloc::vec::Vec;

use crate::convert::low_u8;

/// The postings of one word, in ascending document order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Postings {
    /// Every posting but the last, encoded.
    encoded: Vec<u8>,
    /// The document of the last encoded posting (0 before any).
    encoded_last_document: u32,
    /// The last posting, not yet encoded: its document and frequency (valid when `documents`
    /// is above zero).
    last_document: u32,
    last_frequency: u32,
    /// How many postings there are, the last one included.
    documents: u32,
}

impl Postings {
    /// Counts one more occurrence in `document`, which is the last document given or a later
    /// one.
    pub(crate) fn add_occurrence(&mut self, document: u32) {
        if self.documents > 0 && self.last_document == document {
            self.last_frequency = self.last_frequency.saturating_add(1);
        } else {
            self.add(document, 1);
        }
    }

    /// Adds a posting for `document`, which is after every document given before.
    pub(crate) fn add(&mut self, document: u32, frequency: u32) {
        if self.documents > 0 {
            self.encode_last();
        }
        self.last_document = document;
        self.last_frequency = frequency;
        self.documents = self.documents.saturating_add(1);
    }

    /// How many documents hold the word (removed ones included).
    pub(crate) fn documents(&self) -> u32 {
        self.documents
    }

    /// Each posting: its document and frequency, in ascending document order.
    pub(crate) fn iter(&self) -> PostingsIter<'_> {
        PostingsIter {
            encoded: &self.encoded,
            previous: 0,
            last: (self.documents > 0).then_some((self.last_document, self.last_frequency)),
        }
    }

    /// Gives back the spare capacity of the encoded bytes.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.encoded.shrink_to_fit();
    }

    /// The bytes the postings hold on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.encoded.capacity()
    }

    fn encode_last(&mut self) {
        let gap = u64::from(self.last_document - self.encoded_last_document);
        if self.last_frequency == 1 {
            push_varint(&mut self.encoded, gap << 1 | 1);
        } else {
            push_varint(&mut self.encoded, gap << 1);
            push_varint(&mut self.encoded, u64::from(self.last_frequency));
        }
        self.encoded_last_document = self.last_document;
    }
}

/// The postings of a word, decoded one by one.
#[derive(Debug)]
pub(crate) struct PostingsIter<'a> {
    /// The encoded postings not read yet.
    encoded: &'a [u8],
    /// The document of the posting read last (0 before any).
    previous: u32,
    /// The unencoded last posting, until it is given.
    last: Option<(u32, u32)>,
}

impl Iterator for PostingsIter<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        let Some(value) = read_varint(&mut self.encoded) else {
            return self.last.take();
        };
        let frequency = if value & 1 == 1 { 1 } else { read_varint(&mut self.encoded).unwrap_or(0) };
        let document = u64::from(self.previous) + (value >> 1);
        self.previous = u32::try_from(document).unwrap_or(u32::MAX);
        Some((self.previous, u32::try_from(frequency).unwrap_or(u32::MAX)))
    }
}

fn push_varint(bytes: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        bytes.push(low_u8(value) | 0x80);
        value >>= 7;
    }
    bytes.push(low_u8(value));
}

/// Reads one variable-length integer from the front of `bytes` and moves past it; `None` at the
/// end (or on a truncated integer, which this module never writes).
fn read_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0u32;
    loop {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte & 0x80 == 0 {
            return Some(value);
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn occurrences_add_up_per_document() {
        let mut postings = Postings::default();
        for document in [0, 0, 3, 200, 200, 200, 70_000, 4_000_000_000] {
            postings.add_occurrence(document);
        }
        assert_eq!(postings.documents(), 5);
        let decoded: Vec<(u32, u32)> = postings.iter().collect();
        assert_eq!(decoded, [(0, 2), (3, 1), (200, 3), (70_000, 1), (4_000_000_000, 1)]);
        assert!(postings.heap_bytes() > 0);
        assert!(Postings::default().iter().next().is_none());
    }

    #[test]
    fn a_posting_of_frequency_one_and_a_small_gap_takes_one_byte() {
        let mut postings = Postings::default();
        for document in 0..101 {
            postings.add_occurrence(document);
        }
        assert_eq!(postings.encoded.len(), 100);
    }

    proptest! {
        #[test]
        fn postings_decode_to_what_was_added(
            mut gaps_and_frequencies in proptest::collection::vec((0u32..100_000, 1u32..1000), 0..50)
        ) {
            let mut postings = Postings::default();
            let mut expected = Vec::new();
            let mut document = 0u32;
            for (index, (gap, frequency)) in gaps_and_frequencies.iter_mut().enumerate() {
                if index > 0 {
                    *gap = (*gap).max(1);
                }
                document += *gap;
                postings.add(document, *frequency);
                expected.push((document, *frequency));
            }
            prop_assert_eq!(postings.iter().collect::<Vec<_>>(), expected);
        }
    }
}
