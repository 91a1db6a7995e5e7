//! The words of a later dictionary put into this one: each later word gets its number here (the
//! new ones in the order they first appeared there, as if they had been added here), and its
//! postings go after the ones it has here.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::Dictionary;

/// A word as the tables key it.
enum Key {
    Packed(u64),
    Pair((u64, u64)),
    Long(Box<str>),
}

impl Dictionary {
    /// Adds every word of `later` with its postings, each of its documents shifted up by
    /// `shift`, which must put them after every document here.
    pub(crate) fn append(&mut self, later: Dictionary, shift: u32) {
        let Dictionary { packed, packed_pairs, long, postings, arena, .. } = later;
        let mut keys: Vec<Option<Key>> = postings.iter().map(|_| None).collect();
        for (word, number) in packed {
            place(&mut keys, number, Key::Packed(word));
        }
        for (pair, number) in packed_pairs {
            place(&mut keys, number, Key::Pair(pair));
        }
        for (word, number) in long {
            place(&mut keys, number, Key::Long(word));
        }
        for (key, later_postings) in keys.into_iter().zip(&postings) {
            let Some(key) = key.filter(|_| later_postings.documents() > 0) else { continue };
            let number = match key {
                Key::Packed(word) => self.number_of_packed(word),
                Key::Pair(pair) => self.number_of_pair(pair),
                Key::Long(word) => self.number_of_long(word),
            };
            if let Some(target) = usize::try_from(number).ok().and_then(|number| self.postings.get_mut(number)) {
                target.extend_from(&mut self.arena, later_postings, &arena, shift);
            }
        }
    }
}

/// Puts `key` at its word's number in `keys`.
fn place(keys: &mut [Option<Key>], number: u32, key: Key) {
    if let Some(slot) = usize::try_from(number).ok().and_then(|number| keys.get_mut(number)) {
        *slot = Some(key);
    }
}

#[cfg(test)]
mod tests {
    use super::super::pack_pair;
    use super::*;
    use crate::search::ascii_words::pack_bytes;

    fn postings_of(dictionary: &Dictionary, word: &str) -> Vec<(u32, u32)> {
        dictionary.postings(word).map(|listing| listing.iter().collect()).unwrap_or_default()
    }

    const WORDS: [&str; 6] = ["a", "pune", "ninebytes", "sixteen_letters_", "seventeen_letters", "nul\0"];

    #[test]
    fn words_of_every_length_keep_their_postings_after_the_earlier_ones() {
        let mut earlier = Dictionary::default();
        for (document, word) in (0u32..).zip(WORDS.iter().take(4)) {
            earlier.add_occurrence(word, document);
        }
        let mut later = Dictionary::default();
        for (document, word) in (0u32..).zip(WORDS.iter().rev()) {
            later.add_occurrence(word, document);
            later.add_occurrence(word, document);
        }
        later.add_packed_occurrences(&[pack_bytes(b"new").unwrap()], 6);
        earlier.append(later, 10);
        assert_eq!(earlier.len(), WORDS.len() + 1);
        for (document, word) in (0u32..).zip(WORDS) {
            let mut expected = Vec::new();
            if document < 4 {
                expected.push((document, 1));
            }
            expected.push((10 + 5 - document, 2));
            assert_eq!(postings_of(&earlier, word), expected, "{word:?}");
        }
        assert_eq!(postings_of(&earlier, "new"), [(16, 1)]);
        // The new words got their numbers in the order they first appeared in the later one.
        let number = |word: &str| match (pack_bytes(word.as_bytes()), pack_pair(word)) {
            (Some(packed), _) => earlier.packed[&packed],
            (None, Some(pair)) => earlier.packed_pairs[&pair],
            (None, None) => earlier.long[word],
        };
        assert_eq!([number("nul\0"), number("seventeen_letters"), number("new")], [4, 5, 6]);
    }

    #[test]
    fn appending_to_an_empty_dictionary_keeps_every_word() {
        let mut later = Dictionary::default();
        later.add_occurrence("rain", 0);
        later.add_occurrence("umbrella_and_more_letters", 1);
        let mut empty = Dictionary::default();
        empty.append(later, 3);
        assert_eq!(postings_of(&empty, "rain"), [(3, 1)]);
        assert_eq!(postings_of(&empty, "umbrella_and_more_letters"), [(4, 1)]);
        empty.append(Dictionary::default(), 9);
        assert_eq!(empty.len(), 2);
    }
}
