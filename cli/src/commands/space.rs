//! `cheesedb space create|grant|revoke|list`, and what `--space` does on the commands that take
//! it: the agent argument is the member acting, bounded by its role in the space.

use cheesedb::{Agent, Id, Mode, Node, Removal, Role, Space};
use serde_json::{json, Value};

use crate::arguments::SpaceCommand;
use crate::commands::Context;
use crate::failure::Failure;
use crate::legs::{describe_legs, legs_in_space, Parent};
use crate::memory_search::space_hits;
use crate::nodes::{node_json, LotWord};
use crate::output::escaped;
use crate::session::{open_agent, open_named_agent, reach_store};

/// Runs one `space` subcommand.
pub fn run(command: SpaceCommand, context: &Context) -> Result<(), Failure> {
    match command {
        SpaceCommand::Create { space, admin } => create(&space, &admin, context),
        SpaceCommand::Grant { admin, space, member, role } => grant(&admin, &space, &member, &role, context),
        SpaceCommand::Revoke { admin, space, member } => revoke(&admin, &space, &member, context),
        SpaceCommand::List { agent } => list(agent.as_deref(), context),
    }
}

/// The member `agent`'s handle to `space`.
pub fn open_space(context: &Context, agent: &str, space: &str) -> Result<(Agent, Space), Failure> {
    let member = open_agent(&context.folder, context.access, agent)?;
    let handle = member.space(space)?;
    Ok((member, handle))
}

fn create(space: &str, admin: &str, context: &Context) -> Result<(), Failure> {
    let store = reach_store(&context.folder, context.access, None)?;
    let (_, first_admin) = open_named_agent(&context.folder, &store, admin)?;
    store.create_space(space, &first_admin)?;
    let value = json!({ "space": space, "admin": admin });
    context.printer.result(value, || format!("created space {} with admin {}", escaped(space), escaped(admin)))
}

fn grant(admin: &str, space: &str, member: &str, role: &str, context: &Context) -> Result<(), Failure> {
    let role = Role::from_name(role)
        .ok_or_else(|| Failure::new(format!("{role:?} is not a role: read, write or admin (revoke takes one away)")))?;
    let (_, handle) = open_space(context, admin, space)?;
    handle.grant(member, role)?;
    let value = json!({ "space": space, "member": member, "role": role.name() });
    context.printer.result(value, || format!("{} holds {} in {}", escaped(member), role.name(), escaped(space)))
}

fn revoke(admin: &str, space: &str, member: &str, context: &Context) -> Result<(), Failure> {
    let (_, handle) = open_space(context, admin, space)?;
    handle.revoke(member)?;
    let value = json!({ "space": space, "member": member, "role": Role::None.name() });
    context.printer.result(value, || format!("{} holds no role in {} now", escaped(member), escaped(space)))
}

fn list(agent: Option<&str>, context: &Context) -> Result<(), Failure> {
    let store = reach_store(&context.folder, context.access, None)?;
    let mut spaces = store.spaces()?;
    if let Some(agent) = agent {
        spaces.retain(|space| space.members.iter().any(|(name, _)| name == agent));
    }
    let value: Vec<Value> = spaces
        .iter()
        .map(|space| {
            let members: Vec<Value> =
                space.members.iter().map(|(member, role)| json!({ "name": member, "role": role.name() })).collect();
            json!({ "space": space.name, "members": members })
        })
        .collect();
    context.printer.result(Value::Array(value), || {
        if spaces.is_empty() {
            return String::from("(no spaces)");
        }
        let lines: Vec<String> = spaces
            .iter()
            .map(|space| {
                let members: Vec<String> = space
                    .members
                    .iter()
                    .map(|(member, role)| format!("{} ({})", escaped(member), role.name()))
                    .collect();
                format!("{}: {}", escaped(&space.name), members.join(", "))
            })
            .collect();
        lines.join("\n")
    })
}

/// `lot --space`: adds a source to the space.
pub fn add_lot(context: &Context, agent: &str, space: &str, label: &str, content: &[u8]) -> Result<(), Failure> {
    let (_, handle) = open_space(context, agent, space)?;
    let id = handle.add_lot(label, content)?;
    let value = json!({ "id": id.get(), "space": space, "author": agent });
    context.printer.result(value, || format!("added lot {id} to space {} ({})", escaped(space), escaped(label)))
}

/// `remember --space`: adds a memory to the space.
pub fn remember(
    context: &Context,
    agent: &str,
    space: &str,
    content: &[u8],
    legs: &[Vec<Parent>],
) -> Result<(), Failure> {
    let legs = legs_in_space(space, legs)?;
    let (_, handle) = open_space(context, agent, space)?;
    let id = handle.remember(content, &legs)?;
    let value = json!({ "id": id.get(), "space": space, "author": agent });
    context
        .printer
        .result(value, || format!("remembered {id} in space {} (legs: {})", escaped(space), describe_legs(&legs)))
}

/// The JSON of one node of a space: as an agent's, with `"space"` and `"author"`.
fn space_node_json(handle: &Space, node: &Node) -> Result<Value, Failure> {
    let mut value = node_json(node, LotWord::Lot);
    if let Value::Object(fields) = &mut value {
        fields.insert("space".into(), json!(handle.name()));
        fields.insert("author".into(), json!(handle.author_of(node.id)?));
    }
    Ok(value)
}

/// `get --space` (and `audit --space`, with `audit`): one node of the space, with its author.
pub fn get(context: &Context, agent: &str, space: &str, id: Id, audit: bool) -> Result<(), Failure> {
    let (_, handle) = open_space(context, agent, space)?;
    let node = if audit { handle.audit(id)? } else { handle.get(id)? };
    let author = handle.author_of(id)?;
    let value = space_node_json(&handle, &node)?;
    context.printer.result(value, || {
        let described = crate::commands::get::describe(&node, "(recalled: not shown)", None);
        format!("{described}\nspace:   {}\nauthor:  {}", escaped(space), escaped(&author))
    })
}

/// `list --space`: the alive lots and memories of the space, with their authors.
pub fn list_nodes(context: &Context, agent: &str, space: &str) -> Result<(), Failure> {
    let (_, handle) = open_space(context, agent, space)?;
    let (lots, memories) = handle.alive()?;
    let mut values = Vec::new();
    let mut lines = Vec::new();
    for id in lots.into_iter().chain(memories) {
        let node = handle.get(id)?;
        let value = space_node_json(&handle, &node)?;
        lines.push(format!(
            "[{id}] by {}: {}",
            escaped(&handle.author_of(id)?),
            crate::output::preview(node.content().unwrap_or_default(), 60)
        ));
        values.push(value);
    }
    context.printer.result(Value::Array(values), || {
        if lines.is_empty() {
            String::from("(the space holds no alive lot or memory)")
        } else {
            lines.join("\n")
        }
    })
}

/// `recall --space`: recalls in the space, reaching every member's memories built on it.
pub fn recall(
    context: &Context,
    agent: &str,
    space: &str,
    id: Id,
    mode: Mode,
    removal: Removal,
    dry_run: bool,
) -> Result<(), Failure> {
    let (_, handle) = open_space(context, agent, space)?;
    let reached = if dry_run { handle.preview_recall(id, mode)? } else { handle.recall(id, mode, removal)? };
    let members: Vec<Value> = reached
        .in_members
        .iter()
        .map(|(member, ids)| json!({ "member": member, "removed": ids.iter().map(|id| id.get()).collect::<Vec<_>>() }))
        .collect();
    let removed: Vec<u64> = reached.in_space.iter().map(|id| id.get()).collect();
    let value =
        json!({ "space": space, "recalled": id.get(), "removed": removed, "members": members, "dry_run": dry_run });
    context.printer.result(value, || {
        let verb = if dry_run { "would remove" } else { "removed" };
        let in_space = if removed.is_empty() { String::from("no memory") } else { join(&reached.in_space) };
        let head = if dry_run { "a recall of" } else { "recalled" };
        let mut lines = vec![format!("{head} {id} in space {}; {verb} with it: {in_space}", escaped(space))];
        for (member, ids) in &reached.in_members {
            lines.push(format!("{verb} in {}: {}", escaped(member), join(ids)));
        }
        if dry_run {
            lines.push(String::from("(dry run: nothing was written)"));
        }
        lines.join("\n")
    })
}

/// `search --space`: the space's best nodes for `query`; exit status 0 with hits, 1 without.
pub fn search(context: &Context, agent: &str, space: &str, query: &str, limit: usize) -> Result<u8, Failure> {
    let (_, handle) = open_space(context, agent, space)?;
    let hits = space_hits(&handle, query, limit, LotWord::Lot)?;
    let found = !hits.is_empty();
    let lines: Vec<String> = hits
        .iter()
        .map(|hit| {
            let content = hit["content"].as_str().unwrap_or_default();
            format!(
                "[{}] {} by {}: {}",
                hit["id"],
                hit["kind"].as_str().unwrap_or_default(),
                escaped(hit["author"].as_str().unwrap_or_default()),
                escaped(&crate::output::preview(content.as_bytes(), 80))
            )
        })
        .collect();
    context.printer.result(json!({ "hits": hits, "space": space }), || {
        if lines.is_empty() {
            format!("nothing in space {} matches {}", escaped(space), escaped(query))
        } else {
            lines.join("\n")
        }
    })?;
    Ok(if found { crate::failure::EXIT_SUCCESS } else { crate::failure::EXIT_NOT_FOUND })
}

/// `verify --space`: checks the space's whole log, its roles included.
pub fn verify(context: &Context, agent: &str, space: &str) -> Result<(), Failure> {
    let (_, handle) = open_space(context, agent, space)?;
    let fingerprint = handle.verify()?;
    let value = json!({ "space": space, "fingerprint": fingerprint.to_string() });
    context.printer.result(value, || format!("space {} verified: {fingerprint}", escaped(space)))
}

fn join(ids: &[Id]) -> String {
    ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
