//! The data of the search section: texts of made-up words drawn from a Zipf vocabulary, the
//! queries asked of them, and random vectors, all from a seed, so every engine and every run
//! gets the same.
//!
//! - The vocabulary: 50,000 distinct made-up words of lowercase ASCII letters, each two to four
//!   syllables of a consonant and a vowel (4 to 8 letters). Plain letters are one word to every
//!   tokenizer in the comparison (Unicode word boundaries, SQLite's unicode61), lower-cased
//!   already, so both engines see the same words.
//! - Word frequencies follow Zipf's law with exponent 1: the word of rank r (from 1) is drawn
//!   with a probability proportional to 1/r, as words are in natural language.
//! - The texts: 20 to 60 words each, joined by single spaces. A lot (a source) comes first and
//!   after every 100 memories; each memory is learned from the latest lot. Lots are texts too
//!   and are searched like memories.
//! - The queries: 1 to 4 distinct words, each drawn half the time by frequency (mostly common
//!   words) and half the time uniformly from the vocabulary (mostly rare ones).

use std::collections::HashSet;

use fastrand::Rng;

use crate::workload::PlannedNode;

/// Distinct words in the vocabulary.
pub const VOCABULARY_WORDS: usize = 50_000;
/// The fewest and the most words of one text.
const TEXT_WORDS_MIN: usize = 20;
const TEXT_WORDS_MAX: usize = 60;
/// A lot after this many memories: the sources the memories are learned from.
const MEMORIES_PER_LOT: u64 = 100;
/// The most words of one query.
const QUERY_WORDS_MAX: usize = 4;
/// Label of every lot of the corpus.
const LOT_LABEL: &str = "document";

const CONSONANTS: &[u8] = b"bcdfghjklmnprstvwz";
const VOWELS: &[u8] = b"aeiou";

/// Seeds of the separate random streams, mixed into the benchmark's seed: changing how many
/// queries are drawn must not change the texts.
const VOCABULARY_STREAM: u64 = 0x766f_6361_6275;
const TEXT_STREAM: u64 = 0x7465_7874_7300;
const QUERY_STREAM: u64 = 0x7175_6572_7900;
const VECTOR_STREAM: u64 = 0x7665_6374_6f72;

/// Made-up words, the most common first, with the cumulative Zipf weights to draw them.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    words: Vec<String>,
    /// `cumulative_weights[r]` is the sum of 1/(k+1) for every rank k up to r (from 0).
    cumulative_weights: Vec<f64>,
}

impl Vocabulary {
    /// `word_count` distinct words made from `seed`.
    pub fn new(word_count: usize, seed: u64) -> Vocabulary {
        let mut random = Rng::with_seed(seed ^ VOCABULARY_STREAM);
        let mut seen = HashSet::with_capacity(word_count);
        let mut words = Vec::with_capacity(word_count);
        while words.len() < word_count {
            let word = made_up_word(&mut random);
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        let mut total = 0.0;
        let cumulative_weights = (1..=word_count)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Vocabulary { words, cumulative_weights }
    }

    /// How many words it holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// The word of `rank`, from 0 (the most common).
    pub fn word(&self, rank: usize) -> &str {
        &self.words[rank]
    }

    /// A rank drawn by Zipf's law.
    pub fn zipf_rank(&self, random: &mut Rng) -> usize {
        let total = self.cumulative_weights.last().copied().unwrap_or(0.0);
        let place = random.f64() * total;
        self.cumulative_weights.partition_point(|weight| *weight <= place).min(self.words.len() - 1)
    }

    /// A rank drawn uniformly: most of the vocabulary is rare, so mostly a rare word.
    pub fn uniform_rank(&self, random: &mut Rng) -> usize {
        random.usize(..self.words.len())
    }
}

/// Two to four syllables of a consonant and a vowel.
fn made_up_word(random: &mut Rng) -> String {
    let syllables = random.usize(2..=4);
    let mut word = String::with_capacity(syllables * 2);
    for _ in 0..syllables {
        word.push(char::from(CONSONANTS[random.usize(..CONSONANTS.len())]));
        word.push(char::from(VOWELS[random.usize(..VOWELS.len())]));
    }
    word
}

/// A text of 20 to 60 words drawn by frequency.
fn text(vocabulary: &Vocabulary, random: &mut Rng) -> Vec<u8> {
    let word_count = random.usize(TEXT_WORDS_MIN..=TEXT_WORDS_MAX);
    let mut text = String::with_capacity(word_count * 8);
    for index in 0..word_count {
        if index > 0 {
            text.push(' ');
        }
        text.push_str(vocabulary.word(vocabulary.zipf_rank(random)));
    }
    text.into_bytes()
}

/// The texts to write: a seeded stream of lots and memories, handed out in batches so that a
/// million texts never sit in RAM at once. Ids are planned as both engines hand them out:
/// sequentially from 1, lots and memories alike.
#[derive(Debug)]
pub struct Corpus<'v> {
    vocabulary: &'v Vocabulary,
    random: Rng,
    memories_left: u64,
    memories_since_lot: u64,
    next_id: u64,
    latest_lot: Option<u64>,
    text_bytes: u64,
}

impl<'v> Corpus<'v> {
    /// A corpus of `memories` memories (and their lots) from `vocabulary`.
    pub fn new(vocabulary: &'v Vocabulary, memories: u64, seed: u64) -> Corpus<'v> {
        Corpus {
            vocabulary,
            random: Rng::with_seed(seed ^ TEXT_STREAM),
            memories_left: memories,
            memories_since_lot: 0,
            next_id: 1,
            latest_lot: None,
            text_bytes: 0,
        }
    }

    /// The next nodes, at most `count_max`; empty once every memory is out.
    pub fn next_batch(&mut self, count_max: usize) -> Vec<PlannedNode> {
        let mut batch = Vec::with_capacity(count_max);
        while batch.len() < count_max && self.memories_left > 0 {
            let node = self.next_node();
            if node.is_memory() {
                self.memories_left -= 1;
            }
            batch.push(node);
        }
        batch
    }

    /// One more memory (or the lot due before it), after the corpus: for the write scenarios.
    pub fn next_node(&mut self) -> PlannedNode {
        let id = self.next_id;
        self.next_id += 1;
        let content = text(self.vocabulary, &mut self.random);
        self.text_bytes += content.len() as u64;
        match self.latest_lot {
            Some(lot) if self.memories_since_lot < MEMORIES_PER_LOT => {
                self.memories_since_lot += 1;
                PlannedNode::Memory { content, legs: vec![vec![lot]] }
            }
            _ => {
                self.latest_lot = Some(id);
                self.memories_since_lot = 0;
                PlannedNode::Lot { label: LOT_LABEL, content }
            }
        }
    }

    /// The id the next node will get.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Bytes of every text handed out so far: what the index covers.
    pub fn text_bytes(&self) -> u64 {
        self.text_bytes
    }
}

/// Lots the corpus writes along with `memories` memories.
pub fn lots_for(memories: u64) -> u64 {
    memories.div_ceil(MEMORIES_PER_LOT)
}

/// One query: distinct words, in the order drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    words: Vec<String>,
}

impl SearchQuery {
    /// A query of these words.
    pub fn new(words: Vec<String>) -> SearchQuery {
        SearchQuery { words }
    }

    /// The query as cheesedb takes it: the words separated by spaces (a hit needs any of them).
    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    /// The same query for SQLite FTS5: each word quoted (so that no word can be read as an
    /// operator), joined by OR, since FTS5 reads words side by side as AND.
    #[cfg(any(test, feature = "sqlite"))]
    pub fn fts5_match(&self) -> String {
        self.words.iter().map(|word| format!("\"{word}\"")).collect::<Vec<_>>().join(" OR ")
    }

    /// Its words.
    #[cfg(test)]
    pub fn words(&self) -> &[String] {
        &self.words
    }
}

/// `count` queries from `vocabulary`, the same for the same seed.
pub fn queries(vocabulary: &Vocabulary, count: usize, seed: u64) -> Vec<SearchQuery> {
    let mut random = Rng::with_seed(seed ^ QUERY_STREAM);
    (0..count)
        .map(|_| {
            let word_count = random.usize(1..=QUERY_WORDS_MAX);
            let mut words: Vec<String> = Vec::with_capacity(word_count);
            while words.len() < word_count {
                let rank = if random.bool() {
                    vocabulary.zipf_rank(&mut random)
                } else {
                    vocabulary.uniform_rank(&mut random)
                };
                let word = vocabulary.word(rank);
                if !words.iter().any(|taken| taken == word) {
                    words.push(word.to_owned());
                }
            }
            SearchQuery::new(words)
        })
        .collect()
}

/// Random vectors of one dimension, each number uniform in [-1, 1): a seeded stream.
#[derive(Debug)]
pub struct Vectors {
    random: Rng,
    dimension: usize,
}

impl Vectors {
    /// Vectors of `dimension` numbers from `seed`.
    pub fn new(dimension: usize, seed: u64) -> Vectors {
        Vectors { random: Rng::with_seed(seed ^ VECTOR_STREAM), dimension }
    }

    /// The next vector. None is all zeros (the chance is nil), so every one has a cosine.
    pub fn next_vector(&mut self) -> Vec<f32> {
        (0..self.dimension).map(|_| self.random.f32() * 2.0 - 1.0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_nodes(corpus: &mut Corpus<'_>) -> Vec<PlannedNode> {
        let mut nodes = Vec::new();
        loop {
            let batch = corpus.next_batch(97);
            if batch.is_empty() {
                return nodes;
            }
            nodes.extend(batch);
        }
    }

    fn content(node: &PlannedNode) -> &[u8] {
        match node {
            PlannedNode::Lot { content, .. } | PlannedNode::Memory { content, .. } => content,
        }
    }

    #[test]
    fn the_vocabulary_is_distinct_lowercase_words() {
        let vocabulary = Vocabulary::new(VOCABULARY_WORDS, 1);
        assert_eq!(vocabulary.len(), VOCABULARY_WORDS);
        let distinct: HashSet<&str> = (0..vocabulary.len()).map(|rank| vocabulary.word(rank)).collect();
        assert_eq!(distinct.len(), VOCABULARY_WORDS);
        for rank in 0..vocabulary.len() {
            let word = vocabulary.word(rank);
            assert!((4..=8).contains(&word.len()), "{word}");
            assert!(word.bytes().all(|letter| letter.is_ascii_lowercase()), "{word}");
        }
    }

    #[test]
    fn ranks_follow_zipf() {
        let vocabulary = Vocabulary::new(VOCABULARY_WORDS, 2);
        let mut random = Rng::with_seed(3);
        let draws = 200_000;
        let mut counts = vec![0u32; vocabulary.len()];
        for _ in 0..draws {
            counts[vocabulary.zipf_rank(&mut random)] += 1;
        }
        // Rank 1 has probability 1/H(50,000), about 8.8 %; rank 2 half of that, rank 10 a tenth.
        let harmonic: f64 = (1..=VOCABULARY_WORDS).map(|rank| 1.0 / rank as f64).sum();
        for (rank, expected) in [(0, 1.0), (1, 0.5), (9, 0.1)] {
            let share = f64::from(counts[rank]) / f64::from(draws);
            let wanted = expected / harmonic;
            assert!((share - wanted).abs() < wanted * 0.1, "rank {rank}: {share} against {wanted}");
        }
        assert!(counts[vocabulary.len() - 1] < 10);
    }

    #[test]
    fn the_same_seed_gives_the_same_corpus() {
        let vocabulary = Vocabulary::new(2_000, 4);
        assert_eq!(Vocabulary::new(2_000, 4).words, vocabulary.words);
        let first = all_nodes(&mut Corpus::new(&vocabulary, 500, 5));
        assert_eq!(first, all_nodes(&mut Corpus::new(&vocabulary, 500, 5)));
        assert_ne!(first, all_nodes(&mut Corpus::new(&vocabulary, 500, 6)));
        assert_eq!(queries(&vocabulary, 50, 7), queries(&vocabulary, 50, 7));
        assert_eq!(Vectors::new(8, 9).next_vector(), Vectors::new(8, 9).next_vector());
    }

    #[test]
    fn the_corpus_has_the_memories_asked_and_a_lot_before_every_hundred() {
        let vocabulary = Vocabulary::new(VOCABULARY_WORDS, 1);
        let mut corpus = Corpus::new(&vocabulary, 1_050, 1);
        let nodes = all_nodes(&mut corpus);
        let memories = nodes.iter().filter(|node| node.is_memory()).count();
        assert_eq!(memories, 1_050);
        assert_eq!(nodes.len() as u64, 1_050 + lots_for(1_050));
        assert_eq!(corpus.next_id(), nodes.len() as u64 + 1);
        let mut latest_lot = 0;
        let mut text_bytes = 0;
        for (index, node) in nodes.iter().enumerate() {
            let id = index as u64 + 1;
            match node {
                PlannedNode::Lot { .. } => latest_lot = id,
                PlannedNode::Memory { legs, .. } => assert_eq!(legs, &vec![vec![latest_lot]]),
            }
            let text = std::str::from_utf8(content(node)).unwrap();
            let words: Vec<&str> = text.split(' ').collect();
            assert!((TEXT_WORDS_MIN..=TEXT_WORDS_MAX).contains(&words.len()), "{text}");
            assert!(words.iter().all(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase())));
            text_bytes += text.len() as u64;
        }
        assert_eq!(corpus.text_bytes(), text_bytes);
    }

    #[test]
    fn queries_mix_common_and_rare_words() {
        let vocabulary = Vocabulary::new(VOCABULARY_WORDS, 1);
        let queries = queries(&vocabulary, 1_000, 1);
        let rank_of = |word: &str| (0..vocabulary.len()).find(|rank| vocabulary.word(*rank) == word).unwrap();
        let mut common = 0;
        let mut rare = 0;
        for query in &queries {
            assert!((1..=QUERY_WORDS_MAX).contains(&query.words().len()));
            let mut distinct = query.words().to_vec();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), query.words().len());
            for word in query.words() {
                match rank_of(word) {
                    rank if rank < 100 => common += 1,
                    rank if rank >= 10_000 => rare += 1,
                    _ => {}
                }
            }
        }
        assert!(common > 500 && rare > 500, "{common} common, {rare} rare");
    }

    #[test]
    fn queries_read_as_or_in_both_engines() {
        let query = SearchQuery::new(vec!["kala".into(), "bose".into()]);
        assert_eq!(query.text(), "kala bose");
        assert_eq!(query.fts5_match(), "\"kala\" OR \"bose\"");
    }

    #[test]
    fn vectors_have_the_dimension_and_stay_in_range() {
        let mut vectors = Vectors::new(384, 1);
        let vector = vectors.next_vector();
        assert_eq!(vector.len(), 384);
        assert!(vector.iter().all(|number| (-1.0..1.0).contains(number)));
        assert_ne!(vector, vectors.next_vector());
    }
}
