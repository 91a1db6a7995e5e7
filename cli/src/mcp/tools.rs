//! The six tools a model gets, and what each does to the one agent being served.
//!
//! No tool takes an agent: the agent is fixed when the server starts. Arguments are checked
//! before the store is opened, and each call opens the store and lets go of it when done, so
//! another server or command on the same folder can work in between. When `embed.conf` names an
//! embeddings server, the store is let go while the server works too: a query is embedded
//! before the store is opened, a new source or memory after it is written.
//!
//! Every source and memory shown carries its trust under the rules of `trust.toml`; what `get`
//! and `search_memories` show is noted for read tracking ([`ReadTracking`]).

use cheesedb::{Agent, Error, Id, Leg, Mode, Node, NodeKind, ReadTracking, Removal, Space, TrustLevel};
use serde_json::{json, Map, Value};

use crate::embeddings::attach::attach_vector;
use crate::embeddings::client::Embedder;
use crate::legs::{legs_in_space, resolve_legs};
use crate::mcp::arguments::ToolArguments;
use crate::mcp::explain::explain;
use crate::mcp::protocol::{ErrorCode, RpcError};
use crate::mcp::reading;
use crate::memory_search::{hits_json, search, space_hits, QueryVector, TrustFilter, HITS_DEFAULT};
use crate::nodes::{legs_json, node_json, LotWord, SharedParents, SourceFinder};
use crate::output::content_json;

/// The tools, by name.
pub const TOOL_NAMES: [&str; 6] =
    ["add_source", "remember", "forget_source", "get", "list_memories", "search_memories"];
/// How many memories one `list_memories` page holds unless the model asks for another size.
pub const PAGE_DEFAULT_MEMORIES: u64 = 20;
/// The most memories one page may hold.
pub const PAGE_MAX_MEMORIES: u64 = 100;
/// The most hits one `search_memories` call may ask for.
pub const SEARCH_MAX_HITS: u64 = 100;

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// It worked: the structured result.
    Done(Value),
    /// It was refused or failed: why, in words the model can act on.
    Refused(String),
}

/// Opens the served agent for one call; the store is dropped with the returned pair.
pub type OpenAgent<'open> = dyn Fn() -> Result<Agent, String> + 'open;

/// What a tool call may use: the served agent (judged by the rules of `trust.toml`), the
/// embeddings server if there is one, and the session's reads.
pub struct Served<'call> {
    /// Opens the agent.
    pub open: &'call OpenAgent<'call>,
    /// The server `embed.conf` names, if any.
    pub embedder: Option<&'call Embedder>,
    /// What the session read since its previous memory.
    pub reads: &'call ReadTracking,
}

/// Runs tool `name`. An unknown tool is a JSON-RPC error; anything wrong with the arguments or
/// refused by the store is a [`ToolOutcome::Refused`] the model reads.
pub fn call(name: &str, arguments: Option<&Value>, served: &Served<'_>) -> Result<ToolOutcome, RpcError> {
    let open = served.open;
    let outcome = match name {
        "add_source" => add_source(arguments, served),
        "remember" => remember(arguments, served),
        "forget_source" => forget_source(arguments, open),
        "get" => get(arguments, served),
        "list_memories" => list_memories(arguments, served),
        "search_memories" => search_memories(arguments, served),
        _ => {
            let message = format!("unknown tool {name:?}; the tools are {}", TOOL_NAMES.join(", "));
            return Err(RpcError::new(ErrorCode::InvalidParams, message));
        }
    };
    Ok(match outcome {
        Ok(value) => ToolOutcome::Done(value),
        Err(reason) => ToolOutcome::Refused(reason),
    })
}

fn add_source(arguments: Option<&Value>, served: &Served<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["label", "text", "space"])?;
    let label = arguments.string("label")?;
    let text = arguments.string("text")?;
    if let Some(space) = arguments.optional_string("space")? {
        let agent = (served.open)()?;
        let id = agent.space(space).and_then(|team| team.add_lot(label, text.as_bytes())).map_err(explain)?;
        return Ok(json!({ "id": id.get(), "space": space }));
    }
    let id = {
        let agent = (served.open)()?;
        agent.add_lot(label, text.as_bytes()).map_err(explain)?
    };
    Ok(written(id, text, served))
}

fn remember(arguments: Option<&Value>, served: &Served<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["text", "legs", "space"])?;
    let text = arguments.string("text")?;
    let parents = arguments.legs_with_shared("legs")?;
    if let Some(space) = arguments.optional_string("space")? {
        let legs = legs_in_space(space, &parents).map_err(|failure| failure.to_string())?;
        let agent = (served.open)()?;
        let id = agent.space(space).and_then(|team| team.remember(text.as_bytes(), &legs)).map_err(explain)?;
        return Ok(json!({ "id": id.get(), "space": space }));
    }
    let remembered = {
        let agent = (served.open)()?;
        let legs = resolve_legs(&agent, &parents).map_err(explain)?;
        reading::remember(served.reads, &agent, text.as_bytes(), &legs)?
    };
    let mut result = written(remembered.id, text, served);
    if !remembered.tracked_parents.is_empty() {
        result["tracked_parents"] = ids_json(&remembered.tracked_parents);
    }
    Ok(result)
}

/// The result of a write that stored `id`: `{"id"}`, and with embeddings configured, whether
/// it got its vector. The store was let go before the embeddings server is asked, and a
/// failure there costs the vector only, never the write.
fn written(id: Id, text: &str, served: &Served<'_>) -> Value {
    let mut result = Map::new();
    result.insert("id".into(), json!(id.get()));
    if let Some(embedder) = served.embedder {
        let status = attach_vector(embedder, id, text.as_bytes(), served.open);
        status.json_fields(&mut result);
        if let Some(note) = status.missing_note(id) {
            result.insert("note".into(), json!(note));
        }
    }
    Value::Object(result)
}

fn search_memories(arguments: Option<&Value>, served: &Served<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["query", "limit", "exclude_low_trust", "space"])?;
    let query = arguments.string("query")?;
    if query.trim().is_empty() {
        return Err(String::from("query is empty: give a few words or a question to search for"));
    }
    let limit = usize::try_from(arguments.count("limit", HITS_DEFAULT, SEARCH_MAX_HITS)?).unwrap_or(usize::MAX);
    let exclude_low_trust = arguments.boolean("exclude_low_trust", false)?;
    if let Some(space) = arguments.optional_string("space")? {
        let agent = (served.open)()?;
        let team = agent.space(space).map_err(explain)?;
        let mut hits = space_hits(&team, query, limit, LotWord::Source).map_err(explain)?;
        if exclude_low_trust {
            hits.retain(|hit| hit["trust"] != "low");
        }
        let shown: Vec<Id> = hits.iter().filter_map(|hit| hit["id"].as_u64()).map(Id::from).collect();
        team.count_as_read(&shown, served.reads).map_err(explain)?;
        return Ok(json!({ "hits": hits, "search": "keyword", "space": space }));
    }
    // Before the store is opened: the embeddings server may take its time.
    let vector = QueryVector::of(query, served.embedder);
    let agent = (served.open)()?;
    let filter = if exclude_low_trust { TrustFilter::ExcludeLow } else { TrustFilter::Everything };
    let searched = search(&agent, query, vector, limit, filter).map_err(explain)?;
    let hits = hits_json(&searched.found, LotWord::Source);
    served.reads.note(searched.found.iter().map(|found| found.id));
    let mut result = Map::new();
    result.insert("hits".into(), hits);
    result.insert("search".into(), json!(searched.ranking.name()));
    if let Some(note) = searched.ranking.fallback_note() {
        result.insert("note".into(), json!(note));
    }
    Ok(Value::Object(result))
}

fn forget_source(arguments: Option<&Value>, open: &OpenAgent<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["id", "strict", "erase", "dry_run", "space"])?;
    let id = arguments.id("id")?;
    let mode = if arguments.boolean("strict", false)? { Mode::Strict } else { Mode::Fair };
    let erase = arguments.boolean("erase", true)?;
    let dry_run = arguments.boolean("dry_run", false)?;
    let agent = open()?;
    let removal = if erase { Removal::Erase } else { Removal::Untrusted };
    if let Some(space) = arguments.optional_string("space")? {
        let team = agent.space(space).map_err(explain)?;
        let reached =
            if dry_run { team.preview_recall(id, mode) } else { team.recall(id, mode, removal) }.map_err(explain)?;
        let members: Map<String, Value> =
            reached.in_members.iter().map(|(member, removed)| (member.clone(), ids_json(removed))).collect();
        return Ok(json!({
            "removed": ids_json(&reached.in_space),
            "members": members,
            "recalled": id.get(),
            "erased": erase,
            "dry_run": dry_run,
            "space": space,
        }));
    }
    // The dry run asks exactly what the deletion would do, so both give the same answer.
    let removed = if dry_run { agent.preview_recall_with(id, mode, removal) } else { agent.recall(id, mode, removal) }
        .map_err(explain)?;
    let removed: Vec<u64> = removed.iter().map(|id| id.get()).collect();
    // An Erase that would change nothing is refused above, so one answered here erases (or,
    // in a dry run, would erase) text: the dry run says what the deletion would do.
    Ok(json!({ "removed": removed, "recalled": id.get(), "erased": erase, "dry_run": dry_run }))
}

fn get(arguments: Option<&Value>, served: &Served<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["id", "space"])?;
    let id = arguments.id("id")?;
    let agent = (served.open)()?;
    if let Some(space) = arguments.optional_string("space")? {
        let team = agent.space(space).map_err(explain)?;
        let node = team.get(id).map_err(explain)?;
        if node.is_alive() {
            team.count_as_read(&[id], served.reads).map_err(explain)?;
        }
        let mut value = node_json(&node, LotWord::Source);
        value["space"] = json!(space);
        value["author"] = json!(team.author_of(id).map_err(explain)?);
        value["trust"] = json!(team.trust(id).map_err(explain)?.as_str());
        return Ok(value);
    }
    let node = agent.get(id).map_err(explain)?;
    let mut parents = SharedParents::new(&agent);
    let mut value = parents.node_json(&node, LotWord::Source).map_err(explain)?;
    if let NodeKind::Memory { legs } = &node.kind {
        let sources = SourceFinder::new(&agent).sources(legs).map_err(explain)?;
        value["sources"] = parents.ids_json(&sources).map_err(explain)?;
        value["tracked_parents"] = ids_json(node.tracked_parents());
    }
    value["trust"] = json!(agent.trust(id).map_err(explain)?.as_str());
    served.reads.note_node(&node);
    Ok(value)
}

fn list_memories(arguments: Option<&Value>, served: &Served<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["cursor", "limit", "exclude_low_trust", "space"])?;
    let after = arguments.cursor("cursor")?;
    let limit =
        usize::try_from(arguments.count("limit", PAGE_DEFAULT_MEMORIES, PAGE_MAX_MEMORIES)?).unwrap_or(usize::MAX);
    let exclude_low_trust = arguments.boolean("exclude_low_trust", false)?;
    let agent = (served.open)()?;
    if let Some(space) = arguments.optional_string("space")? {
        let team = agent.space(space).map_err(explain)?;
        return list_space_memories(&team, after, limit, exclude_low_trust).map_err(explain);
    }
    let mut listed = agent.memories().map_err(explain)?;
    if exclude_low_trust {
        listed = not_low_trust(&agent, listed)?;
    }
    let remaining: Vec<Id> = listed.iter().copied().filter(|id| id.get() > after).collect();
    let mut finder = SourceFinder::new(&agent);
    let mut parents = SharedParents::new(&agent);
    let mut memories = Vec::new();
    for id in remaining.iter().take(limit) {
        let node = agent.get(*id).map_err(explain)?;
        let NodeKind::Memory { legs } = &node.kind else { continue };
        let sources = finder.sources(legs).map_err(explain)?;
        let trust = agent.trust(*id).map_err(explain)?;
        memories.push(memory_json(&node, legs, &sources, trust, &mut parents).map_err(explain)?);
    }
    Ok(json!({ "memories": memories, "next_cursor": next_cursor(&remaining, limit), "total": listed.len() }))
}

/// A page of a space's alive memories after id `after`, each with its author.
fn list_space_memories(team: &Space, after: u64, limit: usize, exclude_low_trust: bool) -> Result<Value, Error> {
    let mut listed = team.alive()?.1;
    if exclude_low_trust {
        let mut kept = Vec::with_capacity(listed.len());
        for id in listed {
            if team.trust(id)? != TrustLevel::Low {
                kept.push(id);
            }
        }
        listed = kept;
    }
    let remaining: Vec<Id> = listed.iter().copied().filter(|id| id.get() > after).collect();
    let mut finder = SourceFinder::of_space(team);
    let mut memories = Vec::new();
    for id in remaining.iter().take(limit) {
        let node = team.get(*id)?;
        let NodeKind::Memory { legs } = &node.kind else { continue };
        memories.push(json!({
            "id": id.get(),
            "content": content_json(node.content().unwrap_or_default()).0,
            "legs": legs_json(legs),
            "sources": ids_json(&finder.sources(legs)?),
            "trust": team.trust(*id)?.as_str(),
            "tracked_parents": [],
            "author": team.author_of(*id)?,
        }));
    }
    Ok(json!({ "memories": memories, "next_cursor": next_cursor(&remaining, limit), "total": listed.len() }))
}

/// The cursor of the page after the first `limit` of `remaining`; null when none follows.
fn next_cursor(remaining: &[Id], limit: usize) -> Value {
    match remaining.get(limit) {
        Some(_) => remaining.get(limit - 1).map(|id| Value::from(id.get().to_string())).unwrap_or(Value::Null),
        None => Value::Null,
    }
}

/// The ids among `ids` whose trust is not low.
fn not_low_trust(agent: &Agent, ids: Vec<Id>) -> Result<Vec<Id>, String> {
    let mut kept = Vec::with_capacity(ids.len());
    for id in ids {
        if agent.trust(id).map_err(explain)? != TrustLevel::Low {
            kept.push(id);
        }
    }
    Ok(kept)
}

/// One memory of a `list_memories` page.
fn memory_json(
    node: &Node,
    legs: &[Leg],
    sources: &[Id],
    trust: TrustLevel,
    parents: &mut SharedParents<'_>,
) -> Result<Value, Error> {
    Ok(json!({
        "id": node.id.get(),
        "content": content_json(node.content().unwrap_or_default()).0,
        "legs": parents.legs_json(legs)?,
        "sources": parents.ids_json(sources)?,
        "trust": trust.as_str(),
        "tracked_parents": ids_json(node.tracked_parents()),
    }))
}

fn ids_json(ids: &[Id]) -> Value {
    Value::from(ids.iter().map(|id| id.get()).collect::<Vec<u64>>())
}
