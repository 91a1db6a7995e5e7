//! The tools as `tools/list` shows them: names, descriptions, input and output schemas and
//! annotations. The descriptions are what the model reads to choose a tool, so they say when to
//! call it, what comes back, and what trust levels and tracked parents mean.

use cheesedb::limits::LABEL_MAX_BYTES;
use serde_json::{json, Value};

use crate::mcp::tools::{PAGE_DEFAULT_MEMORIES, PAGE_MAX_MEMORIES, SEARCH_MAX_HITS};
use crate::memory_search::HITS_DEFAULT;

/// What every reading tool's description says about trust, for the model.
const TRUST_MEANING: &str = "trust is high, normal or low: how far to believe it, from the kinds of sources it rests on (the user sets a level per source label). low means it was learned only from sources the user marked low trust: treat it as unverified, do not act on it or repeat it as fact without checking it elsewhere.";
/// What the reading tools say about read tracking.
const TRACKING_MEANING: &str = "tracked_parents lists the ids a memory got from read tracking: what was read with get or search_memories before it was remembered, added to its legs.";

/// What the `space` argument means, for the model.
const SPACE_MEANING: &str = "A shared space you are a member of (memory several agents share), to act in instead of your own memory; leave it out for your own. What you may do there depends on your role in it (read, write or admin).";

/// The `tools/list` entries: names, descriptions, input and output schemas, annotations.
pub fn definitions() -> Value {
    let trust_schema = json!({ "type": "string", "enum": ["high", "normal", "low"], "description": TRUST_MEANING });
    let tracked_schema =
        json!({ "type": "array", "items": { "type": "integer", "minimum": 1 }, "description": TRACKING_MEANING });
    let exclude_low_schema = json!({ "type": "boolean", "default": false, "description": "Leave out what has low trust (learned only from sources the user marked low trust)." });
    let id_schema = json!({ "type": "integer", "minimum": 1 });
    let space_schema = json!({ "type": "string", "minLength": 1, "description": SPACE_MEANING });
    // A parent is an id of your own, or a node of a shared space you built on.
    let parent_schema = json!({ "anyOf": [
        id_schema,
        { "type": "object", "properties": { "space": { "type": "string" }, "id": id_schema }, "required": ["space", "id"] },
    ] });
    let legs_schema = json!({
        "type": "array", "minItems": 1,
        "items": { "type": "array", "minItems": 1, "items": parent_schema },
    });
    let memory_schema = json!({
        "type": "object",
        "properties": {
            "id": id_schema,
            "content": { "type": "string" },
            "legs": legs_schema,
            "sources": { "type": "array", "items": parent_schema },
            "trust": trust_schema,
            "tracked_parents": tracked_schema,
            "author": { "type": "string", "description": "With space: the member that wrote it." },
        },
        "required": ["id", "content", "legs", "sources", "trust", "tracked_parents"],
    });
    let id_result = json!({
        "type": "object",
        "properties": {
            "id": id_schema,
            "vector": { "type": "boolean", "description": "With embeddings configured: whether it got its vector (it is stored either way)." },
            "vector_problem": { "type": "string" },
            "note": { "type": "string" },
            "tracked_parents": { "type": "array", "items": id_schema, "description": "remember only: the ids you read since your previous remember, added to each leg by read tracking (absent when there were none)." },
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
                    "space": space_schema,
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
            "description": "Store a memory and the ids it was learned from. legs is a list of alternatives; each leg lists ids (sources or earlier memories) that must ALL stay valid for that leg to hold, and the memory lives while ANY leg holds. Examples: [[3]] learned from source 3; [[1], [2]] stated by source 1 and independently by source 2; [[4, 6]] concluded from memories 4 and 6 together. A memory without legs, or built on a forgotten or unknown id, is refused. Read tracking: every source or memory you read with get or search_memories since your previous remember is added to each leg too (returned as tracked_parents), so the memory is forgotten with what you read; still name in legs what it really comes from.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": { "type": "string", "description": "What you learned, in your own words." },
                    "legs": {
                        "type": "array", "minItems": 1,
                        "items": { "type": "array", "minItems": 1, "items": { "anyOf": [
                            id_schema,
                            {
                                "type": "object",
                                "properties": { "space": { "type": "string", "minLength": 1 }, "id": id_schema },
                                "required": ["space", "id"],
                                "additionalProperties": false,
                            },
                        ] } },
                        "description": "Alternatives, each a list of ids that together support the memory, e.g. [[1], [2, 3]]. A node of a shared space you read is {\"space\": \"team\", \"id\": 3}: if the space later forgets it, this memory goes too.",
                    },
                    "space": space_schema,
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
                    "space": { "type": "string", "minLength": 1, "description": "Delete from this shared space instead of your own memory (you must be its admin): what every member of the space learned from the id is deleted from their own memories too, and with erase its text is destroyed there as well." },
                },
                "required": ["id"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "removed": { "type": "array", "items": id_schema, "description": "The memories deleted because of it (not the id itself)." },
                    "recalled": id_schema,
                    "erased": { "type": "boolean", "description": "Whether the text was destroyed in the files (in a dry run: would be)." },
                    "dry_run": { "type": "boolean" },
                    "members": { "type": "object", "additionalProperties": { "type": "array", "items": id_schema }, "description": "With space: each member whose own memories were deleted with it, and those ids." },
                    "space": { "type": "string" },
                },
                "required": ["removed"],
            },
            "annotations": { "title": "DELETE a source and what was learned from it", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false },
        },
        {
            "name": "get",
            "title": "Read one source or memory",
            "description": "Read one source or memory by id: its text, whether it is still valid (alive), where it came from (legs and the sources they lead to), and its trust. A forgotten one has no text (content is null). What you read here counts as read for your next remember (see remember). Read-only.",
            "inputSchema": {
                "type": "object",
                "properties": { "id": { "type": "integer", "minimum": 1, "description": "The id to read." }, "space": space_schema },
                "required": ["id"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "id": id_schema,
                    "kind": { "type": "string", "enum": ["source", "memory", "shared"], "description": "shared: your own id standing for a node of a shared space (space_id in space)." },
                    "label": { "type": "string" },
                    "legs": legs_schema,
                    "sources": { "type": "array", "items": parent_schema },
                    "space": { "type": "string", "description": "With space: the space's name; for a shared node: the name of the space it stands for." },
                    "space_id": id_schema,
                    "author": { "type": "string", "description": "With space: the member that wrote it." },
                    "alive": { "type": "boolean" },
                    "content": { "type": ["string", "null"], "description": "null once erased." },
                    "content_encoding": { "type": "string", "enum": ["utf-8", "hex"] },
                    "trust": trust_schema,
                    "tracked_parents": tracked_schema,
                },
                "required": ["id", "kind", "alive", "content", "trust"],
            },
            "annotations": { "title": "Read", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false },
        },
        {
            "name": "list_memories",
            "title": "List what you remember",
            "description": "List the memories that are still valid, oldest first, with their legs, sources, trust and tracked_parents, a page at a time. Pass the returned next_cursor to get the next page; next_cursor is null on the last page. Listing does not count as reading for read tracking. Read-only.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "cursor": { "type": "string", "description": "next_cursor from the previous page; omit for the first page." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": PAGE_MAX_MEMORIES, "default": PAGE_DEFAULT_MEMORIES },
                    "exclude_low_trust": exclude_low_schema,
                    "space": { "type": "string", "minLength": 1, "description": "List this shared space you are a member of instead of your own memory; each memory also names its author, and its legs and sources are ids of the space." },
                },
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "memories": { "type": "array", "items": memory_schema },
                    "next_cursor": { "type": ["string", "null"] },
                    "total": { "type": "integer", "minimum": 0, "description": "How many memories there are to list (without the low-trust ones when they are excluded)." },
                },
                "required": ["memories", "next_cursor", "total"],
            },
            "annotations": { "title": "List memories", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false },
        },
        {
            "name": "search_memories",
            "title": "Search what you remember",
            "description": "Search your long-term memory: the sources and memories stored here that match a query, best match first, by their words (and by meaning too when the server has embeddings). Call it BEFORE you answer anything that earlier conversations, the user's facts and preferences, or sources you stored could bear on, and before you remember something, to find what you already know and the ids to name in legs. Each hit has id, score (higher is better), kind (source or memory), content and trust, and a memory its tracked_parents; get shows one with where it came from. Forgotten sources and memories are never found. The hits count as read for your next remember (see remember). Read-only: it changes and deletes nothing.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "minLength": 1, "description": "What to look for: a few words or a question, e.g. weather in Pune tomorrow." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": SEARCH_MAX_HITS, "default": HITS_DEFAULT, "description": "The most hits to return." },
                    "exclude_low_trust": exclude_low_schema,
                    "space": { "type": "string", "minLength": 1, "description": "Search this shared space you are a member of instead of your own memory (by words); each hit also names its author." },
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
                                "trust": trust_schema,
                                "tracked_parents": tracked_schema,
                            },
                            "required": ["id", "score", "kind", "content", "trust"],
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
