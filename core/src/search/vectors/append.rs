//! The vectors of a later index put into this one, each replacing the vector its id had here:
//! how the vectors found in each part of a log apart are joined in log order.

use super::VectorIndex;

impl VectorIndex {
    /// Sets each vector of `later` here, in its order, as the log sets them: the vector its id
    /// had here is dropped first, and a vector of another dimension than the ones still held is
    /// left out (as `set` leaves it out).
    pub fn append(&mut self, later: VectorIndex) {
        if self.is_empty() {
            *self = later;
            return;
        }
        if later.is_empty() {
            return;
        }
        for (row, &id) in later.rows.chunks_exact(later.dimension).zip(&later.ids) {
            self.remove(id);
            self.push_unit(id, row);
        }
    }

    /// Adds `unit`, a unit vector already, for `id`, which has no vector; left out if it has
    /// another dimension than the vectors held.
    fn push_unit(&mut self, id: u64, unit: &[f32]) {
        if self.ids.is_empty() {
            self.dimension = unit.len();
        } else if unit.len() != self.dimension {
            return;
        }
        self.row_of.insert(id, self.ids.len());
        self.ids.push(id);
        self.rows.extend_from_slice(unit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// What every index keeps true of its rows.
    fn check_invariants(index: &VectorIndex) {
        assert_eq!(index.rows.len(), index.ids.len() * index.dimension);
        assert_eq!(index.row_of.len(), index.ids.len());
        for (&id, &row) in &index.row_of {
            assert_eq!(index.ids[row], id);
        }
    }

    fn ids(index: &VectorIndex, query: &[f32]) -> Vec<u64> {
        index.search(query, usize::MAX).unwrap().iter().map(|hit| hit.id.get()).collect()
    }

    #[test]
    fn a_later_vector_replaces_the_one_here_even_of_another_dimension() {
        let mut earlier = VectorIndex::default();
        earlier.set(1, &[1.0, 0.0, 0.0]);
        let mut later = VectorIndex::default();
        later.set(1, &[0.0, 1.0]);
        later.set(2, &[1.0, 1.0]);
        earlier.append(later);
        check_invariants(&earlier);
        assert_eq!(earlier.dimension(), Some(2));
        assert_eq!(ids(&earlier, &[0.0, 1.0]), [1, 2]);
        // One that does not fit the vectors still held is left out, as `set` leaves it out.
        let mut other = VectorIndex::default();
        other.set(3, &[1.0; 5]);
        earlier.append(other);
        assert!(!earlier.contains(3));
        earlier.append(VectorIndex::default());
        let mut empty = VectorIndex::default();
        empty.append(earlier.clone());
        assert_eq!(ids(&empty, &[1.0, 0.0]), ids(&earlier, &[1.0, 0.0]));
    }

    fn vector() -> impl Strategy<Value = Vec<f32>> {
        proptest::collection::vec(-3i8..4, 3).prop_map(|numbers| {
            let mut vector: Vec<f32> = numbers.iter().map(|&number| f32::from(number)).collect();
            if vector.iter().all(|&number| number == 0.0) {
                vector[0] = 1.0;
            }
            vector
        })
    }

    proptest! {
        #[test]
        fn appended_parts_answer_as_one_index(
            parts in proptest::collection::vec(proptest::collection::vec((1u64..12, vector()), 0..12), 1..5),
            query in vector(),
            limit in 0usize..8,
        ) {
            let mut whole = VectorIndex::default();
            let mut joined = VectorIndex::default();
            for sets in parts {
                let mut part = VectorIndex::default();
                for (id, vector) in sets {
                    // As the one-pass build of the engine sets them: the node's earlier vector
                    // goes first.
                    whole.remove(id);
                    whole.set(id, &vector);
                    part.remove(id);
                    part.set(id, &vector);
                }
                joined.append(part);
                check_invariants(&joined);
            }
            prop_assert_eq!(joined.len(), whole.len());
            prop_assert_eq!(joined.search(&query, limit), whole.search(&query, limit));
            prop_assert_eq!(joined.search(&query, usize::MAX), whole.search(&query, usize::MAX));
        }
    }
}
