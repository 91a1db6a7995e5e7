//! A later keyword index put after this one: its documents numbered after those here, its words
//! merged into the dictionary with their postings after the ones here, its statistics added. An
//! index built from each part of a log apart, joined so in log order, answers every search as the
//! index built from the whole log in one pass.

use alloc::vec::Vec;

use super::KeywordIndex;

impl KeywordIndex {
    /// Puts the documents of `later` after those of this index, as if each had been added here
    /// in its order (and removed here, if it was removed there). Every id of `later` should be
    /// above every id added here, as the ids of a log read in order are; documents of `later`
    /// whose ids are not are left out, as `add` would leave them out. Nothing changes if the
    /// documents of both would not fit 32-bit numbers.
    pub fn append(&mut self, mut later: KeywordIndex) {
        let Some(last) = self.last_added_id else {
            // Nothing was ever added here: the later index is what adding its documents gives.
            *self = later;
            return;
        };
        let refused = later.document_ids.partition_point(|&id| id <= last);
        if refused > 0 {
            later.drop_first_documents(refused);
        }
        let count = self.document_ids.len();
        let fits = count.checked_add(later.document_ids.len()).is_some_and(|total| u32::try_from(total).is_ok());
        let Ok(shift) = u32::try_from(count) else { return };
        if !fits {
            return;
        }
        for document in 0..later.document_ids.len() {
            push_bit(&mut self.alive, count + document, later.is_alive(document));
        }
        self.dictionary.append(later.dictionary, shift);
        self.document_ids.extend_from_slice(&later.document_ids);
        self.document_lengths.extend_from_slice(&later.document_lengths);
        self.alive_documents += later.alive_documents;
        self.alive_words += later.alive_words;
        self.removed_documents += later.removed_documents;
        self.last_added_id = self.last_added_id.max(later.last_added_id);
    }

    /// Forgets the first `count` documents, alive or removed, as if they had never been added.
    fn drop_first_documents(&mut self, count: usize) {
        let Ok(dropped) = u32::try_from(count) else { return };
        let count = count.min(self.document_ids.len());
        for document in 0..count {
            if self.is_alive(document) {
                let length = self.document_lengths.get(document).copied().unwrap_or(0);
                self.alive_documents -= 1;
                self.alive_words -= u64::from(length);
            } else {
                self.removed_documents -= 1;
            }
        }
        let kept: Vec<bool> = (count..self.document_ids.len()).map(|document| self.is_alive(document)).collect();
        self.dictionary.renumber_documents(|document| document.checked_sub(dropped));
        self.document_ids.drain(..count);
        self.document_lengths.drain(..count);
        self.alive.clear();
        for (document, alive) in kept.into_iter().enumerate() {
            push_bit(&mut self.alive, document, alive);
        }
    }
}

/// Sets bit `position` of a bitset whose bits below it are all set or cleared already (so it
/// holds `position` bits, rounded up to whole words) to `value`.
fn push_bit(bits: &mut Vec<u64>, position: usize, value: bool) {
    if position % 64 == 0 {
        bits.push(0);
    }
    if let Some(word) = bits.get_mut(position / 64).filter(|_| value) {
        *word |= 1 << (position % 64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::hit::Hit;
    use alloc::string::String;
    use proptest::prelude::*;

    const VOCABULARY: &[&str] = &[
        "pune",
        "rain",
        "Rain",
        "umbrella",
        "the",
        "a",
        "cat",
        "x.y",
        "3.14",
        "é",
        "monsoon_season",
        "a_word_of_more_than_sixteen_bytes",
    ];

    fn text(words: &[usize]) -> String {
        words.iter().map(|&word| VOCABULARY[word]).collect::<Vec<_>>().join(" ")
    }

    /// The alive documents holding `word`, by id, with the word's frequency.
    fn alive_postings(index: &KeywordIndex, word: &str) -> Vec<(u64, u32)> {
        let Some(listing) = index.dictionary.postings(word) else { return Vec::new() };
        let position = |document: u32| usize::try_from(document).unwrap();
        listing
            .iter()
            .filter(|&(document, _)| index.is_alive(position(document)))
            .map(|(document, frequency)| (index.document_ids[position(document)], frequency))
            .collect()
    }

    fn alive_ids(index: &KeywordIndex) -> Vec<u64> {
        (0..index.document_ids.len())
            .filter(|&document| index.is_alive(document))
            .map(|d| index.document_ids[d])
            .collect()
    }

    /// What every index keeps true of its documents and statistics.
    fn check_invariants(index: &KeywordIndex) {
        let count = index.document_ids.len();
        assert_eq!(index.document_lengths.len(), count);
        assert_eq!(index.alive.len(), count.div_ceil(64));
        assert!(index.document_ids.windows(2).all(|pair| pair[0] < pair[1]), "ids ascend");
        assert!(index.last_added_id >= index.document_ids.last().copied());
        let alive: Vec<usize> = (0..count).filter(|&document| index.is_alive(document)).collect();
        assert_eq!(alive.len(), index.alive_documents);
        assert_eq!(count - alive.len(), index.removed_documents);
        let words: u64 = alive.iter().map(|&document| u64::from(index.document_lengths[document])).sum();
        assert_eq!(words, index.alive_words);
        let spare_bits = index.alive.last().map_or(0, |word| if count % 64 == 0 { 0 } else { word >> (count % 64) });
        assert_eq!(spare_bits, 0, "no bit past the last document");
    }

    #[test]
    fn documents_at_or_below_the_last_id_here_are_left_out() {
        let mut earlier = KeywordIndex::default();
        earlier.add(1, b"pune rain");
        earlier.add(5, b"rain rain");
        let mut later = KeywordIndex::default();
        later.add(3, b"pune");
        later.add(5, b"umbrella");
        later.add(6, b"pune umbrella");
        later.add(7, b"cat");
        later.remove(7);
        earlier.append(later);
        check_invariants(&earlier);
        assert_eq!(alive_ids(&earlier), [1, 5, 6]);
        assert_eq!(alive_postings(&earlier, "umbrella"), [(6, 1)]);
        assert_eq!(alive_postings(&earlier, "pune"), [(1, 1), (6, 1)]);
        assert_eq!(earlier.last_added_id, Some(7));
        let mut whole = KeywordIndex::default();
        for (id, text) in [(1, "pune rain"), (5, "rain rain"), (6, "pune umbrella"), (7, "cat")] {
            whole.add(id, text.as_bytes());
        }
        whole.remove(7);
        assert_eq!(earlier.search("pune umbrella rain cat", 10), whole.search("pune umbrella rain cat", 10));
        // Appending to an index that never held a document takes the later one as it is.
        let mut empty = KeywordIndex::default();
        empty.append(earlier.clone());
        assert_eq!(alive_ids(&empty), alive_ids(&earlier));
        earlier.append(KeywordIndex::default());
        check_invariants(&earlier);
    }

    #[derive(Debug, Clone)]
    enum Operation {
        /// A document with the next id.
        Add(Vec<usize>),
        /// A document with an id at or below the last one added anywhere, `back` ids before it.
        Stale(u64, Vec<usize>),
        /// Removes one of the part's documents.
        Remove(usize),
        /// Forgets the part's removed documents.
        Forget,
    }

    fn operation() -> impl Strategy<Value = Operation> {
        let words = || proptest::collection::vec(0..VOCABULARY.len(), 0..8);
        prop_oneof![
            6 => words().prop_map(Operation::Add),
            1 => (0u64..4, words()).prop_map(|(back, words)| Operation::Stale(back, words)),
            2 => (0usize..40).prop_map(Operation::Remove),
            1 => Just(Operation::Forget),
        ]
    }

    proptest! {
        #[test]
        fn appended_parts_answer_as_one_index(
            parts in proptest::collection::vec(proptest::collection::vec(operation(), 0..25), 1..5),
            queries in proptest::collection::vec((proptest::collection::vec(0..VOCABULARY.len(), 0..4), 0usize..8), 1..6),
        ) {
            let mut whole = KeywordIndex::default();
            let mut joined = KeywordIndex::default();
            let mut next_id = 1u64;
            let mut last_added = None;
            for operations in parts {
                let mut part = KeywordIndex::default();
                let mut part_alive: Vec<u64> = Vec::new();
                for operation in operations {
                    match operation {
                        Operation::Add(words) => {
                            let text = text(&words);
                            whole.add(next_id, text.as_bytes());
                            part.add(next_id, text.as_bytes());
                            part_alive.push(next_id);
                            last_added = Some(next_id);
                            next_id += 1 + next_id % 3;
                        }
                        Operation::Stale(back, words) => {
                            // Refused by the whole index; the part takes it when it is the
                            // part's first, and the join must leave it out.
                            if let Some(last) = last_added {
                                let id = last.saturating_sub(back).max(1);
                                let text = text(&words);
                                whole.add(id, text.as_bytes());
                                part.add(id, text.as_bytes());
                            }
                        }
                        Operation::Remove(position) => {
                            if !part_alive.is_empty() {
                                let id = part_alive.remove(position % part_alive.len());
                                whole.remove(id);
                                part.remove(id);
                            }
                        }
                        Operation::Forget => part.forget_removed(),
                    }
                }
                check_invariants(&part);
                joined.append(part);
                check_invariants(&joined);
            }
            prop_assert_eq!(alive_ids(&joined), alive_ids(&whole));
            prop_assert_eq!(joined.alive_documents(), whole.alive_documents());
            prop_assert_eq!(joined.alive_words, whole.alive_words);
            for word in VOCABULARY {
                let word = word.to_lowercase();
                prop_assert_eq!(alive_postings(&joined, &word), alive_postings(&whole, &word), "{}", word);
            }
            for (words, limit) in queries {
                let query = text(&words);
                let found: Vec<Hit> = joined.search(&query, limit);
                prop_assert_eq!(&found, &whole.search(&query, limit), "{}", query);
                prop_assert_eq!(joined.search(&query, usize::MAX), whole.search(&query, usize::MAX));
            }
        }
    }

    #[test]
    fn bits_are_pushed_one_after_the_other() {
        let mut bits = Vec::new();
        let value = |position: usize| position % 3 == 0 || position == 64;
        for position in 0..130 {
            push_bit(&mut bits, position, value(position));
        }
        assert_eq!(bits.len(), 3);
        for position in 0..192 {
            let set = bits[position / 64] >> (position % 64) & 1 == 1;
            assert_eq!(set, position < 130 && value(position), "bit {position}");
        }
    }
}
