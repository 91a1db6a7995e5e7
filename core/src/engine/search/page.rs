//! A page of search hits in one call: ranked, passed over when below the trust floor or outside
//! the ids asked for while the ranking is collected, then read back with what a caller shows.
//!
//! The floor is applied to the candidates in rank order, so one pass fills the page however many
//! better-ranked hits it turns away; the trust walk of each is remembered for the rest of the
//! call, so hits learned from the same sources cost one walk.

use alloc::vec::Vec;

use hashbrown::HashSet;

use super::{SearchIndex, HYBRID_CANDIDATES_MIN};
use crate::engine::trust::KnownLevels;
use crate::engine::AgentEngine;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::id::Id;
use crate::node::NodeKind;
use crate::search::{reciprocal_rank_fusion, Hit};
use crate::search_page::{Found, FoundKind, Ranking, SearchPage, SearchQuery};
use crate::storage::Storage;
use crate::trust::{TrustLevel, TrustRules};

impl<S: Storage> AgentEngine<S> {
    /// The best `query.limit` alive lots and memories for `query`, each with its content, its
    /// kind (a lot's label, a memory's tracked parents), its trust level under `rules` and
    /// whether it has a vector.
    ///
    /// Without a vector the hits are ranked by words, as [`AgentEngine::search`] ranks them; with
    /// one, by words and vector fused, as [`AgentEngine::search_hybrid`] fuses them. A vector
    /// that cannot be compared with the agent's (another dimension, say) is not an error: the
    /// search goes by words and says why in [`Ranking::KeywordInstead`].
    ///
    /// Hits below `query.least_trust`, or not in `query.among`, are passed over while the
    /// ranking is collected: the page holds `limit` hits whenever that many match, however many
    /// better-ranked ones were passed over, and a hybrid search fuses the two rankings of the
    /// hits kept. A recalled lot or memory is never found.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::search`]; `Error::Corrupt` or `Error::Io` when the record of a hit, or
    /// of a lot a hit's trust rests on, cannot be read.
    pub fn search_page(&mut self, query: &SearchQuery, rules: &TrustRules) -> Result<SearchPage, Error> {
        self.search_index()?;
        // Judging trust reads lot labels through the engine, so the index is set aside meanwhile
        // (were the call to stop half-way, the next search would build it again from the log).
        let index = self.search.take().ok_or(Error::Internal { what: InternalRule::SearchIndexBuilt })?;
        let mut known = KnownLevels::new();
        let ranked = self.rank_page(&index, query, rules, &mut known);
        self.search = Some(index);
        let (hits, ranking) = ranked?;
        let mut found = Vec::with_capacity(hits.len());
        for hit in hits {
            if let Some(shown) = self.found(hit, rules, &mut known)? {
                found.push(shown);
            }
        }
        Ok(SearchPage::new(found, ranking))
    }

    /// The hits of the page, best first, and how they were ranked.
    fn rank_page(
        &mut self,
        index: &SearchIndex,
        query: &SearchQuery,
        rules: &TrustRules,
        known: &mut KnownLevels,
    ) -> Result<(Vec<Hit>, Ranking), Error> {
        let among: Option<HashSet<u64>> = query.among.as_ref().map(|ids| ids.iter().map(|id| id.get()).collect());
        let filtered = among.is_some() || query.least_trust > TrustLevel::Low;
        let mut keep = |id: u64| -> Result<bool, Error> {
            if among.as_ref().is_some_and(|among| !among.contains(&id)) || !self.graph.is_alive(id) {
                return Ok(false);
            }
            if query.least_trust == TrustLevel::Low {
                return Ok(true);
            }
            Ok(self.trust_knowing(Id::from(id), rules, known)? >= query.least_trust)
        };
        let (text, limit) = (query.text.as_str(), query.limit);
        let mut by_words = |limit: usize| -> Result<Vec<Hit>, Error> {
            if text.is_empty() || limit == 0 {
                Ok(Vec::new())
            } else if filtered {
                index.keywords.search_kept(text, limit, &mut keep)
            } else {
                Ok(index.keywords.search(text, limit))
            }
        };
        let Some(vector) = &query.vector else { return Ok((by_words(limit)?, Ranking::Keyword)) };
        if let Err(refused) = check_query_vector(index, vector) {
            return Ok((by_words(limit)?, Ranking::KeywordInstead { refused }));
        }
        if limit == 0 {
            return Ok((Vec::new(), Ranking::Hybrid));
        }
        let candidates = limit.max(HYBRID_CANDIDATES_MIN);
        let words = by_words(candidates)?;
        let by_vector = if filtered {
            index.vectors.search_kept(vector, candidates, &mut keep)?
        } else {
            index.vectors.search(vector, candidates)?
        };
        Ok((reciprocal_rank_fusion(&[&words, &by_vector], limit), Ranking::Hybrid))
    }

    /// A hit with what is shown of it; `None` for one that is not alive (which the index never
    /// holds: this is the second look that keeps a recalled node out of every answer).
    fn found(&mut self, hit: Hit, rules: &TrustRules, known: &mut KnownLevels) -> Result<Option<Found>, Error> {
        let node = self.get(hit.id)?;
        let Some(content) = node.content().filter(|_| node.is_alive()).map(<[u8]>::to_vec) else {
            return Ok(None);
        };
        let trust = self.trust_knowing(hit.id, rules, known)?;
        let has_vector = self.search.as_ref().is_some_and(|index| index.vectors.contains(hit.id.get()));
        let tracked_parents = node.tracked_parents().to_vec();
        let kind = match node.kind {
            NodeKind::Lot { label } => FoundKind::Lot { label },
            NodeKind::Memory { .. } => FoundKind::Memory { tracked_parents },
            // A shared node has no content, so no search finds it (nor gets this far).
            NodeKind::Shared { .. } => return Ok(None),
        };
        Ok(Some(Found::new(hit.id, hit.score, kind, content, trust, has_vector)))
    }
}

/// Refuses a query vector the agent's vectors cannot be compared with; an agent without
/// vectors takes any (it finds nothing by vector).
fn check_query_vector(index: &SearchIndex, vector: &[f32]) -> Result<(), Error> {
    if index.vectors.is_empty() {
        return Ok(());
    }
    index.vectors.check(vector)
}
