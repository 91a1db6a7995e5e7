//! cheesedb under test in the search section: the same store and agent as in the other
//! scenarios, searched by keyword, by vector and by both.

use std::path::Path;

use cheesedb::{Hit, Io};

use crate::cheesedb_side::{legs_of, CheesedbSide, OpenMeasurement};
use crate::engine::{Engine, OpenFigures};
use crate::failure::Failure;
use crate::search_corpus::SearchQuery;
use crate::search_engine::SearchEngine;
use crate::workload::PlannedNode;

/// The cheesedb side of the search section.
pub struct CheesedbSearchSide {
    side: CheesedbSide,
}

impl CheesedbSearchSide {
    /// Creates a store in `folder` (which must not hold one yet) with one agent.
    pub fn create(folder: &Path, io: Io, open_measurement: OpenMeasurement) -> Result<CheesedbSearchSide, Failure> {
        Ok(CheesedbSearchSide { side: CheesedbSide::create(folder, io, open_measurement)? })
    }

    /// Writes one node, committed durably on its own; returns its id.
    pub fn write_one(&mut self, node: &PlannedNode) -> Result<u64, Failure> {
        self.side.write_one(node)
    }

    /// Closes everything and opens it again, untimed: the search index is not built yet.
    pub fn reopen_here(&mut self) -> Result<(), Failure> {
        self.side.reopen_here()
    }

    /// The best `limit` hits for `query`, with their scores.
    pub fn search_hits(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Failure> {
        Ok(self.side.agent()?.search(query, limit)?)
    }

    /// Writes `nodes` in one batch, giving the memories the `vectors` in order (lots get none);
    /// returns the ids of the nodes.
    pub fn write_batch_with_vectors(
        &mut self,
        nodes: &[PlannedNode],
        vectors: &[Vec<f32>],
    ) -> Result<Vec<u64>, Failure> {
        let mut vectors = vectors.iter();
        let ids = self.side.agent()?.batch(|batch| {
            let mut ids = Vec::with_capacity(nodes.len());
            for node in nodes {
                let id = match node {
                    PlannedNode::Lot { label, content } => batch.add_lot(label, content)?,
                    PlannedNode::Memory { content, legs } => {
                        let id = batch.remember(content, &legs_of(legs))?;
                        if let Some(vector) = vectors.next() {
                            batch.set_vector(id, vector)?;
                        }
                        id
                    }
                };
                ids.push(id.get());
            }
            Ok(ids)
        })?;
        Ok(ids)
    }

    /// The `limit` nodes whose vectors are nearest `vector` by cosine, exactly.
    pub fn search_vector(&self, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Failure> {
        Ok(self.side.agent()?.search_vector(vector, limit)?)
    }

    /// The keyword and the vector search fused.
    pub fn search_hybrid(&self, query: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Failure> {
        Ok(self.side.agent()?.search_hybrid(query, vector, limit)?)
    }

    /// Recalls `id`; returns the memories removed because of it, ascending.
    #[cfg(all(test, feature = "sqlite"))]
    pub fn recall(&mut self, id: u64, mode: cheesedb::Mode, removal: cheesedb::Removal) -> Result<Vec<u64>, Failure> {
        self.side.recall(id, mode, removal)
    }

    /// Compacts the agent's files.
    #[cfg(all(test, feature = "sqlite"))]
    pub fn compact(&mut self) -> Result<(), Failure> {
        self.side.compact()
    }
}

impl SearchEngine for CheesedbSearchSide {
    fn name(&self) -> &'static str {
        "cheesedb"
    }

    fn write_batch(&mut self, nodes: &[PlannedNode]) -> Result<Vec<u64>, Failure> {
        self.side.write_batch(nodes)
    }

    fn finish_setup(&mut self) -> Result<(), Failure> {
        // The index is built by the first search; the scenarios time that on its own.
        Ok(())
    }

    fn search(&mut self, query: &SearchQuery, limit: usize) -> Result<Vec<u64>, Failure> {
        Ok(self.search_hits(&query.text(), limit)?.into_iter().map(|hit| hit.id.get()).collect())
    }

    fn reopen_and_search(&mut self, first_query: &SearchQuery) -> Result<OpenFigures, Failure> {
        self.side.reopen_searching(Some(&first_query.text()))
    }

    fn disk_bytes(&self) -> Result<u64, Failure> {
        self.side.disk_bytes()
    }
}
