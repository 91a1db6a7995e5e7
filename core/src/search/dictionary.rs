//! The words of a keyword index and the postings of each.
//!
//! Building an index looks a word up for every word of every document, so the lookup is what
//! the build spends most on, and its cost is the cache misses of tables larger than the
//! processor's caches. So a lookup touches as little memory as it can: a word of at most 8
//! bytes (nearly every word of languages written in Latin letters) is packed into one integer
//! and stored in the table itself with its number, 16 bytes an entry, so a lookup hashes one
//! integer, compares one integer and follows no pointer. A word of 9 to 16 bytes is packed
//! into two integers in a second table; longer words go to a third table keyed by the text.
//! Words never hold a zero byte (the word splitter never puts a control character in a word),
//! so zero bytes pad a packed word without ambiguity; a word that holds one anyway goes to the
//! table of long words.
//!
//! Numbers are given in the order words first appear, so the postings state of the commonest
//! words, which appear first, sits together in memory and stays in the cache.
//!
//! The tables are `hashbrown` maps with its default hasher, foldhash: among the hashers that
//! work without std, it is one of the fastest on integer and short keys, and it is seeded per
//! map, so text crafted to make words collide in one process does not in another.

mod append;

use alloc::boxed::Box;
use alloc::vec::Vec;

use hashbrown::HashMap;

use super::ascii_words::pack_bytes;
use super::postings::{Postings, PostingsArena, PostingsIter};

/// Each word ever added (lower-cased) and its postings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dictionary {
    /// Words of at most 8 bytes, packed, and their numbers.
    packed: HashMap<u64, u32>,
    /// Words of 9 to 16 bytes, packed.
    packed_pairs: HashMap<(u64, u64), u32>,
    /// Longer words, and words with a zero byte.
    long: HashMap<Box<str>, u32>,
    /// The postings of each word, by number.
    postings: Vec<Postings>,
    /// The encoded postings of every word.
    arena: PostingsArena,
    /// Room reused by `add_packed_occurrences`.
    numbers: Vec<u32>,
}

/// The postings of one word, ready to read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listing<'a> {
    postings: &'a Postings,
    arena: &'a PostingsArena,
}

impl<'a> Listing<'a> {
    /// How many documents hold the word (removed ones included).
    pub(crate) fn documents(&self) -> u32 {
        self.postings.documents()
    }

    /// Each posting: its document and frequency, in ascending document order.
    pub(crate) fn iter(&self) -> PostingsIter<'a> {
        self.postings.iter(self.arena)
    }
}

impl Dictionary {
    /// Counts an occurrence in `document` (the last document given, or a later one) of each
    /// word of `packed`, packed as `pack_bytes` packs it: all looked up first,
    /// then all counted, so that the cache misses of the lookups (independent of each other)
    /// overlap, and so do those of the counts.
    pub(crate) fn add_packed_occurrences(&mut self, packed: &[u64], document: u32) {
        let mut numbers = core::mem::take(&mut self.numbers);
        numbers.clear();
        numbers.extend(packed.iter().map(|&word| self.number_of_packed(word)));
        // Read the state of every word before updating any: the reads are independent, so the
        // processor runs their cache misses side by side, and the updates then find them in the
        // cache. The sum only gives the reads a use.
        let touched = numbers
            .iter()
            .filter_map(|&number| self.postings.get(usize::try_from(number).ok()?))
            .fold(0u32, |sum, postings| sum.wrapping_add(postings.documents()));
        core::hint::black_box(touched);
        for &number in &numbers {
            self.count(number, document);
        }
        self.numbers = numbers;
    }

    /// Counts an occurrence of `word` in `document` (the last document given, or a later one).
    pub(crate) fn add_occurrence(&mut self, word: &str, document: u32) {
        let number = self.number_of(word);
        self.count(number, document);
    }

    /// The number of the packed word `packed`, given now if the word is new.
    #[inline]
    fn number_of_packed(&mut self, packed: u64) -> u32 {
        if let Some(&number) = self.packed.get(&packed) {
            return number;
        }
        let number = self.new_number();
        self.packed.insert(packed, number);
        number
    }

    /// The number of `word`, given now if the word is new.
    fn number_of(&mut self, word: &str) -> u32 {
        if let Some(packed) = pack_bytes(word.as_bytes()) {
            return self.number_of_packed(packed);
        }
        match pack_pair(word) {
            Some(pair) => self.number_of_pair(pair),
            None => match self.long.get(word) {
                Some(&number) => number,
                None => self.number_of_long(Box::from(word)),
            },
        }
    }

    /// The number of the word of 9 to 16 bytes packed as `pair`, given now if the word is new.
    fn number_of_pair(&mut self, pair: (u64, u64)) -> u32 {
        if let Some(&number) = self.packed_pairs.get(&pair) {
            return number;
        }
        let number = self.new_number();
        self.packed_pairs.insert(pair, number);
        number
    }

    /// The number of the long word `word`, given now if the word is new.
    fn number_of_long(&mut self, word: Box<str>) -> u32 {
        if let Some(&number) = self.long.get(&word) {
            return number;
        }
        let number = self.new_number();
        self.long.insert(word, number);
        number
    }

    /// A number for a new word, with empty postings. (An index never holds 2^32 words: each
    /// takes at least a byte of content, and contents are bounded; past that, new words would
    /// share the last number rather than fail.)
    fn new_number(&mut self) -> u32 {
        let number = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
        if number < u32::MAX {
            self.postings.push(Postings::default());
        }
        number
    }

    fn count(&mut self, number: u32, document: u32) {
        let Ok(position) = usize::try_from(number) else { return };
        if let Some(postings) = self.postings.get_mut(position) {
            postings.add_occurrence(document, &mut self.arena);
        }
    }

    /// The postings of `word`, if it was ever added.
    pub(crate) fn postings(&self, word: &str) -> Option<Listing<'_>> {
        let number = match (pack_bytes(word.as_bytes()), pack_pair(word)) {
            (Some(packed), _) => self.packed.get(&packed),
            (None, Some(pair)) => self.packed_pairs.get(&pair),
            (None, None) => self.long.get(word),
        }?;
        let postings = self.postings.get(usize::try_from(*number).ok()?)?;
        Some(Listing { postings, arena: &self.arena })
    }

    /// Rewrites every word's postings into a new arena, each document renumbered by
    /// `renumber` or dropped where it gives `None`; drops the words left without documents.
    pub(crate) fn renumber_documents(&mut self, renumber: impl Fn(u32) -> Option<u32>) {
        let old = core::mem::take(&mut self.arena);
        let mut kept = Vec::with_capacity(self.postings.len());
        let mut new_numbers = Vec::with_capacity(self.postings.len());
        for postings in &self.postings {
            let mut rebuilt = Postings::default();
            for (document, frequency) in postings.iter(&old) {
                if let Some(document) = renumber(document) {
                    rebuilt.add(document, frequency, &mut self.arena);
                }
            }
            if rebuilt.documents() > 0 {
                new_numbers.push(u32::try_from(kept.len()).ok());
                kept.push(rebuilt);
            } else {
                new_numbers.push(None);
            }
        }
        self.postings = kept;
        let renumber_word = |number: &mut u32| match usize::try_from(*number).ok().and_then(|old| new_numbers.get(old))
        {
            Some(&Some(new)) => {
                *number = new;
                true
            }
            _ => false,
        };
        self.packed.retain(|_, number| renumber_word(number));
        self.packed_pairs.retain(|_, number| renumber_word(number));
        self.long.retain(|_, number| renumber_word(number));
        self.packed.shrink_to_fit();
        self.packed_pairs.shrink_to_fit();
        self.long.shrink_to_fit();
    }

    /// The bytes the words and their postings hold on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.packed.allocation_size()
            + self.packed_pairs.allocation_size()
            + self.long.allocation_size()
            + self.long.keys().map(|word| word.len()).sum::<usize>()
            + self.postings.capacity() * core::mem::size_of::<Postings>()
            + self.arena.heap_bytes()
    }

    /// How many words it holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.packed.len() + self.packed_pairs.len() + self.long.len()
    }
}

/// `word` packed into two integers, if it has 9 to 16 bytes and no zero byte (the first
/// integer holds 8 bytes, so the pair tells every such word apart).
fn pack_pair(word: &str) -> Option<(u64, u64)> {
    let bytes = word.as_bytes();
    if bytes.len() > 16 {
        return None;
    }
    let (first, second) = bytes.split_at_checked(8)?;
    Some((pack_bytes(first)?, pack_bytes(second)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn postings_of(dictionary: &Dictionary, word: &str) -> Vec<(u32, u32)> {
        dictionary.postings(word).map(|listing| listing.iter().collect()).unwrap_or_default()
    }

    #[test]
    fn words_of_every_length_are_kept_apart_and_found_again() {
        let mut dictionary = Dictionary::default();
        let words =
            ["", "a", "pune", "exactly8", "ninebytes", "é", "ééééé", "sixteen_letters_", "seventeen_letters", "nul\0"];
        for (document, word) in (0u32..).zip(words) {
            dictionary.add_occurrence(word, document);
        }
        dictionary.add_packed_occurrences(&[pack_bytes(b"pune").unwrap()], 2);
        assert_eq!(dictionary.len(), words.len());
        for (document, word) in (0u32..).zip(words) {
            let frequency = if word == "pune" { 2 } else { 1 };
            assert_eq!(postings_of(&dictionary, word), [(document, frequency)]);
        }
        assert_eq!(dictionary.packed.len(), 5);
        assert_eq!(dictionary.packed_pairs.len(), 3);
        assert_eq!(dictionary.long.len(), 2);
        assert!(dictionary.postings("pun").is_none());
        assert!(dictionary.postings("exactly9").is_none());
        assert!(dictionary.postings("seventeen_letterz").is_none());
        assert!(dictionary.heap_bytes() > 0);
    }

    #[test]
    fn renumbering_drops_emptied_words_and_keeps_the_rest() {
        let mut dictionary = Dictionary::default();
        let words = ["one", "two", "three", "four_and_more", "and_a_very_long_word"];
        for (document, word) in (0u32..).zip(words) {
            dictionary.add_occurrence(word, document);
            dictionary.add_occurrence("every", document);
        }
        dictionary.renumber_documents(|document| (document % 2 == 0).then_some(document / 2));
        assert_eq!(dictionary.len(), 4);
        assert!(dictionary.postings("two").is_none());
        assert!(dictionary.postings("four_and_more").is_none());
        assert_eq!(postings_of(&dictionary, "three"), [(1, 1)]);
        assert_eq!(postings_of(&dictionary, "and_a_very_long_word"), [(2, 1)]);
        assert_eq!(postings_of(&dictionary, "every"), [(0, 1), (1, 1), (2, 1)]);
    }
}
