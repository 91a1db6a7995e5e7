//! The MCP server: the official SDK (`rmcp`) speaks the protocol (handshakes, version
//! negotiation, ping, discovery, errors for what this server does not offer); this file says
//! what the server is and runs its tools.
//!
//! Tool calls run one at a time, in the order they arrive, on a thread of their own (the engine
//! blocks on the disk), so a ping or a discovery probe is answered while one runs. Standard
//! output carries protocol messages only; anything for people goes to standard error.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cheesedb::{Agent, Error, ReadTracking, Token, TrustRules};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServerInitializeError};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::Mutex;

use crate::embeddings::client::Embedder;
use crate::failure::Failure;
use crate::mcp::definitions;
use crate::mcp::explain::explain;
use crate::mcp::protocol::RpcError;
use crate::mcp::tools::{self, Served, ToolOutcome};
use crate::mcp::transport::StdioTransport;
use crate::session::{describe_agent, note_repairs, reach_store, Access};

/// What the server tells the model about itself when the session starts.
const INSTRUCTIONS: &str = "Long-term memory with provenance. Before you answer anything that earlier conversations or stored sources could bear on, call search_memories to find what you know. Store every source you learn from with add_source, then store what you learn with remember, naming the ids it came from as legs. If a source later proves wrong, malicious or private, forget_source DELETES it and everything learned from it. Read with search_memories, get and list_memories. What you read with get and search_memories is added to the legs of the next memory you remember (read tracking). Everything shown has a trust level: low means learned only from sources the user marked low trust, so treat it as unverified.";
/// How long a tool call still running when the session ends may take to finish its write.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(30);

/// The agent served and how to reach it; shared with the threads that run tool calls.
#[derive(Debug)]
struct ServedAgent {
    folder: PathBuf,
    access: Access,
    token: Token,
    agent_name: String,
    /// The embeddings server of `embed.conf`, if there is one.
    embedder: Option<Embedder>,
    /// The levels of `trust.toml`, read when the server started.
    trust_rules: TrustRules,
    /// What this session read since its previous memory.
    reads: ReadTracking,
}

/// How the agent is served, besides which agent it is.
#[derive(Debug)]
pub struct Settings {
    /// The embeddings server of `embed.conf`, if there is one.
    pub embedder: Option<Embedder>,
    /// The levels of `trust.toml`.
    pub trust_rules: TrustRules,
    /// Whether what the session reads joins the legs of what it remembers next.
    pub read_tracking: bool,
}

impl ServedAgent {
    /// Runs one tool call; blocks on the store and on the embeddings server.
    fn call(&self, name: &str, arguments: Option<&Value>) -> Result<ToolOutcome, RpcError> {
        let open = || self.open_agent();
        let served = Served { open: &open, embedder: self.embedder.as_ref(), reads: &self.reads };
        tools::call(name, arguments, &served)
    }

    /// Opens the agent for one tool call: through the folder's memory server when one runs,
    /// else in this process. The caller drops the handle when done, so neither the folder lock
    /// nor a connection is held between calls, and a server restarted between two calls is
    /// simply reached again (the session's reads are kept here, not on the server).
    fn open_agent(&self) -> Result<Agent, String> {
        let store =
            reach_store(&self.folder, self.access, Some(&self.trust_rules)).map_err(|failure| failure.to_string())?;
        match store.open_agent(&self.token) {
            Ok(agent) => {
                if !agent.is_served() {
                    note_repairs(&self.agent_name, &agent.report());
                }
                Ok(agent)
            }
            Err(Error::UnknownToken) => {
                Err(format!("{} was deleted; this server can no longer reach it", describe_agent(&self.agent_name)))
            }
            Err(error) => Err(explain(error)),
        }
    }
}

/// One agent's memory, served.
#[derive(Debug)]
pub struct Server {
    agent: Arc<ServedAgent>,
    tools: Vec<Tool>,
    /// Held while a tool call runs: calls run one at a time, in order.
    turn: Mutex<()>,
}

impl Server {
    /// A server for the agent that `token` opens in the store at `folder` (reached as `access`
    /// says), as `settings` say.
    ///
    /// # Errors
    ///
    /// When the tool definitions do not fit the SDK's types (a mistake in this program).
    pub fn new(
        folder: &Path,
        access: Access,
        token: Token,
        agent_name: &str,
        settings: Settings,
    ) -> Result<Server, Failure> {
        let agent = ServedAgent {
            folder: folder.to_path_buf(),
            access,
            token,
            agent_name: agent_name.to_owned(),
            embedder: settings.embedder,
            trust_rules: settings.trust_rules,
            reads: ReadTracking::new(settings.read_tracking),
        };
        Ok(Server { agent: Arc::new(agent), tools: tool_list()?, turn: Mutex::new(()) })
    }

    /// Answers messages from `input` on `output` until `input` ends and every request read
    /// was answered.
    ///
    /// # Errors
    ///
    /// When the runtime cannot start or the session fails (the client's pipe broke).
    pub fn run(self, input: impl Read + Send + 'static, output: impl Write + Send + 'static) -> Result<(), Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| Failure::new(format!("cannot start the MCP server: {error}")))?;
        let (transport, writer) = StdioTransport::start(input, output);
        let served = runtime.block_on(async move {
            match ServiceExt::serve(self, transport).await {
                Ok(running) => running.waiting().await.map(drop).map_err(|error| error.to_string()),
                // The client left before it started a session: nothing was asked, nothing is due.
                Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
                Err(error) => Err(error.to_string()),
            }
        });
        runtime.shutdown_timeout(SHUTDOWN_WAIT);
        writer.finish();
        served.map_err(|error| Failure::new(format!("the MCP session failed: {error}")))
    }
}

/// The tools as the SDK lists them, from [`definitions::definitions`].
fn tool_list() -> Result<Vec<Tool>, Failure> {
    serde_json::from_value(definitions::definitions())
        .map_err(|error| Failure::new(format!("the tool definitions do not fit the MCP types: {error}")))
}

fn sdk_error(error: RpcError) -> ErrorData {
    ErrorData::new(ErrorCode(error.code as i32), error.message, None)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        // Offered to a client asking for a version this server does not speak.
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info.server_info = Implementation::new("cheesedb", env!("CARGO_PKG_VERSION")).with_title("cheesedb memory");
        info.instructions = Some(INSTRUCTIONS.into());
        info
    }

    /// Every version the SDK speaks, the handshake-free 2026 lifecycle included: the tools
    /// depend on nothing a version changes.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.into_owned();
        let arguments = request.arguments.map(Value::Object);
        let _turn = self.turn.lock().await;
        let agent = Arc::clone(&self.agent);
        let outcome = tokio::task::spawn_blocking(move || agent.call(&name, arguments.as_ref()))
            .await
            .map_err(|error| ErrorData::internal_error(format!("the tool call failed: {error}"), None))?
            .map_err(sdk_error)?;
        Ok(CallToolResponse::Complete(match outcome {
            ToolOutcome::Done(structured) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(structured.to_string())]);
                result.structured_content = Some(structured);
                result
            }
            ToolOutcome::Refused(reason) => {
                CallToolResult::error(vec![ContentBlock::text(cheesedb::conceal_token_digits(&reason))])
            }
        }))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let message = format!("method {:?} is not supported", request.method);
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_definitions_fit_the_sdk_types() {
        let tools = tool_list().unwrap();
        assert_eq!(tools.len(), tools::TOOL_NAMES.len());
        for (tool, name) in tools.iter().zip(tools::TOOL_NAMES) {
            assert_eq!(tool.name, name);
            assert!(tool.output_schema.is_some() && tool.annotations.is_some());
        }
    }
}
