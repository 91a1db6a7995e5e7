//! `cheesedb agent create|list|delete|encrypt`.

use std::thread::sleep;
use std::time::{Duration, Instant};

use cheesedb::{Error, Fingerprint, Store, Token};
use serde_json::json;

use crate::arguments::AgentCommand;
use crate::commands::Context;
use crate::failure::Failure;
use crate::output::escaped;
use crate::session::{agent_token, describe_agent, reach_store, TokenSource};
use crate::tokens::{tokens_path, SavedTokens};
use cheesedb::access_log;

/// Runs one `agent` subcommand.
pub fn run(command: AgentCommand, context: &Context) -> Result<(), Failure> {
    match command {
        AgentCommand::Create { name, encrypted } => create(&name, encrypted, context),
        AgentCommand::List => list(context),
        AgentCommand::Delete { name } => delete(&name, context),
        AgentCommand::Encrypt { agent } => encrypt(&agent, context),
    }
}

fn create(name: &str, encrypted: bool, context: &Context) -> Result<(), Failure> {
    let store = reach_store(&context.folder, context.access, None)?;
    let token = if encrypted { store.create_encrypted_agent(name)? } else { store.create_agent(name)? };
    let saved = SavedTokens::update(&context.folder, |tokens| tokens.insert(name, &token));
    let tokens_file = tokens_path(&context.folder);
    let value = json!({
        "name": name,
        "encrypted": encrypted,
        "token": token.to_string(),
        "tokens_file": tokens_file.display().to_string()
    });
    // The token exists only now: print it even if saving it failed, so it is not lost.
    context.printer.result(value, || {
        let kind = if encrypted { "encrypted agent" } else { "agent" };
        let mut text = format!(
            "created {kind} {}\ntoken: {token}\nThe token is shown only this once. It is saved in {} (readable by you only) so\nother commands can name the agent; keep a copy somewhere safe too.",
            escaped(&format!("{name:?}")),
            escaped(&tokens_file.display().to_string())
        );
        if encrypted {
            text.push_str("\nIts contents are sealed under keys derived from the token: without the token they cannot be read,\nnot even by cheesedb.");
        }
        text
    })?;
    saved.map_err(|failure| failure.context("the agent was created but its token could not be saved"))
}

fn list(context: &Context) -> Result<(), Failure> {
    let store = reach_store(&context.folder, context.access, None)?;
    let names = store.agent_names()?;
    let encrypted = names.iter().map(|name| store.is_encrypted(name)).collect::<Result<Vec<bool>, _>>()?;
    let tokens = SavedTokens::load(&context.folder)?;
    let agents: Vec<_> = names
        .iter()
        .zip(&encrypted)
        .map(|(name, encrypted)| json!({ "name": name, "encrypted": encrypted, "token_saved": tokens.contains(name) }))
        .collect();
    context.printer.result(json!({ "agents": agents }), || {
        if names.is_empty() {
            return String::from("no agents yet; create one with: cheesedb agent create NAME");
        }
        names
            .iter()
            .zip(&encrypted)
            .map(|(name, encrypted)| {
                let mut line = escaped(name);
                if *encrypted {
                    line.push_str("  (encrypted)");
                }
                if !tokens.contains(name) {
                    line.push_str("  (token not saved here)");
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn delete(name: &str, context: &Context) -> Result<(), Failure> {
    let store = reach_store(&context.folder, context.access, None)?;
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

fn encrypt(agent: &str, context: &Context) -> Result<(), Failure> {
    let store = reach_store(&context.folder, context.access, None)?;
    let (token, source) = agent_token(&context.folder, &store, agent)?;
    let unknown = |error| match error {
        Error::UnknownToken => Failure::new(format!(
            "the token for {} opens no agent in {} (was the agent deleted?)",
            describe_agent(agent),
            context.folder.display()
        )),
        other => Failure::from(other).context(&format!("encrypting {}", describe_agent(agent))),
    };
    let name = store.agent_name_of(&token).map_err(unknown)?;
    if source == TokenSource::TokensFile && name.as_bytes() != agent.as_bytes() {
        // A mixed-up tokens file must not make this command convert another agent.
        return Err(Failure::new(format!(
            "the token saved for agent {agent:?} in {} belongs to agent {name:?}; the file was edited or mixed up: put back the token shown when {agent:?} was created, or pass that token in place of the name",
            tokens_path(&context.folder).display()
        )));
    }
    let progress = crate::progress::spinner("encrypting");
    let converted = encrypt_once_free(&store, &token);
    progress.finish_and_clear();
    let fingerprint = converted.map_err(unknown)?;
    let value = json!({ "encrypted": name, "fingerprint": fingerprint.to_string() });
    context.printer.result(value, || {
        format!(
            "encrypted agent {}: its contents are sealed under keys derived from its token, which goes on working;\nthe plaintext files were overwritten with zeros and removed.\nThe history was chained anew over the sealed records, so fingerprints kept before no longer match.\nnew fingerprint: {fingerprint}\nkeep it somewhere else; later check with: cheesedb verify {} --expect {fingerprint}",
            escaped(&format!("{name:?}")),
            escaped(&name)
        )
    })
}

/// How long `agent encrypt` waits for an agent to be let go: a memory server closes the session
/// of a command that just ended a moment after the command is gone.
const IN_USE_WAIT_MAX: Duration = Duration::from_secs(2);

/// Encrypts the agent of `token`, trying again for a moment while it is in use.
fn encrypt_once_free(store: &Store, token: &Token) -> Result<Fingerprint, Error> {
    let started = Instant::now();
    loop {
        match store.encrypt_agent(token) {
            Err(Error::AgentInUse { .. }) if started.elapsed() < IN_USE_WAIT_MAX => sleep(Duration::from_millis(50)),
            outcome => return outcome,
        }
    }
}
