//! Any bytes as an agent's only segment: opening, reading and verifying never panic.
#![no_main]

use cheesedb_core::log::names::{agent_folder, segment_path};
use cheesedb_core::{Id, Options, StoreEngine};
use cheesedb_sim::storage::SimStorage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let storage = SimStorage::without_faults(1);
    let options = Options::default().segment_size_max_bytes(4096).preallocate_bytes(0);
    let Ok(mut store) = StoreEngine::open(storage.clone(), options.clone()) else { return };
    let Ok(token) = store.create_agent("fuzzed") else { return };
    let Ok(key) = store.authenticate(&token) else { return };
    let path = segment_path(&agent_folder(key.number()), 1);
    storage.replace_file_bytes(&path, bytes);
    drop(store);
    let Ok(store) = StoreEngine::open(storage.clone(), options) else { return };
    if let Ok(mut agent) = store.open_agent(key) {
        for id in 1..=agent.node_count().min(1000) + 1 {
            let _ = agent.get(Id::from(id));
        }
        let _ = agent.verify();
        let _ = agent.add_lot("after", b"more");
        let _ = agent.compact();
    }
});
