//! The `cheesedb` command's integration tests, one binary with a module per topic: each runs the
//! built command (or a memory server, MCP, SeaweedFS) as a user would. One topic runs alone with
//! `cargo test -p cheesedb-cli --test integration TOPIC::`.

// Most server tests speak through `cheesedb::Client` and `ClientAgent`, the client types that
// programs used before `Store::connect`: deprecated, they must go on working as they did.
#![allow(deprecated)]

mod common;

mod access_log_files;
mod agents;
mod demo;
mod embeddings;
mod encrypted_agents;
mod errors;
mod find;
mod full_disk;
mod graph;
mod help;
mod hostile_text;
mod integrity;
mod io_backend;
mod lots_and_memories;
mod mcp_concurrency;
mod mcp_protocol;
mod mcp_search;
mod mcp_tracking;
mod one_handle;
mod read_only;
mod recall;
mod replication;
mod search;
mod serve_access_log;
mod serve_command;
mod serve_durability;
mod serve_hostile_bytes;
mod serve_mixed_clients;
mod serve_read_tracking;
mod serve_round_trip;
mod serve_search_page;
mod serve_socket;
mod serve_spaces;
mod serve_staged_batch;
mod serve_started_while_waiting;
mod serve_stop;
mod serve_tokens;
mod spaces;
mod trust;
