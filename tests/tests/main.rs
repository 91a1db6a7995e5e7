//! The integration tests of cheesedb, one binary with a module per topic: behaviour through the
//! public API, recovery, erasure, damage, isolation. One binary links the stack once; a topic
//! runs alone with `cargo test -p cheesedb-tests --test integration TOPIC::`.

mod agent_delete;
mod auto_compaction;
mod bounded_files;
mod damage;
mod damage_matrix;
mod encrypt_agent;
mod encryption;
mod encryption_canary;
mod encryption_tamper;
mod erase_copies;
mod erase_journal;
mod erasure;
mod failures;
mod folder_permissions;
mod full_disk;
mod group_commit;
mod hiding;
mod identical_files;
mod isolation;
mod key_erase_crash;
mod limits;
mod links;
mod lock;
mod model;
mod outcome_unknown;
mod read_only;
mod read_tracking;
mod repeated_recall;
mod search;
mod search_build;
mod search_page;
mod semantics;
mod silent_edit;
mod snapshots;
mod spaces;
mod staged_batch;
mod tokens;
mod trust;
mod uring_used;
mod verify;
