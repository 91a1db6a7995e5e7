//! The command line: every subcommand, its arguments, and its help with an example.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Agent memory with a recall button.
///
/// Every memory names the sources it was learned from. Recall a source and everything learned
/// from it goes too; with --erase its text also leaves the files on disk.
#[derive(Debug, Parser)]
#[command(name = "cheesedb", version, propagate_version = true, disable_help_subcommand = false)]
#[command(after_help = "Examples:
  cheesedb agent create alice
  cheesedb lot alice weather_tool \"Pune: rain\"
  cheesedb remember alice \"Pune is rainy\" --leg 1
  cheesedb search alice rain
  cheesedb recall alice 1 --erase
  cheesedb demo

Data lives in ~/.cheesedb, or in $CHEESEDB_DIR, or in the folder given with --dir.
Files go through ordinary system calls, or through io_uring with --io uring (or CHEESEDB_IO=uring).")]
pub struct Arguments {
    /// The data folder [default: $CHEESEDB_DIR, else ~/.cheesedb]
    #[arg(long, global = true, value_name = "FOLDER")]
    pub dir: Option<PathBuf>,

    /// Print the result as one line of JSON, for scripts
    #[arg(long, global = true)]
    pub json: bool,

    /// How cheesedb reaches its files: std (ordinary system calls) or uring (io_uring, Linux)
    #[arg(long, global = true, value_name = "IO", env = "CHEESEDB_IO", default_value_t = cheesedb::Io::Std)]
    pub io: cheesedb::Io,

    /// Open the store read-only: nothing is written, every write is refused, and the store may
    /// sit on read-only media; other readers may share it, a writer may not
    #[arg(long, global = true)]
    pub read_only: bool,

    /// What to do
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands, one per feature.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, list, encrypt or delete agents
    #[command(subcommand)]
    Agent(AgentCommand),

    /// Share memory between agents: spaces with members and roles (read, write, admin)
    #[command(subcommand)]
    Space(SpaceCommand),

    /// Add a lot: a source the agent learned from (a message, a page, a tool result)
    #[command(after_help = "Examples:
  cheesedb lot alice weather_tool \"Pune: rain\"
  cheesedb lot alice web_page --file page.html
  curl -s https://example.org | cheesedb lot alice web_page -")]
    Lot(LotArguments),

    /// Add a memory, naming the lots or memories it was learned from as legs
    #[command(after_help = "A leg is a set of parents that must ALL stay alive; a memory lives while ANY leg holds.

Examples:
  cheesedb remember alice \"user lives in Pune\" --leg 1 --leg 2     # from 1, or from 2
  cheesedb remember alice \"carry an umbrella\" --leg 4,5            # needs 4 and 5")]
    Remember(RememberArguments),

    /// Recall a lot or memory: it and everything learned from it are removed
    #[command(after_help = "Fair (the default) keeps a memory that still has a leg untouched by the recall;
--strict removes every memory with the id anywhere in its history.
Without --erase the text stays in the files until `cheesedb compact`; with --erase it is
gone from every file before the command returns.

Examples:
  cheesedb recall alice 3 --dry-run      # what would go, writing nothing
  cheesedb recall alice 3 --erase")]
    Recall(RecallArguments),

    /// Show one lot or memory with its legs and content
    #[command(after_help = "Example:
  cheesedb get alice 4")]
    Get(AgentAndId),

    /// Show one lot or memory with the text a recall without --erase left on disk (never over MCP)
    Audit(AgentAndId),

    /// List the alive lots and memories, with each memory's legs and sources
    #[command(after_help = "Example:
  cheesedb list alice")]
    List(ListArguments),

    /// Show the provenance graph, as text or as Graphviz DOT
    #[command(after_help = "Examples:
  cheesedb graph alice
  cheesedb graph alice --dot | dot -Tsvg > alice.svg")]
    Graph(GraphArguments),

    /// Search the alive lots and memories by their words, and by meaning with embed.conf (exit 0 found, 1 not found)
    #[command(after_help = "Ranked by BM25 over the words; with embed.conf in the data folder (base_url, model,
optional api_key of an OpenAI-compatible embeddings server), the query is embedded too and the
keyword and vector rankings are fused. A recalled lot or memory is never found.

Examples:
  cheesedb search alice \"rain in Pune\"
  cheesedb search alice umbrella --limit 3 --json")]
    Search(SearchArguments),

    /// Give every lot and memory without a vector one, from the embeddings server in embed.conf
    #[command(after_help = "embed.conf in the data folder (TOML) names an OpenAI-compatible embeddings server:
  base_url = \"http://localhost:8080/v1\"
  model    = \"your-embedding-model\"
  # api_key = \"your-key\"
Once it exists, every lot and memory written with the command or over MCP gets its vector at
once; this fills in those written before, or whose embedding failed.

Example:
  cheesedb embed alice")]
    Embed(AgentOnly),

    /// Search every byte of every file in the data folder for a text (exit 0 found, 1 not found)
    #[command(after_help = "It reads the raw files, so it shows whether a text is still on disk, whatever
the engine thinks is alive.

Example:
  cheesedb find \"Pune: rain\" && echo \"still on disk\"")]
    Find(FindArguments),

    /// Check the whole history and print its head fingerprint
    #[command(after_help = "Keep the fingerprint somewhere else; later, --expect checks that the history
still passes through it (nothing below it was cut or rewritten).

Examples:
  cheesedb verify alice
  cheesedb verify alice --expect 12-3f5a...")]
    Verify(VerifyArguments),

    /// Rewrite the agent's files without the text of recalled lots and memories
    #[command(after_help = "Example:
  cheesedb compact alice")]
    Compact(AgentOnly),

    /// Show what opening the agent found and did (torn writes cut, erasures finished)
    #[command(after_help = "Example:
  cheesedb report alice")]
    Report(AgentOnly),

    /// Show who did what to an agent through the memory server, every entry verified
    #[command(after_help = "Each entry: when, the client's process and user ids, the operation, the ids
involved and the outcome; never content. The entries form a hash chain across the rotated files
in access/ in the data folder: an entry edited, removed or moved fails the command (exit 3)
naming the file and entry. It reads the files only, with or without a server running.

Examples:
  cheesedb log alice
  cheesedb log alice --json")]
    Log(AgentName),

    /// Serve the store to several programs at once over a Unix socket
    #[command(after_help = "The server holds the store open and serves every client over a Unix socket
(default: cheesedb.sock in the data folder, mode 0600). Each connection opens one agent by its
token; only this user and root may connect. SIGTERM or Ctrl-C stops it cleanly: the request in
flight is finished, the socket removed and the store closed. A socket left by a killed server is
replaced; a live one means another server runs, and this one refuses to start.

Examples:
  cheesedb serve &
  cheesedb serve --socket /run/user/1000/cheesedb.sock")]
    Serve(ServeArguments),

    /// Ship every agent's log to S3-compatible object storage, continuously or once
    #[command(after_help = "The endpoint and credentials come from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY and AWS_REGION, or from object-store.toml in the data folder (endpoint,
access_key_id, secret_access_key, region); never from the command line. Plain HTTP is accepted
only for an endpoint on this machine. Without --once the command serves the store (as `cheesedb
serve`, so other commands and apps go on writing) and ships until Ctrl-C or SIGTERM.

Examples:
  cheesedb replicate --to s3://backups/laptop --once
  cheesedb replicate --to s3://backups/laptop --status --json
  cheesedb replicate --to s3://backups/laptop --max-lag-ms 500")]
    Replicate(ReplicateArguments),

    /// Bring agents back from object storage into a folder, whole and verified
    #[command(after_help = "Each agent keeps its name, token and history: `verify` of a restored agent gives
the fingerprint the original had at that point.

Examples:
  cheesedb restore --from s3://backups/laptop --to /srv/cheesedb
  cheesedb restore --from s3://backups/laptop --to /tmp/then --agent alice --fingerprint 42-ab…")]
    Restore(RestoreArguments),

    /// Keep a read-only copy of replicated agents current from object storage
    #[command(after_help = "Each step opens the copy, applies only what extends the history it holds (anything
else stops the command with a Corrupt error naming the object), and closes it, so that readers
can open it with --read-only in between.

Examples:
  CHEESEDB_DIR=/srv/replica cheesedb follow --from s3://backups/laptop --to /srv/replica")]
    Follow(FollowArguments),

    /// Serve one agent to AI apps over the Model Context Protocol (stdio)
    #[command(after_help = "The app starts this command and speaks JSON-RPC on its standard input and
output; nothing listens on the network. What the model reads with get and search_memories
joins the legs of the next memory it remembers (read tracking), unless --no-read-tracking.
Trust levels come from trust.toml in the data folder, read when the server starts.

Examples:
  claude mcp add cheesedb -- cheesedb mcp alice
  { \"mcpServers\": { \"cheesedb\": { \"command\": \"cheesedb\", \"args\": [\"mcp\", \"alice\"] } } }")]
    Mcp(McpArguments),

    /// Tell the story of a bad source three ways, with a model (from llm.conf) or a scripted one
    #[command(after_help = "With llm.conf in the data folder (TOML: base_url, model, optional api_key) the demo
talks to that OpenAI-compatible server; without it, a scripted model plays the part.
The demo works in a temporary folder of its own and never touches your agents.

Examples:
  cheesedb demo
  cheesedb demo --scripted")]
    Demo(DemoArguments),
}

/// `cheesedb agent ...`
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Create an agent; its token is printed once and saved in the data folder
    #[command(after_help = "With --encrypted, the agent's contents, lot labels and vectors are sealed under keys
derived from its token, which the store never keeps: the data folder alone reveals none of
them, and an Erase destroys the keys of what it erases.

Examples:
  cheesedb agent create alice
  cheesedb agent create bob --encrypted")]
    Create {
        /// The agent's name (any text up to 256 bytes)
        name: String,
        /// Seal the agent's contents under keys derived from its token (encryption at rest)
        #[arg(long)]
        encrypted: bool,
    },
    /// List the agents of the data folder, and which are encrypted
    #[command(after_help = "Example:
  cheesedb agent list")]
    List,
    /// Delete an agent and all its files
    #[command(after_help = "Example:
  cheesedb agent delete alice")]
    Delete {
        /// The agent's name
        name: String,
    },
    /// Convert a plaintext agent into an encrypted one, then erase the plaintext files
    #[command(after_help = "The agent's history is written again into a new folder, every content sealed under keys
derived from its token (the same token goes on working); the store switches to it at once and
the plaintext files are overwritten with zeros and removed. A crash at any point leaves the
agent whole, plaintext or encrypted. What a recall with --erase or a compaction removed stays
removed. The history is chained anew: the command prints the new fingerprint, and fingerprints
kept before no longer match. The agent must not be in use meanwhile (an MCP server, say).

Example:
  cheesedb agent encrypt alice")]
    Encrypt {
        /// The agent's name (or its token)
        agent: String,
    },
}

/// `cheesedb space ...`: the acting agent comes first, as everywhere.
#[derive(Debug, Subcommand)]
pub enum SpaceCommand {
    /// Create a space, with ADMIN as its first member and admin
    #[command(after_help = "Members read, write or administer the space with --space on lot, remember, get,
audit, list, search, recall and verify. A private memory builds on a space's node with a leg naming the space
before the id (--leg team:3); a recall in the space removes what every member built on it.

Example:
  cheesedb space create team alice")]
    Create {
        /// The space's name (as an agent's, without `:` or `,`)
        space: String,
        /// The agent that becomes its first admin (its name or token)
        admin: String,
    },
    /// Give MEMBER the role ROLE (read, write or admin) in SPACE; ADMIN must be its admin
    #[command(after_help = "Example:
  cheesedb space grant alice team bob write")]
    Grant {
        /// The admin acting (its name or token)
        admin: String,
        /// The space
        space: String,
        /// The agent given the role
        member: String,
        /// read, write or admin
        role: String,
    },
    /// Take every role from MEMBER in SPACE; what it wrote stays, and later recalls still reach it
    #[command(after_help = "Example:
  cheesedb space revoke alice team bob")]
    Revoke {
        /// The admin acting (its name or token)
        admin: String,
        /// The space
        space: String,
        /// The agent whose role goes
        member: String,
    },
    /// List the spaces with their members and roles, or only the spaces of AGENT
    #[command(after_help = "Examples:
  cheesedb space list
  cheesedb space list bob")]
    List {
        /// Only the spaces this agent (by name) holds a role in
        agent: Option<String>,
    },
}

/// Where a text argument comes from: the command line, a file, or standard input.
#[derive(Debug, Args)]
pub struct TextSource {
    /// The text; `-` reads it from standard input
    #[arg(value_name = "TEXT", allow_hyphen_values = true)]
    pub text: Option<String>,

    /// Read the text from this file instead
    #[arg(long, value_name = "PATH", conflicts_with = "text")]
    pub file: Option<PathBuf>,
}

/// `cheesedb lot AGENT LABEL TEXT`
#[derive(Debug, Args)]
pub struct LotArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Act in this space, as the agent (a member) may
    #[arg(long, value_name = "SPACE")]
    pub space: Option<String>,
    /// What kind of source it is, e.g. user_message, web_page, weather_tool
    pub label: String,
    /// The source's content
    #[command(flatten)]
    pub content: TextSource,
}

/// `cheesedb remember AGENT TEXT --leg IDS...`
#[derive(Debug, Args)]
pub struct RememberArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Act in this space, as the agent (a member) may
    #[arg(long, value_name = "SPACE")]
    pub space: Option<String>,
    /// The memory's content
    #[command(flatten)]
    pub content: TextSource,
    /// One leg: comma-separated ids that must all stay alive (SPACE:ID for a space's node);
    /// repeat for more legs
    #[arg(long = "leg", value_name = "IDS")]
    pub legs: Vec<String>,
}

/// `cheesedb recall AGENT ID`
#[derive(Debug, Args)]
pub struct RecallArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Act in this space, as the agent (a member) may
    #[arg(long, value_name = "SPACE")]
    pub space: Option<String>,
    /// The lot or memory to recall
    pub id: u64,
    /// Remove every memory with the id anywhere in its history, even one backed elsewhere too
    #[arg(long)]
    pub strict: bool,
    /// Erase the text from every file before returning (without it, the text stays until compact)
    #[arg(long)]
    pub erase: bool,
    /// Print what would be removed, writing nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// A subcommand that takes an agent and an id.
#[derive(Debug, Args)]
pub struct AgentAndId {
    /// The agent's name (or its token)
    pub agent: String,
    /// Act in this space, as the agent (a member) may
    #[arg(long, value_name = "SPACE")]
    pub space: Option<String>,
    /// The lot or memory
    pub id: u64,
}

/// `cheesedb serve`
#[derive(Debug, Args)]
pub struct ServeArguments {
    /// Where to listen [default: cheesedb.sock in the data folder]
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Connections served at once; one more is refused with an error
    #[arg(long, value_name = "N", default_value_t = cheesedb::server::CONNECTIONS_MAX_DEFAULT,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub connections_max: u32,

    /// Also ship every agent to S3-compatible object storage (see `cheesedb replicate`)
    #[arg(long, value_name = "URL")]
    pub replicate_to: Option<cheesedb::replication::ReplicaLocation>,

    /// With --replicate-to: answer each write only once it is in the object store (slower)
    #[arg(long, requires = "replicate_to")]
    pub wait_for_ship: bool,

    /// How long a client may take to finish a request it started, to read an answer, or to
    /// send the next write of a batch it opened, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = cheesedb::server::CLIENT_TIMEOUT_DEFAULT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    pub client_timeout_ms: u64,
}

/// `cheesedb replicate`
#[derive(Debug, Args)]
pub struct ReplicateArguments {
    /// Where to: s3://BUCKET or s3://BUCKET/PREFIX
    #[arg(long, value_name = "URL")]
    pub to: cheesedb::replication::ReplicaLocation,

    /// Ship everything committed so far, then exit
    #[arg(long, conflicts_with = "status")]
    pub once: bool,

    /// Say how far each agent's replica is behind (after shipping what it lacks), then exit
    #[arg(long)]
    pub status: bool,

    /// Answer each write (through the served store) only once it is in the object store: slower,
    /// by a ship per write or group of writes
    #[arg(long, conflicts_with_all = ["once", "status"])]
    pub wait_for_ship: bool,

    /// The replication lag, in milliseconds, past which the command warns on standard error
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_lag_ms: u64,
}

/// Where agents come back from and go to: `restore` and `follow`.
#[derive(Debug, Args)]
pub struct ReplicaCopy {
    /// Where from: s3://BUCKET or s3://BUCKET/PREFIX
    #[arg(long, value_name = "URL")]
    pub from: cheesedb::replication::ReplicaLocation,

    /// The store folder to bring the agents into (made if missing)
    #[arg(long, value_name = "FOLDER")]
    pub to: PathBuf,

    /// Only this agent
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
}

/// `cheesedb restore`
#[derive(Debug, Args)]
pub struct RestoreArguments {
    /// Where from and to
    #[command(flatten)]
    pub copy: ReplicaCopy,

    /// Restore the agent as it was at this fingerprint (kept from `verify`); needs --agent
    #[arg(long, value_name = "FINGERPRINT", requires = "agent")]
    pub fingerprint: Option<String>,
}

/// `cheesedb follow`
#[derive(Debug, Args)]
pub struct FollowArguments {
    /// Where from and to
    #[command(flatten)]
    pub copy: ReplicaCopy,

    /// Milliseconds between steps
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub interval_ms: u64,

    /// One step, then exit
    #[arg(long)]
    pub once: bool,
}

/// A subcommand that takes only an agent.
#[derive(Debug, Args)]
pub struct AgentOnly {
    /// The agent's name (or its token)
    pub agent: String,
}

/// `cheesedb mcp`.
#[derive(Debug, Args)]
pub struct McpArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Let memories rest only on the legs the model names, not also on what it read
    #[arg(long)]
    pub no_read_tracking: bool,
}

/// A subcommand that takes an agent by name only.
#[derive(Debug, Args)]
pub struct AgentName {
    /// The agent's name
    pub agent: String,
}

/// `cheesedb graph AGENT [--dot]`
#[derive(Debug, Args)]
pub struct GraphArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Print Graphviz DOT instead of text
    #[arg(long)]
    pub dot: bool,
}

/// `cheesedb search AGENT QUERY [--limit N]`
#[derive(Debug, Args)]
pub struct SearchArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Act in this space, as the agent (a member) may
    #[arg(long, value_name = "SPACE")]
    pub space: Option<String>,
    /// The words to search for
    #[arg(allow_hyphen_values = true)]
    pub query: String,
    /// The most hits to show
    #[arg(long, value_name = "N", default_value_t = crate::memory_search::HITS_DEFAULT, value_parser = clap::value_parser!(u64).range(1..=HITS_MAX))]
    pub limit: u64,
    /// Leave out lots and memories of low trust (see trust.toml)
    #[arg(long)]
    pub exclude_low_trust: bool,
}

/// `cheesedb list`
#[derive(Debug, Args)]
pub struct ListArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Act in this space, as the agent (a member) may
    #[arg(long, value_name = "SPACE")]
    pub space: Option<String>,
    /// Leave out lots and memories of low trust (see trust.toml)
    #[arg(long)]
    pub exclude_low_trust: bool,
}

/// The most hits one search may ask for.
pub const HITS_MAX: u64 = 10_000;

/// `cheesedb find TEXT`
#[derive(Debug, Args)]
pub struct FindArguments {
    /// The text to look for, byte for byte
    #[arg(allow_hyphen_values = true)]
    pub text: String,
}

/// `cheesedb verify AGENT [--expect FINGERPRINT]`
#[derive(Debug, Args)]
pub struct VerifyArguments {
    /// The agent's name (or its token)
    pub agent: String,
    /// Act in this space, as the agent (a member) may
    #[arg(long, value_name = "SPACE")]
    pub space: Option<String>,
    /// A fingerprint kept earlier: fail unless the history still passes through it
    #[arg(long, value_name = "FINGERPRINT")]
    pub expect: Option<String>,
}

/// `cheesedb demo`
#[derive(Debug, Args)]
pub struct DemoArguments {
    /// Use the scripted model even when llm.conf names a server
    #[arg(long)]
    pub scripted: bool,
    /// Keep the demo's temporary data folder and print where it is
    #[arg(long)]
    pub keep: bool,
}
