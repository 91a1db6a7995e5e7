//! Searching an agent's lots and memories, the same way for the command and the MCP server:
//! hybrid (keywords and vectors fused) when `embed.conf` names an embeddings server, by keywords
//! otherwise, and by keywords too, saying why, when the query could not be embedded.
//!
//! The query is embedded before the store is opened, so the store's lock is never held while a
//! server thinks. Every hit is read back with `get` and shown only while it is alive: the engine
//! never returns a recalled node, and this is the second look that keeps it so.

use cheesedb::{Agent, Error, Hit, Id, NodeKind, TrustLevel};
use serde_json::{json, Value};

use crate::embeddings::client::Embedder;
use crate::nodes::{ids_json, LotWord};
use crate::output::content_json;

/// How many hits a search returns unless asked for another number.
pub const HITS_DEFAULT: u64 = 10;

/// The vector of a query, as far as there is one.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryVector {
    /// No `embed.conf`: search by keywords.
    NotConfigured,
    /// The query's vector: search by keywords and vectors.
    Embedded(Vec<f32>),
    /// The server could not embed the query, for this reason: search by keywords.
    Failed(String),
}

impl QueryVector {
    /// Asks `embedder`, if there is one, for the vector of `query`.
    pub fn of(query: &str, embedder: Option<&Embedder>) -> QueryVector {
        match embedder {
            None => QueryVector::NotConfigured,
            Some(embedder) => match embedder.embed_one(query) {
                Ok(vector) => QueryVector::Embedded(vector),
                Err(reason) => QueryVector::Failed(reason),
            },
        }
    }
}

/// How a search ranked its hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ranking {
    /// BM25 over the words.
    Keyword,
    /// BM25 and cosine similarity fused by reciprocal rank.
    Hybrid,
    /// BM25 alone, because the vector search could not be done, for this reason.
    KeywordInstead(String),
}

impl Ranking {
    /// `keyword` or `hybrid`.
    pub fn name(&self) -> &'static str {
        match self {
            Ranking::Hybrid => "hybrid",
            Ranking::Keyword | Ranking::KeywordInstead(_) => "keyword",
        }
    }

    /// Why a search meant to be hybrid fell back to keywords, in a sentence.
    pub fn fallback_note(&self) -> Option<String> {
        match self {
            Ranking::KeywordInstead(reason) => {
                Some(format!("searched by keywords only: the query got no usable vector ({reason})"))
            }
            Ranking::Keyword | Ranking::Hybrid => None,
        }
    }
}

/// One alive lot or memory a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its id.
    pub id: Id,
    /// How well it matched; higher is better.
    pub score: f32,
    /// The label of a lot; `None` for a memory.
    pub label: Option<String>,
    /// Its content.
    pub content: Vec<u8>,
    /// How far it can be trusted, by the data folder's `trust.toml`.
    pub trust: TrustLevel,
    /// The parents a memory got from read tracking; empty for a lot.
    pub tracked_parents: Vec<Id>,
}

/// What a search found and how it ranked it.
#[derive(Debug, Clone, PartialEq)]
pub struct Searched {
    /// The hits, best first.
    pub found: Vec<Found>,
    /// How they were ranked.
    pub ranking: Ranking,
}

/// Which hits a search keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustFilter {
    /// Every alive hit.
    Everything,
    /// Every alive hit but those of low trust.
    ExcludeLow,
}

/// Searches `agent` for `query`, with its vector when there is one, for at most `limit` hits
/// that `filter` keeps. Hits left out do not count: the engine is asked for more until `limit`
/// are kept or it has no more.
pub fn search(
    agent: &Agent,
    query: &str,
    vector: QueryVector,
    limit: usize,
    filter: TrustFilter,
) -> Result<Searched, Error> {
    let mut asked = limit;
    loop {
        let mut searched = search_once(agent, query, &vector, asked)?;
        let returned = searched.found.len();
        if filter == TrustFilter::ExcludeLow {
            searched.found.retain(|found| found.trust != TrustLevel::Low);
        }
        let engine_has_no_more = returned < asked || asked >= HITS_ASKED_MAX;
        if searched.found.len() >= limit || engine_has_no_more {
            searched.found.truncate(limit);
            return Ok(searched);
        }
        asked = asked.saturating_mul(2).min(HITS_ASKED_MAX);
    }
}

/// The most hits one search asks the engine for while leaving some out.
const HITS_ASKED_MAX: usize = 100_000;

/// One search of at most `limit` alive hits.
fn search_once(agent: &Agent, query: &str, vector: &QueryVector, limit: usize) -> Result<Searched, Error> {
    let (hits, ranking) = match vector.clone() {
        QueryVector::NotConfigured => (agent.search(query, limit)?, Ranking::Keyword),
        QueryVector::Failed(reason) => (agent.search(query, limit)?, Ranking::KeywordInstead(reason)),
        QueryVector::Embedded(vector) => match agent.search_hybrid(query, &vector, limit) {
            Ok(hits) => (hits, Ranking::Hybrid),
            // Another model than the one the stored vectors came from, say: the words still work.
            Err(error @ (Error::InvalidVector { .. } | Error::LimitExceeded { .. })) => {
                (agent.search(query, limit)?, Ranking::KeywordInstead(error.to_string()))
            }
            Err(error) => return Err(error),
        },
    };
    Ok(Searched { found: alive_hits(agent, &hits)?, ranking })
}

/// The hits with their content, leaving out any that is not alive or has no content.
fn alive_hits(agent: &Agent, hits: &[Hit]) -> Result<Vec<Found>, Error> {
    let mut found = Vec::with_capacity(hits.len());
    for hit in hits {
        let node = agent.get(hit.id)?;
        let Some(content) = node.content().filter(|_| node.is_alive()) else { continue };
        let trust = agent.trust(hit.id)?;
        let tracked_parents = node.tracked_parents().to_vec();
        let label = match &node.kind {
            NodeKind::Lot { label } => Some(label.clone()),
            NodeKind::Memory { .. } => None,
        };
        found.push(Found { id: hit.id, score: hit.score, label, content: content.to_vec(), trust, tracked_parents });
    }
    Ok(found)
}

/// A score as JSON, with the fewest digits that give back the same `f32` (`0.5`, not
/// `0.5000000001`).
pub fn score_json(score: f32) -> Value {
    score.to_string().parse::<f64>().map(Value::from).unwrap_or(Value::Null)
}

/// The hits as JSON: `[{"id", "score", "kind", "content"}]`, a lot's kind named `lot_word`.
pub fn hits_json(found: &[Found], lot_word: LotWord) -> Value {
    let lot = match lot_word {
        LotWord::Lot => "lot",
        LotWord::Source => "source",
    };
    Value::from(
        found
            .iter()
            .map(|hit| {
                let kind = if hit.label.is_some() { lot } else { "memory" };
                let mut value = json!({
                    "id": hit.id.get(),
                    "score": score_json(hit.score),
                    "kind": kind,
                    "content": content_json(&hit.content).0,
                    "trust": hit.trust.as_str(),
                });
                if hit.label.is_none() {
                    value["tracked_parents"] = ids_json(&hit.tracked_parents);
                }
                value
            })
            .collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb::{Leg, Mode, Removal, Store};

    #[test]
    fn scores_keep_their_short_form() {
        assert_eq!(score_json(0.5).to_string(), "0.5");
        assert_eq!(score_json(0.1).to_string(), "0.1");
        assert_eq!(score_json(f32::NAN), Value::Null);
    }

    #[test]
    fn recalled_nodes_are_never_found_and_a_bad_query_vector_falls_back() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(folder.path()).unwrap();
        let agent = store.open_agent(&store.create_agent("a").unwrap()).unwrap();
        let lot = agent.add_lot("weather_tool", b"heavy rain tomorrow").unwrap();
        let memory = agent.remember(b"rain is coming", &[Leg::from([lot])]).unwrap();
        agent.set_vector(memory, &[1.0, 0.0]).unwrap();
        let searched = search(&agent, "rain", QueryVector::NotConfigured, 10, TrustFilter::Everything).unwrap();
        assert_eq!(searched.found.len(), 2);
        let hits = hits_json(&searched.found, LotWord::Source);
        let lot_hit = hits.as_array().unwrap().iter().find(|hit| hit["id"] == lot.get()).unwrap();
        assert_eq!(
            (lot_hit["kind"].clone(), lot_hit["content"].clone()),
            (json!("source"), json!("heavy rain tomorrow"))
        );

        let wrong_dimension = QueryVector::Embedded(vec![1.0, 0.0, 0.0]);
        let searched = search(&agent, "rain", wrong_dimension, 10, TrustFilter::Everything).unwrap();
        assert!(searched.ranking.fallback_note().unwrap().contains("dimensions"), "{:?}", searched.ranking);
        assert_eq!(searched.found.len(), 2);
        let searched =
            search(&agent, "rain", QueryVector::Embedded(vec![1.0, 0.5]), 10, TrustFilter::Everything).unwrap();
        assert_eq!((searched.ranking.name(), searched.found[0].id), ("hybrid", memory));

        agent.recall(lot, Mode::Fair, Removal::Untrusted).unwrap();
        for vector in [QueryVector::NotConfigured, QueryVector::Embedded(vec![1.0, 0.0])] {
            assert!(search(&agent, "rain", vector, 10, TrustFilter::Everything).unwrap().found.is_empty());
        }
    }
}
