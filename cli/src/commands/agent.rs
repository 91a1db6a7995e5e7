//! `cheesedb agent create|list|delete`.

use serde_json::json;

use crate::access_log;
use crate::arguments::AgentCommand;
use crate::commands::Context;
use crate::failure::Failure;
use crate::output::escaped;
use crate::session::open_store_handle;
use crate::tokens::{tokens_path, SavedTokens};

/// Runs one `agent` subcommand.
pub fn run(command: AgentCommand, context: &Context) -> Result<(), Failure> {
    match command {
        AgentCommand::Create { name } => create(&name, context),
        AgentCommand::List => list(context),
        AgentCommand::Delete { name } => delete(&name, context),
    }
}

fn create(name: &str, context: &Context) -> Result<(), Failure> {
    let store = open_store_handle(&context.folder)?;
    let token = store.create_agent(name)?;
    let saved = SavedTokens::update(&context.folder, |tokens| tokens.insert(name, &token));
    let tokens_file = tokens_path(&context.folder);
    let value = json!({ "name": name, "token": token.to_string(), "tokens_file": tokens_file.display().to_string() });
    // The token exists only now: print it even if saving it failed, so it is not lost.
    context.printer.result(value, || {
        format!(
            "created agent {}\ntoken: {token}\nThe token is shown only this once. It is saved in {} (readable by you only) so\nother commands can name the agent; keep a copy somewhere safe too.",
            escaped(&format!("{name:?}")),
            escaped(&tokens_file.display().to_string())
        )
    })?;
    saved.map_err(|failure| failure.context("the agent was created but its token could not be saved"))
}

fn list(context: &Context) -> Result<(), Failure> {
    let store = open_store_handle(&context.folder)?;
    let names = store.agent_names()?;
    let tokens = SavedTokens::load(&context.folder)?;
    let agents: Vec<_> =
        names.iter().map(|name| json!({ "name": name, "token_saved": tokens.contains(name) })).collect();
    context.printer.result(json!({ "agents": agents }), || {
        if names.is_empty() {
            return String::from("no agents yet; create one with: cheesedb agent create NAME");
        }
        names
            .iter()
            .map(|name| {
                if tokens.contains(name) {
                    escaped(name)
                } else {
                    format!("{}  (token not saved here)", escaped(name))
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn delete(name: &str, context: &Context) -> Result<(), Failure> {
    let store = open_store_handle(&context.folder)?;
    store.delete_agent(name)?;
    SavedTokens::update(&context.folder, |tokens| {
        tokens.remove(name);
    })?;
    // Names the engine did not make stay where they are; the user should hear of them.
    let left_behind = store.left_behind()?;
    let left_json: Vec<_> =
        left_behind.iter().map(|left| json!({ "path": left.path, "reason": left.reason })).collect();
    let mut result = json!({ "deleted": name });
    if !left_json.is_empty() {
        result["left_behind"] = json!(left_json);
    }
    // The access log stays: it holds no content, and it records who used the agent.
    let access_log = access_log::log_files(&context.folder, name).unwrap_or_default();
    if !access_log.is_empty() {
        result["access_log_kept"] = json!(access_log);
    }
    context.printer.result(result, || {
        let mut text = format!("deleted agent {} and all its files", escaped(&format!("{name:?}")));
        if !access_log.is_empty() {
            text.push_str(&format!(
                "\nits access log (who did what, no content) is kept in {}: see cheesedb log; remove those files to drop it",
                escaped(&access_log.join(", "))
            ));
        }
        for left in &left_behind {
            text.push_str(&format!(
                "\nleft in place (not made by cheesedb): {}: {}",
                escaped(&left.path),
                escaped(&left.reason)
            ));
        }
        text
    })
}
