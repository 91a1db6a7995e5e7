//! What `lot` and `remember` share: the write, then, when `embed.conf` names an embeddings
//! server, the new node's vector, and the line that reports both.
//!
//! The write is durable before the server is asked, and the store is let go in between, so a
//! failed embedding costs only the vector: the command still succeeds, says so on standard
//! error, and `cheesedb embed` fills the vector in later.

use cheesedb::{Agent, Error, Id};
use serde_json::{json, Value};

use crate::commands::Context;
use crate::embeddings::attach::{attach_vector, VectorStatus};
use crate::embeddings::config;
use crate::failure::Failure;
use crate::output::escaped;
use crate::session::open_agent;

/// Writes `content` to the agent `agent_name` with `write`, gives it a vector when
/// `embed.conf` says how, and prints `{"id"}` (with `"vector"` and `"vector_problem"` when
/// embeddings are configured) or the text `describe` makes of the new id.
pub fn write_then_embed(
    context: &Context,
    agent_name: &str,
    content: &[u8],
    write: impl FnOnce(&Agent) -> Result<Id, Error>,
    describe: impl FnOnce(Id) -> String,
) -> Result<(), Failure> {
    // Read before the write: a broken embed.conf stops the command with nothing written.
    let embedder = config::load(&context.folder)?;
    let id = {
        let agent = open_agent(&context.folder, context.access, agent_name)?;
        write(&agent)?
    };
    let reopen = || open_agent(&context.folder, context.access, agent_name).map_err(|failure| failure.to_string());
    let status = embedder.as_ref().map(|embedder| attach_vector(embedder, id, content, &reopen));
    let mut value = json!({ "id": id.get() });
    if let (Some(status), Value::Object(fields)) = (&status, &mut value) {
        status.json_fields(fields);
    }
    if let Some(note) = status.as_ref().and_then(|status| status.missing_note(id)) {
        eprintln!("cheesedb: note: {}", escaped(&note));
    }
    context.printer.result(value, || {
        let attached = if status == Some(VectorStatus::Attached) { ", with its vector" } else { "" };
        format!("{}{attached}", describe(id))
    })
}
