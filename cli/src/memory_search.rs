//! Searching an agent's lots and memories, the same way for the command and the MCP server:
//! hybrid (keywords and vectors fused) when `embed.conf` names an embeddings server, by keywords
//! otherwise, and by keywords too, saying why, when the query could not be embedded.
//!
//! The query is embedded before the store is opened, so the store's lock is never held while a
//! server thinks. The library's page search does the rest in one call (one request when a
//! memory server holds the store): it ranks, passes over low-trust hits while ranking so the
//! page is full, and returns each alive hit with its content and trust; a recalled node is never
//! among them.

use cheesedb::{Agent, Error, Found, SearchQuery, TrustLevel};
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
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// BM25 over the words.
    Keyword,
    /// BM25 and cosine similarity fused by reciprocal rank.
    Hybrid,
    /// BM25 alone, because the vector search could not be done, for this reason.
    KeywordInstead(Fallback),
}

/// Why a search meant to be hybrid went by keywords.
#[derive(Debug, Clone, PartialEq)]
pub enum Fallback {
    /// The embeddings server gave no vector, for this reason (its own words).
    NotEmbedded(String),
    /// The engine could not compare the query's vector with the agent's (another model than
    /// the one the stored vectors came from, say).
    Refused(Error),
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
        let reason = match self {
            Ranking::KeywordInstead(Fallback::NotEmbedded(reason)) => reason.clone(),
            Ranking::KeywordInstead(Fallback::Refused(error)) => error.to_string(),
            Ranking::Keyword | Ranking::Hybrid => return None,
        };
        Some(format!("searched by keywords only: the query got no usable vector ({reason})"))
    }
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

impl TrustFilter {
    /// The least trust level of a hit kept.
    fn least_trust(self) -> TrustLevel {
        match self {
            TrustFilter::Everything => TrustLevel::Low,
            TrustFilter::ExcludeLow => TrustLevel::Normal,
        }
    }
}

/// Searches `agent` for `query`, with its vector when there is one, for at most `limit` hits
/// that `filter` keeps: hits left out do not count, so the page is full whenever enough match.
pub fn search(
    agent: &Agent,
    query: &str,
    vector: QueryVector,
    limit: usize,
    filter: TrustFilter,
) -> Result<Searched, Error> {
    let mut asked = SearchQuery::new(query, limit).least_trust(filter.least_trust());
    let not_embedded = match vector {
        QueryVector::NotConfigured => None,
        QueryVector::Failed(reason) => Some(reason),
        QueryVector::Embedded(vector) => {
            asked = asked.vector(vector);
            None
        }
    };
    let page = agent.search_page(&asked)?;
    let ranking = match (page.ranking, not_embedded) {
        (_, Some(reason)) => Ranking::KeywordInstead(Fallback::NotEmbedded(reason)),
        (cheesedb::Ranking::Keyword, None) => Ranking::Keyword,
        (cheesedb::Ranking::Hybrid, None) => Ranking::Hybrid,
        (cheesedb::Ranking::KeywordInstead { refused }, None) => Ranking::KeywordInstead(Fallback::Refused(refused)),
    };
    Ok(Searched { found: page.found, ranking })
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
                let kind = if hit.label().is_some() { lot } else { "memory" };
                let mut value = json!({
                    "id": hit.id.get(),
                    "score": score_json(hit.score),
                    "kind": kind,
                    "content": content_json(&hit.content).0,
                    "trust": hit.trust.as_str(),
                });
                if hit.label().is_none() {
                    value["tracked_parents"] = ids_json(hit.tracked_parents());
                }
                value
            })
            .collect::<Vec<_>>(),
    )
}

/// The best `limit` alive nodes of the space for `query` (by its words), as JSON hits: `id`,
/// `score`, `kind` (lots named by `lot_word`), `content`, `trust` and `author`.
pub fn space_hits(
    space: &cheesedb::Space,
    query: &str,
    limit: usize,
    lot_word: LotWord,
) -> Result<Vec<Value>, cheesedb::Error> {
    let mut hits = Vec::new();
    for hit in space.search(query, limit)? {
        let node = space.get(hit.id)?;
        let kind = match (node.is_lot(), lot_word) {
            (true, LotWord::Lot) => "lot",
            (true, LotWord::Source) => "source",
            (false, _) => "memory",
        };
        hits.push(json!({
            "id": hit.id.get(),
            "score": hit.score,
            "kind": kind,
            "content": content_json(node.content().unwrap_or_default()).0,
            "trust": space.trust(hit.id)?.as_str(),
            "author": space.author_of(hit.id)?,
        }));
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb::{Id, Leg, Mode, Removal, Store};

    #[test]
    fn scores_keep_their_short_form() {
        assert_eq!(score_json(0.5).to_string(), "0.5");
        assert_eq!(score_json(0.1).to_string(), "0.1");
        assert_eq!(score_json(f32::NAN), Value::Null);
    }

    #[test]
    fn leaving_out_low_trust_hits_still_fills_the_page() {
        let folder = tempfile::tempdir().unwrap();
        let rules = cheesedb::TrustRules::new().with("web_page", TrustLevel::Low);
        let store = Store::builder(folder.path()).trust_rules(rules).open().unwrap();
        let agent = store.open_agent(&store.create_agent("a").unwrap()).unwrap();
        for index in 0..30 {
            agent.add_lot("web_page", format!("rain rain rain {index}").as_bytes()).unwrap();
        }
        let user: Vec<Id> =
            (0..4).map(|index| agent.add_lot("user", format!("rain later, {index}").as_bytes()).unwrap()).collect();
        let searched = search(&agent, "rain", QueryVector::NotConfigured, 3, TrustFilter::ExcludeLow).unwrap();
        assert_eq!(searched.found.len(), 3);
        assert!(searched.found.iter().all(|found| user.contains(&found.id) && found.trust == TrustLevel::Normal));
        let failed = QueryVector::Failed(String::from("the server said no"));
        let searched = search(&agent, "rain", failed, 3, TrustFilter::Everything).unwrap();
        assert_eq!(
            searched.ranking.fallback_note().as_deref(),
            Some("searched by keywords only: the query got no usable vector (the server said no)")
        );
        assert!(searched.found.iter().all(|found| found.trust == TrustLevel::Low));
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
