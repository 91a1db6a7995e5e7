//! Vector search: exact cosine similarity against every vector held.
//!
//! The vectors are rows of one contiguous array, each stored already divided by its length
//! (its inverse norm applied once, in double precision, when it is set), so that a search is
//! one dot product per row over memory read in order, written so the compiler turns it into
//! SIMD instructions. Keeping unit vectors also keeps every number between -1 and 1: a vector
//! of tiny or huge numbers, whose norm would underflow or overflow in single precision, still
//! gets its true cosine.

mod append;

use alloc::vec::Vec;
use core::mem::size_of;

use hashbrown::HashMap;

use super::hit::Hit;
use super::top::{AllRanked, Candidates, TopRanked};
use crate::error::{Error, VectorProblem};
use crate::error_facts::Limit;
use crate::id::Id;
use crate::limits::VECTOR_DIMENSION_MAX;

/// How many running sums the dot product keeps: independent sums let the processor overlap the
/// additions, and 16 fill four SSE registers or two AVX ones.
const LANES: usize = 16;

/// The vectors attached to documents, for exact cosine search.
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    /// How many numbers each vector has (meaningless while it holds none).
    dimension: usize,
    /// The unit vectors, one row of `dimension` numbers each, back to back.
    rows: Vec<f32>,
    /// The id of each row.
    ids: Vec<u64>,
    /// The row of each id.
    row_of: HashMap<u64, usize>,
}

impl VectorIndex {
    /// The dimension of the vectors it holds; `None` when it holds none (then any dimension is
    /// accepted).
    pub fn dimension(&self) -> Option<usize> {
        (!self.ids.is_empty()).then_some(self.dimension)
    }

    /// Checks a vector to store or search with: not empty, at most
    /// `limits::VECTOR_DIMENSION_MAX` numbers, the dimension of the vectors held (if any),
    /// every number finite, not all zero.
    ///
    /// # Errors
    ///
    /// `Error::InvalidVector` says what is wrong (`VectorProblem::Empty`, `DimensionMismatch`,
    /// `NotFinite` with the first such number, `AllZero`); `Error::LimitExceeded` when it has
    /// too many numbers.
    pub fn check(&self, vector: &[f32]) -> Result<(), Error> {
        let invalid = |problem| Err(Error::InvalidVector { problem });
        if vector.is_empty() {
            return invalid(VectorProblem::Empty);
        }
        if vector.len() > VECTOR_DIMENSION_MAX {
            return Err(Error::LimitExceeded {
                what: Limit::VectorDimension,
                size: u64::try_from(vector.len()).unwrap_or(u64::MAX),
                limit: u64::try_from(VECTOR_DIMENSION_MAX).unwrap_or(u64::MAX),
            });
        }
        if let Some(expected) = self.dimension().filter(|&expected| expected != vector.len()) {
            return invalid(VectorProblem::DimensionMismatch { expected, found: vector.len() });
        }
        if let Some(position) = vector.iter().position(|number| !number.is_finite()) {
            return invalid(VectorProblem::NotFinite { position });
        }
        if vector.iter().all(|&number| number == 0.0) {
            return invalid(VectorProblem::AllZero);
        }
        Ok(())
    }

    /// Attaches `vector` to `id`, replacing the one it had. The caller checked it with
    /// `check`; a vector that fails the check is ignored rather than stored.
    pub fn set(&mut self, id: u64, vector: &[f32]) {
        if self.check(vector).is_err() {
            return;
        }
        if self.ids.is_empty() {
            self.dimension = vector.len();
        }
        let unit = unit_vector(vector);
        let existing = self.row_of.get(&id).copied();
        match existing.and_then(|row| self.row_mut(row)) {
            Some(row) => row.copy_from_slice(&unit),
            None => {
                self.row_of.insert(id, self.ids.len());
                self.ids.push(id);
                self.rows.extend_from_slice(&unit);
            }
        }
    }

    /// Drops the vector of `id`; an id without one changes nothing. The last row moves into
    /// its place; the row it leaves is zeroed before it becomes spare capacity, so a removed
    /// vector does not linger in RAM longer than needed (no guarantee: the allocator may have
    /// copied it when the array grew).
    pub fn remove(&mut self, id: u64) {
        let Some(row) = self.row_of.remove(&id) else { return };
        let last = self.ids.len() - 1;
        if row != last {
            let start = last * self.dimension;
            self.rows.copy_within(start..start + self.dimension, row * self.dimension);
            if let Some(&moved) = self.ids.get(last) {
                self.row_of.insert(moved, row);
            }
        }
        self.ids.swap_remove(row);
        if let Some(freed) = self.row_mut(last) {
            freed.fill(0.0);
        }
        self.rows.truncate(last * self.dimension);
    }

    /// Whether `id` has a vector.
    pub fn contains(&self, id: u64) -> bool {
        self.row_of.contains_key(&id)
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The ids whose vectors are closest to `query` by cosine similarity (the score), best
    /// first, ties by ascending id; at most `limit` of them. Exact: every vector is compared.
    ///
    /// # Errors
    ///
    /// As `check` for the query (so a query of another dimension is an error), except that an
    /// index holding no vector finds nothing without looking at the query.
    pub fn search(&self, query: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        self.check(query)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let top = self.rank(query, TopRanked::new(limit, self.ids.len()));
        Ok(top.into_best_first().into_iter().map(|ranked| Hit::new(Id::from(ranked.key), ranked.score)).collect())
    }

    /// The ids that `keep` accepts, ranked as by [`VectorIndex::search`]; at most `limit` of
    /// them. `keep` is asked in rank order only, until `limit` are kept.
    ///
    /// # Errors
    ///
    /// [`VectorIndex::search`]'s errors for the query, checked first; then the first error of
    /// `keep`.
    pub fn search_kept<E: From<Error>>(
        &self,
        query: &[f32],
        limit: usize,
        keep: impl FnMut(u64) -> Result<bool, E>,
    ) -> Result<Vec<Hit>, E> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        self.check(query)?;
        let all = self.rank(query, AllRanked::new(self.ids.len()));
        let kept = all.best_kept(limit, keep)?;
        Ok(kept.into_iter().map(|ranked| Hit::new(Id::from(ranked.key), ranked.score)).collect())
    }

    /// Offers every id, scored by the cosine of its vector and the checked `query`.
    fn rank<C: Candidates>(&self, query: &[f32], mut candidates: C) -> C {
        let query = unit_vector(query);
        for (row, &id) in self.rows.chunks_exact(self.dimension).zip(&self.ids) {
            candidates.offer(dot(row, &query).clamp(-1.0, 1.0), id);
        }
        candidates
    }

    /// The bytes of RAM it holds (its allocations, not counting the allocator's own overhead).
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() * size_of::<f32>() + self.ids.capacity() * size_of::<u64>() + self.row_of.allocation_size()
    }

    fn row_mut(&mut self, row: usize) -> Option<&mut [f32]> {
        let start = row.checked_mul(self.dimension)?;
        self.rows.get_mut(start..start.checked_add(self.dimension)?)
    }
}

/// `vector` divided by its length, computed in double precision.
fn unit_vector(vector: &[f32]) -> Vec<f32> {
    let squares: f64 = vector.iter().map(|&number| f64::from(number) * f64::from(number)).sum();
    let inverse_norm = 1.0 / libm::sqrt(squares);
    vector.iter().map(|&number| narrow(f64::from(number) * inverse_norm)).collect()
}

/// A number of a unit vector back to single precision: it lies in [-1, 1], so only precision
/// beyond single's is lost, as intended.
#[allow(clippy::cast_possible_truncation)]
fn narrow(number: f64) -> f32 {
    number as f32
}

/// The dot product of two vectors of the same length, with `LANES` running sums so that the
/// compiler can keep them in SIMD registers (floating-point sums are not reordered for it).
fn dot(left: &[f32], right: &[f32]) -> f32 {
    let mut sums = [0.0f32; LANES];
    let left_chunks = left.chunks_exact(LANES);
    let right_chunks = right.chunks_exact(LANES);
    let tail: f32 = left_chunks.remainder().iter().zip(right_chunks.remainder()).map(|(a, b)| a * b).sum();
    for (left_chunk, right_chunk) in left_chunks.zip(right_chunks) {
        for ((sum, a), b) in sums.iter_mut().zip(left_chunk).zip(right_chunk) {
            *sum += a * b;
        }
    }
    sums.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    fn ids(hits: &[Hit]) -> Vec<u64> {
        hits.iter().map(|hit| hit.id.get()).collect()
    }

    #[test]
    fn finds_the_closest_by_cosine() {
        let mut index = VectorIndex::default();
        index.set(1, &[1.0, 0.0]);
        index.set(2, &[0.0, 3.0]);
        index.set(3, &[2.0, 2.0]);
        index.set(4, &[-1.0, 0.0]);
        let hits = index.search(&[5.0, 0.0], 10).unwrap();
        assert_eq!(ids(&hits), [1, 3, 2, 4]);
        assert!((hits[0].score - 1.0).abs() < 1e-6);
        assert!((hits[1].score - core::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert!(hits[2].score.abs() < 1e-6);
        assert!((hits[3].score + 1.0).abs() < 1e-6);
        assert_eq!(ids(&index.search(&[1.0, 1.0], 2).unwrap()), [3, 1]);
        assert!(index.search(&[1.0, 1.0], 0).unwrap().is_empty());
    }

    #[test]
    fn a_kept_search_ranks_as_the_search_and_checks_the_query() {
        let mut index = VectorIndex::default();
        for id in 1..=20u64 {
            index.set(id, &[1.0, id as f32 / 10.0]);
        }
        let everything = index.search(&[1.0, 0.0], usize::MAX).unwrap();
        let mut asked = Vec::new();
        let kept = index
            .search_kept(&[1.0, 0.0], 2, |id| -> Result<bool, Error> {
                asked.push(id);
                Ok(id % 5 == 0)
            })
            .unwrap();
        assert_eq!(ids(&kept), [5, 10]);
        assert_eq!(kept[0], everything[4]);
        assert_eq!(asked, (1..=10).collect::<Vec<u64>>());
        assert_eq!(index.search_kept(&[1.0, 0.0], 100, |_| Ok::<_, Error>(true)).unwrap(), everything);
        let refused = index.search_kept(&[1.0, 0.0, 0.0], 2, |_| Ok::<_, Error>(true));
        assert_eq!(
            refused,
            Err(Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected: 2, found: 3 } })
        );
        assert!(VectorIndex::default().search_kept(&[0.0], 2, |_| Ok::<_, Error>(true)).unwrap().is_empty());
    }

    #[test]
    fn ties_go_to_the_lower_id() {
        let mut index = VectorIndex::default();
        index.set(9, &[1.0, 1.0]);
        index.set(4, &[2.0, 2.0]);
        index.set(6, &[0.5, 0.5]);
        assert_eq!(ids(&index.search(&[1.0, 1.0], 10).unwrap()), [4, 6, 9]);
    }

    #[test]
    fn vectors_are_checked() {
        let mut index = VectorIndex::default();
        let problem = |result: Result<(), Error>| match result {
            Err(Error::InvalidVector { problem }) => Some(problem),
            _ => None,
        };
        assert_eq!(problem(index.check(&[])), Some(VectorProblem::Empty));
        assert_eq!(problem(index.check(&[0.0, f32::NAN])), Some(VectorProblem::NotFinite { position: 1 }));
        assert_eq!(problem(index.check(&[f32::INFINITY])), Some(VectorProblem::NotFinite { position: 0 }));
        assert_eq!(problem(index.check(&[0.0, -0.0])), Some(VectorProblem::AllZero));
        assert!(matches!(
            index.check(&vec![1.0; VECTOR_DIMENSION_MAX + 1]),
            Err(Error::LimitExceeded { what: Limit::VectorDimension, .. })
        ));
        assert!(index.check(&vec![1.0; VECTOR_DIMENSION_MAX]).is_ok());
        assert_eq!(index.dimension(), None);
        assert_eq!(index.search(&[], 10), Ok(Vec::new()));
        index.set(1, &[1.0, 2.0, 3.0]);
        assert_eq!(index.dimension(), Some(3));
        assert_eq!(problem(index.check(&[1.0, 2.0])), Some(VectorProblem::DimensionMismatch { expected: 3, found: 2 }));
        assert_eq!(
            index.search(&[1.0], 10),
            Err(Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected: 3, found: 1 } })
        );
        index.set(2, &[1.0, 2.0]);
        assert!(!index.contains(2));
        index.remove(1);
        assert_eq!(index.dimension(), None);
        index.set(2, &[1.0, 2.0]);
        assert_eq!(index.dimension(), Some(2));
    }

    #[test]
    fn replacing_and_removing_keep_rows_and_ids_together() {
        let mut index = VectorIndex::default();
        index.set(1, &[1.0, 0.0]);
        index.set(2, &[0.0, 1.0]);
        index.set(3, &[1.0, 1.0]);
        index.set(1, &[0.0, -1.0]);
        assert_eq!(index.len(), 3);
        index.remove(2);
        index.remove(2);
        index.remove(77);
        assert_eq!(index.len(), 2);
        assert!(!index.contains(2) && index.contains(1) && index.contains(3));
        assert_eq!(ids(&index.search(&[0.0, 1.0], 10).unwrap()), [3, 1]);
        index.remove(3);
        index.remove(1);
        assert!(index.is_empty());
        assert!(index.search(&[1.0], 5).unwrap().is_empty());
        assert!(index.heap_bytes() > 0);
    }

    #[test]
    fn tiny_and_huge_vectors_get_their_true_cosine() {
        let mut index = VectorIndex::default();
        index.set(1, &[1e-30, 1e-30]);
        index.set(2, &[3e38, 0.0]);
        let hits = index.search(&[1e-40, 1e-40], 10).unwrap();
        assert_eq!(ids(&hits), [1, 2]);
        assert!((hits[0].score - 1.0).abs() < 1e-6);
        assert!((hits[1].score - core::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn the_dot_product_handles_every_tail_length() {
        for length in 0..50 {
            let left: Vec<f32> = (0..length).map(|i| i as f32).collect();
            let right: Vec<f32> = (0..length).map(|i| (i % 3) as f32).collect();
            let expected: f32 = left.iter().zip(&right).map(|(a, b)| a * b).sum();
            assert_eq!(dot(&left, &right), expected);
        }
    }

    #[derive(Debug, Clone)]
    enum Operation {
        Set(u64, Vec<i8>),
        Remove(u64),
    }

    fn operation() -> impl Strategy<Value = Operation> {
        prop_oneof![
            3 => (1u64..20, proptest::collection::vec(-3i8..4, 3)).prop_map(|(id, numbers)| Operation::Set(id, numbers)),
            1 => (1u64..20).prop_map(Operation::Remove),
        ]
    }

    fn cosine(left: &[f64], right: &[f64]) -> f64 {
        let dot: f64 = left.iter().zip(right).map(|(a, b)| a * b).sum();
        let norm = |vector: &[f64]| vector.iter().map(|a| a * a).sum::<f64>().sqrt();
        dot / (norm(left) * norm(right))
    }

    proptest! {
        #[test]
        fn search_equals_brute_force_cosine(
            operations in proptest::collection::vec(operation(), 0..40),
            query in proptest::collection::vec(-3i8..4, 3),
            limit in 0usize..8,
        ) {
            let mut index = VectorIndex::default();
            let mut reference: Vec<(u64, Vec<f64>)> = Vec::new();
            for operation in operations {
                match operation {
                    Operation::Set(id, numbers) => {
                        let vector: Vec<f32> = numbers.iter().map(|&n| f32::from(n)).collect();
                        let accepted = index.check(&vector).is_ok();
                        index.set(id, &vector);
                        if accepted {
                            reference.retain(|(kept, _)| *kept != id);
                            reference.push((id, numbers.iter().map(|&n| f64::from(n)).collect()));
                        }
                    }
                    Operation::Remove(id) => {
                        index.remove(id);
                        reference.retain(|(kept, _)| *kept != id);
                    }
                }
            }
            prop_assert_eq!(index.len(), reference.len());
            let query_vector: Vec<f32> = query.iter().map(|&n| f32::from(n)).collect();
            let found = index.search(&query_vector, limit);
            if reference.is_empty() {
                prop_assert_eq!(found, Ok(Vec::new()));
                return Ok(());
            }
            if query.iter().all(|&n| n == 0) {
                prop_assert!(found.is_err());
                return Ok(());
            }
            let found = found.unwrap();
            let query: Vec<f64> = query.iter().map(|&n| f64::from(n)).collect();
            let mut expected: Vec<(u64, f64)> =
                reference.iter().map(|(id, vector)| (*id, cosine(vector, &query))).collect();
            // Small integer vectors tie often; round the reference so that equal cosines tie
            // exactly, as they do (within rounding) in the index.
            for (_, score) in &mut expected {
                *score = (*score * 1e5).round() / 1e5;
            }
            expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            expected.truncate(limit);
            prop_assert_eq!(found.len(), expected.len());
            for (hit, (_, score)) in found.iter().zip(&expected) {
                prop_assert!((f64::from(hit.score) - score).abs() < 1e-4, "{:?} against {:?}", found, expected);
            }
        }
    }
}
