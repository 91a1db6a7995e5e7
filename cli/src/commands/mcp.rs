//! `cheesedb mcp AGENT`: serve the agent to an AI app over stdio.

use std::io::{stdin, stdout, BufReader};

use crate::arguments::AgentOnly;
use crate::commands::Context;
use crate::failure::Failure;
use crate::mcp::server::Server;
use crate::session::{agent_token, open_store};

/// Checks that the agent opens, then serves it until the app closes standard input.
pub fn run(arguments: AgentOnly, context: &Context) -> Result<(), Failure> {
    let token = {
        // Fail now, with a clear line in the app's log, rather than on every tool call.
        let store = open_store(&context.folder)?;
        let token = agent_token(&context.folder, &store, &arguments.agent)?;
        store
            .open_agent(&token)
            .map_err(|error| Failure::from(error).context(&format!("opening agent {:?}", arguments.agent)))?;
        token
    };
    eprintln!("cheesedb mcp: serving agent {:?} from {}", arguments.agent, context.folder.display());
    let server = Server::new(&context.folder, token, &arguments.agent);
    server.serve(BufReader::new(stdin().lock()), stdout().lock())
}
