//! The only source of chance in a simulation: a small seedable generator, written here so that a
//! seed replays the same run on every machine and every version of every dependency.
//!
//! The generator is xoshiro256** seeded through SplitMix64. A [`Random`] can also draw its
//! choices from a byte string (for the fuzzer, which then steers the workload bit by bit) and
//! falls back to a seeded generator when the bytes run out.

/// SplitMix64: turns one `u64` into a stream of well-mixed words; used to seed xoshiro.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream starting from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next word.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut mixed = self.state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        mixed ^ (mixed >> 31)
    }
}

/// xoshiro256**: fast, small state, good statistical quality.
#[derive(Debug, Clone)]
pub struct Xoshiro256 {
    state: [u64; 4],
}

impl Xoshiro256 {
    /// A generator seeded from `seed`.
    pub fn new(seed: u64) -> Xoshiro256 {
        let mut seeder = SplitMix64::new(seed);
        Xoshiro256 { state: [seeder.next_u64(), seeder.next_u64(), seeder.next_u64(), seeder.next_u64()] }
    }

    /// The next word.
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = self.state;
        let result = s1.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s1 << 17;
        let mut next = [s0, s1, s2 ^ s0, s3 ^ s1];
        next[1] ^= next[2];
        next[0] ^= next[3];
        next[2] ^= t;
        next[3] = next[3].rotate_left(45);
        self.state = next;
        result
    }
}

/// Where a [`Random`] takes its choices from.
#[derive(Debug, Clone)]
enum Source {
    Seeded(Xoshiro256),
    Bytes { bytes: Vec<u8>, position: usize, fallback: Xoshiro256 },
}

/// Every choice a simulation makes goes through one of these.
#[derive(Debug, Clone)]
pub struct Random {
    source: Source,
}

impl Random {
    /// Choices from a generator seeded with `seed`.
    pub fn seeded(seed: u64) -> Random {
        Random { source: Source::Seeded(Xoshiro256::new(seed)) }
    }

    /// Choices read from `bytes`, eight at a time; once they run out, from a generator seeded
    /// with their length.
    pub fn from_bytes(bytes: &[u8]) -> Random {
        let fallback = Xoshiro256::new(bytes.len() as u64);
        Random { source: Source::Bytes { bytes: bytes.to_vec(), position: 0, fallback } }
    }

    /// An independent stream for another part of the simulation, so that one part drawing more
    /// or fewer numbers does not shift every choice of the other.
    pub fn fork(&mut self) -> Random {
        Random::seeded(self.next_u64())
    }

    /// The next word.
    pub fn next_u64(&mut self) -> u64 {
        match &mut self.source {
            Source::Seeded(generator) => generator.next_u64(),
            Source::Bytes { bytes, position, fallback } => {
                let Some(chunk) = bytes.get(*position..).filter(|rest| !rest.is_empty()) else {
                    return fallback.next_u64();
                };
                let mut word = [0u8; 8];
                let taken = chunk.len().min(8);
                word.iter_mut().zip(chunk.iter().take(taken)).for_each(|(to, from)| *to = *from);
                *position += taken;
                u64::from_le_bytes(word)
            }
        }
    }

    /// A number in `0..bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        // Multiply-shift: unbiased enough for a test workload and never loops.
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high.saturating_sub(low).saturating_add(1))
    }

    /// An index into a collection of `length` items (0 when it is empty).
    pub fn index(&mut self, length: usize) -> usize {
        self.below(length as u64) as usize
    }

    /// True with probability `chance` (0.0 never, 1.0 always).
    pub fn chance(&mut self, chance: f64) -> bool {
        if chance <= 0.0 {
            return false;
        }
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < chance
    }

    /// One of `items`, or `None` when there are none.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.index(items.len()))
    }

    /// An index chosen with probability proportional to its weight (0 if all weights are 0).
    pub fn weighted(&mut self, weights: &[u64]) -> usize {
        let total: u64 = weights.iter().sum();
        let mut point = self.below(total);
        for (index, weight) in weights.iter().enumerate() {
            if point < *weight {
                return index;
            }
            point -= weight;
        }
        0
    }

    /// Fills `out` with random bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.iter_mut().zip(word).for_each(|(to, from)| *to = from);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_the_same_stream() {
        let mut first = Random::seeded(7);
        let mut second = Random::seeded(7);
        for _ in 0..100 {
            assert_eq!(first.next_u64(), second.next_u64());
        }
        assert_ne!(Random::seeded(7).next_u64(), Random::seeded(8).next_u64());
    }

    #[test]
    fn splitmix_matches_its_reference_output() {
        // The first outputs of SplitMix64 seeded with 0, as published with the algorithm.
        let mut generator = SplitMix64::new(0);
        assert_eq!(generator.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(generator.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn bounded_draws_stay_in_range() {
        let mut random = Random::seeded(1);
        for bound in 1..50 {
            assert!(random.below(bound) < bound);
            let value = random.between(3, 3 + bound);
            assert!((3..=3 + bound).contains(&value));
        }
        assert_eq!(random.below(0), 0);
        assert_eq!(random.weighted(&[0, 0, 5]), 2);
    }

    #[test]
    fn byte_driven_choices_follow_the_bytes_then_fall_back() {
        let mut random = Random::from_bytes(&[1, 0, 0, 0, 0, 0, 0, 0, 2]);
        assert_eq!(random.next_u64(), 1);
        assert_eq!(random.next_u64(), 2);
        let mut again = Random::from_bytes(&[1, 0, 0, 0, 0, 0, 0, 0, 2]);
        again.next_u64();
        again.next_u64();
        assert_eq!(random.next_u64(), again.next_u64());
    }
}
