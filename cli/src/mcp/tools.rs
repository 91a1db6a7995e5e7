//! The six tools a model gets, and what each does to the one agent being served.
//!
//! No tool takes an agent: the agent is fixed when the server starts. Arguments are checked
//! before the store is opened, and each call opens the store and lets go of it when done, so
//! another server or command on the same folder can work in between. When `embed.conf` names an
//! embeddings server, the store is let go while the server works too: a query is embedded
//! before the store is opened, a new source or memory after it is written.

use cheesedb::limits::LABEL_MAX_BYTES;
use cheesedb::{Error, Id, Mode, NodeKind, Removal};
use serde_json::{json, Map, Value};

use crate::agent_handle::AgentHandle;
use crate::embeddings::attach::attach_vector;
use crate::embeddings::client::Embedder;
use crate::mcp::arguments::ToolArguments;
use crate::mcp::protocol::{ErrorCode, RpcError};
use crate::memory_search::{hits_json, search, QueryVector, HITS_DEFAULT};
use crate::nodes::{legs_json, node_json, LotWord, SourceFinder};
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
pub type OpenAgent<'open> = dyn Fn() -> Result<AgentHandle, String> + 'open;

/// What a tool call may use: the served agent, and the embeddings server if there is one.
pub struct Served<'call> {
    /// Opens the agent.
    pub open: &'call OpenAgent<'call>,
    /// The server `embed.conf` names, if any.
    pub embedder: Option<&'call Embedder>,
}

/// The `tools/list` entries: names, descriptions, input and output schemas, annotations.
pub fn definitions() -> Value {
    let id_schema = json!({ "type": "integer", "minimum": 1 });
    let legs_schema = json!({
        "type": "array", "minItems": 1,
        "items": { "type": "array", "minItems": 1, "items": id_schema },
    });
    let memory_schema = json!({
        "type": "object",
        "properties": {
            "id": id_schema,
            "content": { "type": "string" },
            "legs": legs_schema,
            "sources": { "type": "array", "items": id_schema },
        },
        "required": ["id", "content", "legs", "sources"],
    });
    let id_result = json!({
        "type": "object",
        "properties": {
            "id": id_schema,
            "vector": { "type": "boolean", "description": "With embeddings configured: whether it got its vector (it is stored either way)." },
            "vector_problem": { "type": "string" },
            "note": { "type": "string" },
        },
        "required": ["id"],
    });
    json!([
        {
            "name": "add_source",
            "title": "Add a source",
            "description": "Store a source you are learning from (a user message, a web page, a document, a tool result) and get its id. Add each source BEFORE you remember anything learned from it, then name its id in the memory's legs. Nothing is judged here: untrusted sources are fine, because forget_source can later remove a bad one together with everything learned from it.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "label": { "type": "string", "minLength": 1, "maxLength": LABEL_MAX_BYTES, "description": "What kind of source it is, e.g. user_message, web_page, weather_tool." },
                    "text": { "type": "string", "description": "The source's content, as received." },
                },
                "required": ["label", "text"],
                "additionalProperties": false,
            },
            "outputSchema": id_result,
            "annotations": { "title": "Add a source", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false },
        },
        {
            "name": "remember",
            "title": "Remember something, with where it came from",
            "description": "Store a memory and the ids it was learned from. legs is a list of alternatives; each leg lists ids (sources or earlier memories) that must ALL stay valid for that leg to hold, and the memory lives while ANY leg holds. Examples: [[3]] learned from source 3; [[1], [2]] stated by source 1 and independently by source 2; [[4, 6]] concluded from memories 4 and 6 together. A memory without legs, or built on a forgotten or unknown id, is refused.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": { "type": "string", "description": "What you learned, in your own words." },
                    "legs": {
                        "type": "array", "minItems": 1,
                        "items": { "type": "array", "minItems": 1, "items": id_schema },
                        "description": "Alternatives, each a list of ids that together support the memory, e.g. [[1], [2, 3]].",
                    },
                },
                "required": ["text", "legs"],
                "additionalProperties": false,
            },
            "outputSchema": id_result,
            "annotations": { "title": "Remember", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false },
        },
        {
            "name": "forget_source",
            "title": "DELETE a source and everything learned from it",
            "description": "DELETES, permanently: the source (or memory) with this id, and every memory that was learned from it, however indirectly. This is NOT a search and NOT a way to read anything: use search_memories, get or list_memories to read. Use it only when a source turned out to be wrong, malicious, or must be removed for privacy. By default (erase: true) the deleted text is destroyed in the files on disk and cannot be recovered. A memory that is also backed by another, independent source survives unless strict is true. Call with dry_run: true first to see which ids would be deleted, without deleting anything.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": { "type": "integer", "minimum": 1, "description": "The source or memory to delete." },
                    "strict": { "type": "boolean", "default": false, "description": "Also delete memories that have another, independent source." },
                    "erase": { "type": "boolean", "default": true, "description": "Destroy the text on disk now (true), or only hide it until the files are compacted (false)." },
                    "dry_run": { "type": "boolean", "default": false, "description": "Only report what would be deleted; delete nothing." },
                },
                "required": ["id"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "removed": { "type": "array", "items": id_schema, "description": "The memories deleted because of it (not the id itself)." },
                    "recalled": id_schema,
                    "erased": { "type": "boolean" },
                    "dry_run": { "type": "boolean" },
                },
                "required": ["removed"],
            },
            "annotations": { "title": "DELETE a source and what was learned from it", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false },
        },
        {
            "name": "get",
            "title": "Read one source or memory",
            "description": "Read one source or memory by id: its text, whether it is still valid (alive), and where it came from (legs and the sources they lead to). A forgotten one has no text (content is null). Read-only.",
            "inputSchema": {
                "type": "object",
                "properties": { "id": { "type": "integer", "minimum": 1, "description": "The id to read." } },
                "required": ["id"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "id": id_schema,
                    "kind": { "type": "string", "enum": ["source", "memory"] },
                    "label": { "type": "string" },
                    "legs": legs_schema,
                    "sources": { "type": "array", "items": id_schema },
                    "alive": { "type": "boolean" },
                    "content": { "type": ["string", "null"], "description": "null once erased." },
                    "content_encoding": { "type": "string", "enum": ["utf-8", "hex"] },
                },
                "required": ["id", "kind", "alive", "content"],
            },
            "annotations": { "title": "Read", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false },
        },
        {
            "name": "list_memories",
            "title": "List what you remember",
            "description": "List the memories that are still valid, oldest first, with their legs and sources, a page at a time. Pass the returned next_cursor to get the next page; next_cursor is null on the last page. Read-only.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "cursor": { "type": "string", "description": "next_cursor from the previous page; omit for the first page." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": PAGE_MAX_MEMORIES, "default": PAGE_DEFAULT_MEMORIES },
                },
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "memories": { "type": "array", "items": memory_schema },
                    "next_cursor": { "type": ["string", "null"] },
                    "total": { "type": "integer", "minimum": 0 },
                },
                "required": ["memories", "next_cursor", "total"],
            },
            "annotations": { "title": "List memories", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false },
        },
        {
            "name": "search_memories",
            "title": "Search what you remember",
            "description": "Search your long-term memory: the sources and memories stored here that match a query, best match first, by their words (and by meaning too when the server has embeddings). Call it BEFORE you answer anything that earlier conversations, the user's facts and preferences, or sources you stored could bear on, and before you remember something, to find what you already know and the ids to name in legs. Each hit has id, score (higher is better), kind (source or memory) and content; get shows one with where it came from. Forgotten sources and memories are never found. Read-only: it changes and deletes nothing.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "minLength": 1, "description": "What to look for: a few words or a question, e.g. weather in Pune tomorrow." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": SEARCH_MAX_HITS, "default": HITS_DEFAULT, "description": "The most hits to return." },
                },
                "required": ["query"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "hits": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": id_schema,
                                "score": { "type": "number" },
                                "kind": { "type": "string", "enum": ["source", "memory"] },
                                "content": { "type": "string" },
                            },
                            "required": ["id", "score", "kind", "content"],
                        },
                    },
                    "search": { "type": "string", "enum": ["keyword", "hybrid"], "description": "hybrid: words and meaning; keyword: words only." },
                    "note": { "type": "string", "description": "Why a search meant to be hybrid used words only." },
                },
                "required": ["hits", "search"],
            },
            "annotations": { "title": "Search memory", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false },
        },
    ])
}

/// Runs tool `name`. An unknown tool is a JSON-RPC error; anything wrong with the arguments or
/// refused by the store is a [`ToolOutcome::Refused`] the model reads.
pub fn call(name: &str, arguments: Option<&Value>, served: &Served<'_>) -> Result<ToolOutcome, RpcError> {
    let open = served.open;
    let outcome = match name {
        "add_source" => add_source(arguments, served),
        "remember" => remember(arguments, served),
        "forget_source" => forget_source(arguments, open),
        "get" => get(arguments, open),
        "list_memories" => list_memories(arguments, open),
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
    let arguments = ToolArguments::parse(arguments, &["label", "text"])?;
    let label = arguments.string("label")?;
    let text = arguments.string("text")?;
    let id = {
        let agent = (served.open)()?;
        agent.add_lot(label, text.as_bytes()).map_err(explain)?
    };
    Ok(written(id, text, served))
}

fn remember(arguments: Option<&Value>, served: &Served<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["text", "legs"])?;
    let text = arguments.string("text")?;
    let legs = arguments.legs("legs")?;
    let id = {
        let agent = (served.open)()?;
        agent.remember(text.as_bytes(), &legs).map_err(explain)?
    };
    Ok(written(id, text, served))
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
    let arguments = ToolArguments::parse(arguments, &["query", "limit"])?;
    let query = arguments.string("query")?;
    if query.trim().is_empty() {
        return Err(String::from("query is empty: give a few words or a question to search for"));
    }
    let limit = usize::try_from(arguments.count("limit", HITS_DEFAULT, SEARCH_MAX_HITS)?).unwrap_or(usize::MAX);
    // Before the store is opened: the embeddings server may take its time.
    let vector = QueryVector::of(query, served.embedder);
    let agent = (served.open)()?;
    let searched = search(&agent, query, vector, limit).map_err(explain)?;
    let mut result = Map::new();
    result.insert("hits".into(), hits_json(&searched.found, LotWord::Source));
    result.insert("search".into(), json!(searched.ranking.name()));
    if let Some(note) = searched.ranking.fallback_note() {
        result.insert("note".into(), json!(note));
    }
    Ok(Value::Object(result))
}

fn forget_source(arguments: Option<&Value>, open: &OpenAgent<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["id", "strict", "erase", "dry_run"])?;
    let id = arguments.id("id")?;
    let mode = if arguments.boolean("strict", false)? { Mode::Strict } else { Mode::Fair };
    let erase = arguments.boolean("erase", true)?;
    let dry_run = arguments.boolean("dry_run", false)?;
    let agent = open()?;
    let removal = if erase { Removal::Erase } else { Removal::Untrusted };
    // The dry run asks exactly what the deletion would do, so both give the same answer.
    let removed = if dry_run { agent.preview_recall_with(id, mode, removal) } else { agent.recall(id, mode, removal) }
        .map_err(explain)?;
    let removed: Vec<u64> = removed.iter().map(|id| id.get()).collect();
    Ok(json!({ "removed": removed, "recalled": id.get(), "erased": erase && !dry_run, "dry_run": dry_run }))
}

fn get(arguments: Option<&Value>, open: &OpenAgent<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["id"])?;
    let id = arguments.id("id")?;
    let agent = open()?;
    let node = agent.get(id).map_err(explain)?;
    let mut value = node_json(&node, LotWord::Source);
    if let NodeKind::Memory { legs } = &node.kind {
        let sources = SourceFinder::new(&agent).sources(legs).map_err(explain)?;
        value["sources"] = json!(sources.iter().map(|id| id.get()).collect::<Vec<u64>>());
    }
    Ok(value)
}

fn list_memories(arguments: Option<&Value>, open: &OpenAgent<'_>) -> Result<Value, String> {
    let arguments = ToolArguments::parse(arguments, &["cursor", "limit"])?;
    let after = arguments.cursor("cursor")?;
    let limit = arguments.count("limit", PAGE_DEFAULT_MEMORIES, PAGE_MAX_MEMORIES)? as usize;
    let agent = open()?;
    let alive = agent.memories().map_err(explain)?;
    let remaining: Vec<_> = alive.iter().copied().filter(|id| id.get() > after).collect();
    let mut finder = SourceFinder::new(&agent);
    let mut memories = Vec::new();
    for id in remaining.iter().take(limit) {
        let node = agent.get(*id).map_err(explain)?;
        let NodeKind::Memory { legs } = &node.kind else { continue };
        let sources: Vec<u64> = finder.sources(legs).map_err(explain)?.iter().map(|id| id.get()).collect();
        let content = content_json(node.content().unwrap_or_default()).0;
        memories.push(json!({ "id": id.get(), "content": content, "legs": legs_json(legs), "sources": sources }));
    }
    let next_cursor = match remaining.get(limit) {
        Some(_) => remaining.get(limit - 1).map(|id| Value::from(id.get().to_string())).unwrap_or(Value::Null),
        None => Value::Null,
    };
    Ok(json!({ "memories": memories, "next_cursor": next_cursor, "total": alive.len() }))
}

/// An engine error in words for the model, with what to do instead.
pub fn explain(error: Error) -> String {
    match error {
        Error::UnknownId { id } => format!(
            "no source or memory has id {id} here; use the ids that add_source and remember returned, or list_memories"
        ),
        Error::DeadParent { id } => format!(
            "id {id} was forgotten (deleted) and can no longer be built on; name only sources and memories that are still valid"
        ),
        Error::AlreadyRecalled { id } => format!(
            "id {id} was already forgotten, and forgetting it again this way would change nothing (with erase, it erases any text left)"
        ),
        Error::OutcomeUnknown { operation, path, kind, source } => format!(
            "storage error{note} while {operation} {path}: {source}. The write may have been stored: check with get before retrying (a retry could store it twice; a forget with erase that was stored finishes its erasure when the memory is next opened)",
            note = crate::failure::kind_note(kind)
        ),
        Error::NoLegs => String::from("legs is empty: a memory must name what it was learned from, e.g. [[1]]"),
        Error::EmptyLeg { leg_index } => format!("legs[{leg_index}] is empty: each leg must list at least one id"),
        Error::InvalidName { reason } => format!("label refused: {reason}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_outcome_tells_the_model_to_check_before_retrying() {
        let refused = Error::from_storage("syncing", "segment", std::io::Error::other("EIO"));
        let Error::Io { operation, path, kind, source } = refused.clone() else { panic!("{refused:?}") };
        let explained = explain(Error::OutcomeUnknown { operation, path, kind, source });
        assert!(explained.contains("may have been stored: check with get before retrying"), "{explained}");
        let refused = explain(refused);
        assert!(!refused.contains("may have been stored"), "{refused}");
    }
}
