//! A simple first version, kept until the indexed one replaces it.
use super::Hit;
use crate::error::{Error, VectorProblem};
use crate::id::Id;
use alloc::vec::Vec;
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    rows: Vec<(u64, Vec<f32>)>,
}
impl VectorIndex {
    pub fn dimension(&self) -> Option<usize> {
        self.rows.first().map(|r| r.1.len())
    }
    pub fn check(&self, vector: &[f32]) -> Result<(), Error> {
        crate::limits::check("numbers in a vector", vector.len(), crate::limits::VECTOR_DIMENSION_MAX)?;
        if vector.is_empty() {
            return Err(Error::InvalidVector { problem: VectorProblem::Empty });
        }
        if let Some(position) = vector.iter().position(|x| !x.is_finite()) {
            return Err(Error::InvalidVector { problem: VectorProblem::NotFinite { position } });
        }
        if vector.iter().all(|x| *x == 0.0) {
            return Err(Error::InvalidVector { problem: VectorProblem::AllZero });
        }
        if let Some(expected) = self.dimension() {
            if expected != vector.len() {
                return Err(Error::InvalidVector {
                    problem: VectorProblem::DimensionMismatch { expected, found: vector.len() },
                });
            }
        }
        Ok(())
    }
    pub fn set(&mut self, id: u64, vector: &[f32]) {
        self.remove(id);
        self.rows.push((id, vector.to_vec()));
    }
    pub fn remove(&mut self, id: u64) {
        self.rows.retain(|r| r.0 != id);
    }
    pub fn contains(&self, id: u64) -> bool {
        self.rows.iter().any(|r| r.0 == id)
    }
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    pub fn search(&self, query: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        if self.rows.is_empty() {
            return Ok(Vec::new());
        }
        self.check(query)?;
        let norm = |v: &[f32]| {
            let s: f32 = v.iter().map(|x| x * x).sum();
            let mut r = s.max(1e-30);
            for _ in 0..40 {
                r = 0.5 * (r + s / r);
            }
            r
        };
        let mut hits: Vec<Hit> = self
            .rows
            .iter()
            .map(|r| {
                Hit::new(
                    Id::from(r.0),
                    r.1.iter().zip(query).map(|(a, b)| a * b).sum::<f32>() / (norm(&r.1) * norm(query)),
                )
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score.partial_cmp(&a.score).unwrap_or(core::cmp::Ordering::Equal).then(a.id.get().cmp(&b.id.get()))
        });
        hits.truncate(limit);
        Ok(hits)
    }
    pub fn heap_bytes(&self) -> usize {
        0
    }
}
