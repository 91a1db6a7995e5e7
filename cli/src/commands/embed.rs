//! `cheesedb embed AGENT`: gives every alive lot and memory without a vector one, from the
//! embeddings server that `embed.conf` names, a batch of texts per request and one durable
//! write per batch. What was stored stays stored if the server fails half-way: running the
//! command again goes on where it stopped.

use cheesedb::{Agent, Error, Id, VectorProblem};
use serde_json::json;

use crate::arguments::AgentOnly;
use crate::commands::Context;
use crate::embeddings::attach::embeddable_text;
use crate::embeddings::client::Embedder;
use crate::embeddings::config::{self, EMBED_CONFIG_FILE};
use crate::failure::Failure;
use crate::output::escaped;
use crate::progress::count_bar;
use crate::session::open_agent;

/// The most texts sent in one request.
const TEXTS_PER_REQUEST_MAX: usize = 32;
/// A request is sent once its texts reach this many bytes, so one request stays of a size
/// every server takes.
const BYTES_PER_REQUEST_MAX: usize = 1024 * 1024;

/// What the command did to the nodes without a vector.
#[derive(Debug, Default)]
struct Filled {
    /// How many got their vector.
    embedded: u64,
    /// The nodes left without one, and why.
    skipped: Vec<(Id, String)>,
}

/// Fills in the missing vectors and prints `{"embedded", "had_vector", "skipped": [{"id", "reason"}]}`.
pub fn run(arguments: AgentOnly, context: &Context) -> Result<(), Failure> {
    let Some(embedder) = config::load(&context.folder)? else {
        return Err(Failure::new(format!(
            "no {EMBED_CONFIG_FILE} in {}: write one naming an OpenAI-compatible embeddings server (base_url, model, optional api_key; see cheesedb help embed)",
            context.folder.display()
        )));
    };
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let mut alive = agent.lots()?;
    alive.extend(agent.memories()?);
    alive.sort_unstable();
    let mut without_vector = Vec::new();
    for id in &alive {
        if !agent.has_vector(*id)? {
            without_vector.push(*id);
        }
    }
    let had_vector = alive.len() - without_vector.len();
    let filled = fill(&agent, &embedder, &without_vector)?;
    let skipped: Vec<_> =
        filled.skipped.iter().map(|(id, reason)| json!({ "id": id.get(), "reason": reason })).collect();
    let value = json!({ "embedded": filled.embedded, "had_vector": had_vector, "skipped": skipped });
    context.printer.result(value, || {
        let mut lines = vec![format!(
            "{} lot(s) and memories got a vector from {} at {}; {had_vector} had one already",
            filled.embedded,
            escaped(embedder.model()),
            escaped(&embedder.url())
        )];
        lines.extend(
            filled.skipped.iter().map(|(id, reason)| format!("  [{id}] left without one: {}", escaped(reason))),
        );
        lines.join("\n")
    })
}

/// Embeds the content of `ids` a request at a time and stores each request's vectors in one
/// batch.
fn fill(agent: &Agent, embedder: &Embedder, ids: &[Id]) -> Result<Filled, Failure> {
    let progress = count_bar(ids.len() as u64, "embedding");
    let mut filled = Filled::default();
    let mut pending: Vec<(Id, String)> = Vec::new();
    let mut pending_bytes = 0;
    for (position, id) in ids.iter().enumerate() {
        let node = agent.get(*id)?;
        match embeddable_text(node.content().unwrap_or_default()) {
            Ok(text) => {
                pending_bytes += text.len();
                pending.push((*id, text.to_owned()));
            }
            Err(reason) => filled.skipped.push((*id, reason)),
        }
        let last = position + 1 == ids.len();
        if last || pending.len() == TEXTS_PER_REQUEST_MAX || pending_bytes >= BYTES_PER_REQUEST_MAX {
            let sent = send(agent, embedder, &pending, &mut filled);
            progress.set_position(position as u64 + 1);
            if let Err(failure) = sent {
                progress.finish_and_clear();
                return Err(failure);
            }
            pending.clear();
            pending_bytes = 0;
        }
    }
    progress.finish_and_clear();
    Ok(filled)
}

/// Embeds `pending` and stores the vectors in one batch.
fn send(agent: &Agent, embedder: &Embedder, pending: &[(Id, String)], filled: &mut Filled) -> Result<(), Failure> {
    let texts: Vec<&str> = pending.iter().map(|(_, text)| text.as_str()).collect();
    let stopped =
        format!("stopped after {} vector(s), which are stored (run the command again to go on)", filled.embedded);
    let vectors = embedder.embed(&texts).map_err(|reason| Failure::new(format!("{stopped}: {reason}")))?;
    let items: Vec<(Id, &[f32])> =
        pending.iter().zip(&vectors).map(|((id, _), vector)| (*id, vector.as_slice())).collect();
    let refused = set_vectors(agent, &items)
        .map_err(|error| Failure::from(error).context(&format!("{stopped}; storing the next ones failed")))?;
    let stored = u64::try_from(items.len() - refused.len()).unwrap_or(u64::MAX);
    let refused = refused.into_iter().map(|(id, problem)| (id, format!("the server's vector was refused: {problem}")));
    filled.embedded += stored;
    filled.skipped.extend(refused);
    Ok(())
}

/// Gives each id its vector, all in one durable write. A vector the engine refuses is left out
/// and returned with the reason, so the others are still stored.
///
/// # Errors
///
/// The first error that is not about one vector; then nothing is stored.
fn set_vectors(agent: &Agent, items: &[(Id, &[f32])]) -> Result<Vec<(Id, VectorProblem)>, Error> {
    // Each vector is checked before anything of it is in the batch, so the rest can go on.
    agent.batch(|batch| {
        let mut refused = Vec::new();
        for (id, vector) in items {
            match batch.set_vector(*id, vector) {
                Ok(()) => {}
                Err(Error::InvalidVector { problem }) => refused.push((*id, problem)),
                Err(error) => return Err(error),
            }
        }
        Ok(refused)
    })
}
