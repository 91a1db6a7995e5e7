//! `cheesedb search AGENT QUERY [--limit N]`: the alive lots and memories that match, best
//! first, with grep's exit status.

use cheesedb::Found;
use serde_json::json;

use crate::arguments::SearchArguments;
use crate::commands::Context;
use crate::embeddings::config;
use crate::failure::{Failure, EXIT_NOT_FOUND, EXIT_SUCCESS};
use crate::memory_search::{hits_json, search, QueryVector, Ranking, TrustFilter};
use crate::nodes::LotWord;
use crate::output::escaped;
use crate::session::open_agent;
use crate::snippet::snippet;

/// The most characters of a hit's content shown in text output.
const SNIPPET_CHARACTERS_MAX: usize = 80;

/// Prints the hits, `{"hits": [{"id", "score", "kind", "content", "trust", "tracked_parents"}]}` in JSON; exit status 0
/// with hits, 1 without. A recalled lot or memory is never among them.
pub fn run(arguments: SearchArguments, context: &Context) -> Result<u8, Failure> {
    let query = &arguments.query;
    if query.trim().is_empty() {
        return Err(Failure::new("the query is empty: give the words to search for"));
    }
    let limit = usize::try_from(arguments.limit).unwrap_or(usize::MAX);
    if let Some(space) = &arguments.space {
        return crate::commands::space::search(context, &arguments.agent, space, query, limit);
    }
    // Embed the query before taking the store's lock: the server may take its time.
    let embedder = config::load(&context.folder)?;
    let vector = QueryVector::of(query, embedder.as_ref());
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let filter = if arguments.exclude_low_trust { TrustFilter::ExcludeLow } else { TrustFilter::Everything };
    let searched = search(&agent, query, vector, limit, filter)?;
    if let Some(note) = searched.ranking.fallback_note() {
        eprintln!("cheesedb: note: {}", escaped(&note));
    }
    let found = &searched.found;
    context
        .printer
        .result(json!({ "hits": hits_json(found, LotWord::Lot) }), || describe(query, found, &searched.ranking))?;
    Ok(if found.is_empty() { EXIT_NOT_FOUND } else { EXIT_SUCCESS })
}

fn describe(query: &str, found: &[Found], ranking: &Ranking) -> String {
    let quoted = escaped(&format!("{query:?}"));
    if found.is_empty() {
        return format!("no lot or memory matches {quoted}");
    }
    let by = match ranking {
        Ranking::Hybrid => "words and meaning",
        Ranking::Keyword | Ranking::KeywordInstead(_) => "words",
    };
    let mut lines = vec![format!("{} hit(s) for {quoted}, best first by {by}:", found.len())];
    for hit in found {
        let text = snippet(&hit.content, query, SNIPPET_CHARACTERS_MAX);
        let (kind, shown) = match hit.label() {
            Some(label) => ("lot", format!("{}: {text}", escaped(label))),
            None => ("memory", text),
        };
        let trust = hit.trust.as_str();
        lines.push(format!("  [{}] {kind:<6} {:>9.4}  {trust:<6}  {shown}", hit.id, hit.score));
    }
    lines.join("\n")
}
