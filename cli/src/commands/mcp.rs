//! `cheesedb mcp AGENT`: serve the agent to an AI app over stdio.

use crate::arguments::McpArguments;
use crate::commands::Context;
use crate::embeddings::config;
use crate::failure::Failure;
use crate::mcp::server::{Server, Settings};
use crate::output::escaped;
use crate::session::{describe_agent, open_named_agent, reach_store};
use crate::trust_rules;

/// Checks that the agent opens, then serves it until the app closes standard input.
pub fn run(arguments: McpArguments, context: &Context) -> Result<(), Failure> {
    let embedder = config::load(&context.folder)?;
    let trust_rules = trust_rules::load(&context.folder)?;
    let token = {
        // Fail now, with a clear line in the app's log, rather than on every tool call.
        let store = reach_store(&context.folder, context.access, Some(&trust_rules))?;
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
    if arguments.no_read_tracking {
        eprintln!("cheesedb mcp: read tracking is off; memories rest only on the legs the model names");
    }
    let settings = Settings { embedder, trust_rules, read_tracking: !arguments.no_read_tracking };
    let server = Server::new(&context.folder, context.access, token, &arguments.agent, settings)?;
    server.run(std::io::stdin(), std::io::stdout())
}
