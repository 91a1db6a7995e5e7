//! The postings of a word in a later index (its documents numbered from 0 there) put after its
//! postings here, the later documents renumbered to follow those of this index.
//!
//! Renumbering shifts every later document by the same amount, so the gaps between them stay as
//! they are: only the first later posting, whose gap counts from 0, is decoded and encoded again,
//! and the bytes of all the others are copied unchanged, a block at a time.

use super::{room_bytes, BlockReader, Counters, Postings, PostingsArena, PostingsBytes, STORE_BYTES};

impl Postings {
    /// Puts the postings of `later` (whose bytes are in `later_arena`) after these, each of its
    /// documents shifted up by `shift`. Every shifted document must come after every document
    /// here. Postings whose shifted document would not fit 32 bits are left out.
    pub(crate) fn extend_from(
        &mut self,
        arena: &mut PostingsArena,
        later: &Postings,
        later_arena: &PostingsArena,
        shift: u32,
    ) {
        let shifted = (later.last_document.checked_add(shift), later.encoded_last_document.checked_add(shift));
        let (Some(last_document), Some(encoded_last_document)) = shifted else { return };
        match later.documents {
            0 => {}
            1 => self.add(last_document, u32::from(later.last_frequency), arena),
            _ => {
                let mut postings = later.iter(later_arena);
                let first =
                    postings.next().and_then(|(document, frequency)| Some((document.checked_add(shift)?, frequency)));
                let Some((first_document, first_frequency)) = first else { return };
                self.add(first_document, first_frequency, arena);
                self.encode_last(arena);
                postings.bytes.give_rest(|bytes| self.extend_encoded(bytes, arena));
                self.last_document = last_document;
                self.last_frequency = later.last_frequency;
                self.encoded_last_document = encoded_last_document;
                self.documents = self.documents.saturating_add(later.documents - 1);
            }
        }
    }

    /// Puts `bytes`, postings already encoded, after the postings encoded so far (the last
    /// posting must be encoded already). A few bytes are gathered as `encode_last` gathers them;
    /// more are copied into the arena, each block filled to its room.
    fn extend_encoded(&mut self, mut bytes: &[u8], arena: &mut PostingsArena) {
        let gathered = self.counters.gathered();
        if gathered + bytes.len() <= STORE_BYTES {
            let mut word = self.gathered.to_le_bytes();
            if let Some(room) = word.get_mut(gathered..gathered + bytes.len()) {
                room.copy_from_slice(bytes);
            }
            self.gathered = u64::from_le_bytes(word);
            self.counters = Counters::with(self.counters.used(), gathered + bytes.len(), self.counters.class());
            return;
        }
        // The gathered bytes come before these: they go to the arena first.
        self.append(self.gathered, gathered, arena);
        self.gathered = 0;
        self.counters = Counters::with(self.counters.used(), 0, self.counters.class());
        while !bytes.is_empty() {
            let used = self.counters.used();
            let room = self.counters.class().map_or(0, room_bytes) - used;
            if room == 0 {
                if !self.start_block(arena) {
                    return; // the arena is full: the postings stop growing, as `append` lets them
                }
                continue;
            }
            let Some((now, rest)) = bytes.split_at_checked(room.min(bytes.len())) else { return };
            if let Some(target) = arena.bytes_mut(self.current_block, used, now.len()) {
                target.copy_from_slice(now);
            }
            self.counters = Counters::with(used + now.len(), 0, self.counters.class());
            bytes = rest;
        }
    }
}

impl<'a> PostingsBytes<'a> {
    /// Gives the bytes not read yet to `give`, in order, as few slices as the blocks allow.
    fn give_rest(mut self, mut give: impl FnMut(&[u8])) {
        if let Some(blocks) = self.blocks.as_mut() {
            while let Some(bytes) = blocks.next_slice() {
                give(bytes);
            }
        }
        let gathered = self.gathered.get(self.gathered_read..self.gathered_bytes).unwrap_or(&[]);
        if !gathered.is_empty() {
            give(gathered);
        }
    }
}

impl<'a> BlockReader<'a> {
    /// The bytes of the block being read that were not read yet, or those of the next block
    /// once it is all read; `None` after the last block.
    fn next_slice(&mut self) -> Option<&'a [u8]> {
        loop {
            let block: &'a [u8] = self.block;
            let rest = block.get(self.read..).unwrap_or(&[]);
            if !rest.is_empty() {
                self.read = block.len();
                return Some(rest);
            }
            if !self.advance() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// Postings of one word with the documents and frequencies given, in `arena`, each other
    /// posting interleaved with one of a second word, so that blocks of both alternate.
    fn postings_in(arena: &mut PostingsArena, postings: &[(u32, u32)]) -> Postings {
        let mut word = Postings::default();
        let mut other = Postings::default();
        for &(document, frequency) in postings {
            word.add(document, frequency, arena);
            other.add(document, 1, arena);
        }
        word
    }

    /// `count` postings from document `start`, with the gaps and frequencies of `shape`.
    fn postings_from(start: u32, shape: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut document = start;
        shape
            .iter()
            .map(|&(gap, frequency)| {
                let posting = (document, frequency);
                document += gap + 1;
                posting
            })
            .collect()
    }

    fn shape() -> impl Strategy<Value = Vec<(u32, u32)>> {
        proptest::collection::vec(
            (prop_oneof![3 => 0u32..4, 1 => 0u32..100_000], prop_oneof![3 => Just(1u32), 1 => 1u32..60_000]),
            0..300,
        )
    }

    #[test]
    fn a_word_of_one_posting_is_added_after_the_others() {
        let mut arena = PostingsArena::default();
        let mut earlier = postings_in(&mut arena, &[(0, 1), (4, 2)]);
        let mut later_arena = PostingsArena::default();
        let later = postings_in(&mut later_arena, &[(3, 7)]);
        earlier.extend_from(&mut arena, &later, &later_arena, 10);
        assert_eq!(earlier.iter(&arena).collect::<Vec<_>>(), [(0, 1), (4, 2), (13, 7)]);
        assert_eq!(earlier.documents(), 3);
        earlier.extend_from(&mut arena, &Postings::default(), &later_arena, 20);
        assert_eq!(earlier.documents(), 3);
    }

    #[test]
    fn a_shift_past_32_bits_adds_nothing() {
        let mut arena = PostingsArena::default();
        let mut earlier = postings_in(&mut arena, &[(0, 1)]);
        let mut later_arena = PostingsArena::default();
        let later = postings_in(&mut later_arena, &[(3, 1), (9, 1)]);
        earlier.extend_from(&mut arena, &later, &later_arena, u32::MAX - 5);
        assert_eq!(earlier.iter(&arena).collect::<Vec<_>>(), [(0, 1)]);
    }

    proptest! {
        #[test]
        fn appended_postings_decode_as_one_list(
            earlier_shape in shape(),
            later_shape in shape(),
            more_shape in shape(),
            spacing in 1u32..1000,
        ) {
            let mut arena = PostingsArena::default();
            let earlier_list = postings_from(0, &earlier_shape);
            let mut word = postings_in(&mut arena, &earlier_list);
            let mut expected = earlier_list.clone();
            let mut next = earlier_list.last().map_or(0, |&(document, _)| document + spacing);
            for later_shape in [&later_shape, &more_shape] {
                let mut later_arena = PostingsArena::default();
                let later_list = postings_from(0, later_shape);
                let later = postings_in(&mut later_arena, &later_list);
                word.extend_from(&mut arena, &later, &later_arena, next);
                expected.extend(later_list.iter().map(|&(document, frequency)| (document + next, frequency)));
                next = expected.last().map_or(0, |&(document, _)| document + spacing);
            }
            prop_assert_eq!(word.documents() as usize, expected.len());
            prop_assert_eq!(word.iter(&arena).collect::<Vec<_>>(), expected.clone());
            // Adding more after an append goes on where it ended.
            word.add_occurrence(next, &mut arena);
            word.add_occurrence(next, &mut arena);
            expected.push((next, 2));
            prop_assert_eq!(word.iter(&arena).collect::<Vec<_>>(), expected);
        }
    }
}
