//! SQLite FTS5 under test: the same texts in one full-text table, searched with `MATCH` and
//! ranked by `bm25()`, with the same durability as cheesedb.
//!
//! One FTS5 table with its default tokenizer (unicode61: words split on Unicode separators and
//! lower-cased), holding lots and memories alike under their ids. WAL with synchronous=FULL, as
//! the other SQLite side: each batch is a transaction committed durably. Once the corpus is
//! written, FTS5's `optimize` merges its index into one b-tree, the state in which it searches
//! fastest. A query is its words joined by OR (FTS5 reads words side by side as AND), and
//! `ORDER BY rank LIMIT n` ranks by `bm25()`: FTS5's own shortcut for the best n.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{Connection, TransactionBehavior};

use crate::engine::OpenFigures;
use crate::failure::Failure;
use crate::folder::files_size_bytes;
use crate::search_corpus::SearchQuery;
use crate::search_engine::SearchEngine;
use crate::sqlite_side::open_with_settings;
use crate::workload::PlannedNode;

const DATABASE_FILE: &str = "search.sqlite";

const SCHEMA: &str = "CREATE VIRTUAL TABLE texts USING fts5(content, tokenize = 'unicode61')";

/// The best `?2` texts for the query `?1`: `rank` is `bm25(texts)`, lower is better.
const SEARCH: &str = "SELECT rowid FROM texts WHERE texts MATCH ?1 ORDER BY rank LIMIT ?2";

#[cfg(test)]
/// Every text matching the query `?1`, with its BM25 as FTS5 computes it (negated: higher is
/// better, as cheesedb's scores).
const SEARCH_SCORED: &str = "SELECT rowid, -bm25(texts) FROM texts WHERE texts MATCH ?1 ORDER BY rank";

/// The SQLite FTS5 side of the search section.
pub struct Fts5Side {
    folder: PathBuf,
    connection: Option<Connection>,
}

impl Fts5Side {
    /// Creates the database in `folder`, which must be empty.
    pub fn create(folder: &Path) -> Result<Fts5Side, Failure> {
        let connection = open_with_settings(&folder.join(DATABASE_FILE))?;
        connection.execute_batch(SCHEMA)?;
        Ok(Fts5Side { folder: folder.to_path_buf(), connection: Some(connection) })
    }

    fn connection(&mut self) -> Result<&mut Connection, Failure> {
        self.connection.as_mut().ok_or_else(|| Failure::new("the benchmark's FTS5 database is not open"))
    }

    #[cfg(test)]
    /// Every text matching `query`, best first, with FTS5's BM25 (higher is better).
    pub fn search_scored(&mut self, query: &SearchQuery) -> Result<Vec<(u64, f64)>, Failure> {
        let connection = self.connection()?;
        let mut search = connection.prepare_cached(SEARCH_SCORED)?;
        let hits = search
            .query_map([query.fts5_match()], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, f64>(1)?)))?
            .collect::<Result<Vec<(i64, f64)>, _>>()?;
        Ok(hits.into_iter().map(|(id, score)| (id as u64, score)).collect())
    }

    #[cfg(test)]
    /// Removes the texts of `ids`, as a recall takes them out of cheesedb's searches.
    pub fn remove(&mut self, ids: &[u64]) -> Result<(), Failure> {
        let transaction = self.connection()?.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut delete = transaction.prepare_cached("DELETE FROM texts WHERE rowid = ?1")?;
            for id in ids {
                delete.execute([*id as i64])?;
            }
        }
        transaction.commit()?;
        Ok(())
    }
}

fn content_text(node: &PlannedNode) -> Result<&str, Failure> {
    let content = match node {
        PlannedNode::Lot { content, .. } | PlannedNode::Memory { content, .. } => content,
    };
    std::str::from_utf8(content).map_err(|_| Failure::new("a text of the search corpus is not UTF-8"))
}

impl SearchEngine for Fts5Side {
    fn name(&self) -> &'static str {
        "SQLite"
    }

    fn write_batch(&mut self, nodes: &[PlannedNode]) -> Result<Vec<u64>, Failure> {
        let transaction = self.connection()?.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut ids = Vec::with_capacity(nodes.len());
        {
            let mut insert = transaction.prepare_cached("INSERT INTO texts (content) VALUES (?1)")?;
            for node in nodes {
                insert.execute([content_text(node)?])?;
                ids.push(transaction.last_insert_rowid() as u64);
            }
        }
        transaction.commit()?;
        Ok(ids)
    }

    fn finish_setup(&mut self) -> Result<(), Failure> {
        self.connection()?.execute("INSERT INTO texts (texts) VALUES ('optimize')", [])?;
        Ok(())
    }

    fn search(&mut self, query: &SearchQuery, limit: usize) -> Result<Vec<u64>, Failure> {
        let connection = self.connection()?;
        let mut search = connection.prepare_cached(SEARCH)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let ids = search
            .query_map(rusqlite::params![query.fts5_match(), limit], |row| row.get::<_, i64>(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        Ok(ids.into_iter().map(|id| id as u64).collect())
    }

    fn reopen_and_search(&mut self, first_query: &SearchQuery) -> Result<OpenFigures, Failure> {
        if let Some(connection) = self.connection.take() {
            connection.close().map_err(|(_, error)| Failure::from(error))?;
        }
        let started = Instant::now();
        self.connection = Some(open_with_settings(&self.folder.join(DATABASE_FILE))?);
        let opened = Instant::now();
        // The first statement also reads the schema: part of what the first search costs.
        self.search(first_query, 10)?;
        let searched = Instant::now();
        Ok(OpenFigures {
            agent_open: opened - started,
            first_search: Some(searched - opened),
            ..OpenFigures::default()
        })
    }

    fn disk_bytes(&self) -> Result<u64, Failure> {
        files_size_bytes(&self.folder, |_| true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::folder::BenchFolder;

    fn lot(text: &str) -> PlannedNode {
        PlannedNode::Lot { label: "document", content: text.as_bytes().to_vec() }
    }

    #[test]
    fn or_queries_find_any_word_and_rank_by_bm25() {
        let folder = BenchFolder::new(None).unwrap();
        let mut fts5 = Fts5Side::create(&folder.fresh("fts5", 1).unwrap()).unwrap();
        let nodes = [lot("kala bose rimu"), lot("bose bose tepa"), lot("nori"), lot("kala")];
        assert_eq!(fts5.write_batch(&nodes).unwrap(), vec![1, 2, 3, 4]);
        fts5.finish_setup().unwrap();
        let query = SearchQuery::new(vec!["bose".into(), "kala".into()]);
        let mut found = fts5.search(&query, 10).unwrap();
        found.sort_unstable();
        assert_eq!(found, vec![1, 2, 4]);
        let scored = fts5.search_scored(&query).unwrap();
        assert!(scored.windows(2).all(|pair| pair[0].1 >= pair[1].1), "{scored:?}");
        assert_eq!(fts5.search(&query, 1).unwrap().len(), 1);
        fts5.remove(&[2]).unwrap();
        let figures = fts5.reopen_and_search(&query).unwrap();
        assert!(figures.first_search.is_some());
        let mut found = fts5.search(&query, 10).unwrap();
        found.sort_unstable();
        assert_eq!(found, vec![1, 4]);
    }
}
