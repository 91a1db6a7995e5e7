//! `cheesedb mcp AGENT`: serve the agent to an AI app over stdio.

use crate::arguments::AgentOnly;
use crate::commands::Context;
use crate::embeddings::config;
use crate::failure::Failure;
use crate::mcp::server::Server;
use crate::output::escaped;
use crate::session::{describe_agent, open_named_agent, open_store};

/// Checks that the agent opens, then serves it until the app closes standard input.
pub fn run(arguments: AgentOnly, context: &Context) -> Result<(), Failure> {
    let embedder = config::load(&context.folder)?;
    let token = {
        // Fail now, with a clear line in the app's log, rather than on every tool call.
        let store = open_store(&context.folder)?;
        open_named_agent(&context.folder, &store, &arguments.agent)?.0
    };
    let agent = escaped(&describe_agent(&arguments.agent));
    let folder = escaped(&context.folder.display().to_string());
    match &embedder {
        Some(embedder) => eprintln!(
            "cheesedb mcp: serving {agent} from {folder}, with embeddings from {} at {}",
            escaped(embedder.model()),
            escaped(&embedder.url())
        ),
        None => eprintln!("cheesedb mcp: serving {agent} from {folder}"),
    }
    let server = Server::new(&context.folder, token, &arguments.agent, embedder)?;
    server.run(std::io::stdin(), std::io::stdout())
}
