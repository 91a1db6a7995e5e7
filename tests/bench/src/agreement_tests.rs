//! Proof that the SQLite side computes the same recalls as cheesedb, so the comparison times the
//! same work: random graphs, random recalls in both modes, identical removed ids every time.

use std::path::Path;

use cheesedb::{Io, Mode, Removal};
use fastrand::Rng;

use crate::cheesedb_side::{CheesedbSide, OpenMeasurement};
use crate::engine::Engine;
use crate::folder::BenchFolder;
use crate::size::SMOKE;
use crate::sqlite_side::SqliteSide;
use crate::workload::{PlannedNode, Workload};

fn both_engines(folder: &BenchFolder) -> (CheesedbSide, SqliteSide) {
    let cheesedb =
        CheesedbSide::create(&folder.fresh("cheesedb", 1).unwrap(), Io::Std, OpenMeasurement::InThisProcess).unwrap();
    let sqlite = SqliteSide::create(&folder.fresh("sqlite", 1).unwrap()).unwrap();
    (cheesedb, sqlite)
}

/// Lots and memories whose legs name any earlier node: deep chains, shared parents, several
/// legs, so Fair and Strict differ often.
fn random_graph(random: &mut Rng, lots: u64, memories: u64) -> Vec<PlannedNode> {
    let mut nodes = Vec::new();
    let total = lots + memories;
    for id in 1..=total {
        let is_lot = id == 1 || random.u64(0..total) < lots;
        if is_lot {
            nodes.push(PlannedNode::Lot { label: "source", content: format!("lot {id}").into_bytes() });
            continue;
        }
        let legs = (0..random.usize(1..=3))
            .map(|_| {
                let mut leg: Vec<u64> = (0..random.usize(1..=3)).map(|_| random.u64(1..id)).collect();
                leg.sort_unstable();
                leg.dedup();
                leg
            })
            .collect();
        nodes.push(PlannedNode::Memory { content: format!("memory {id}").into_bytes(), legs });
    }
    nodes
}

fn write_to_both(cheesedb: &mut CheesedbSide, sqlite: &mut SqliteSide, nodes: &[PlannedNode]) {
    for chunk in nodes.chunks(500) {
        let from_cheesedb = cheesedb.write_batch(chunk).unwrap();
        assert_eq!(sqlite.write_batch(chunk).unwrap(), from_cheesedb);
    }
}

#[test]
fn both_engines_remove_the_same_ids_on_random_graphs() {
    for seed in 1..=6 {
        let mut random = Rng::with_seed(seed);
        let folder = BenchFolder::new(None).unwrap();
        let (mut cheesedb, mut sqlite) = both_engines(&folder);
        let nodes = random_graph(&mut random, 300, 2_000);
        write_to_both(&mut cheesedb, &mut sqlite, &nodes);
        let mut recalls_done = 0;
        let mut modes_seen = [false; 2];
        for _ in 0..300 {
            // Mostly alive memories, so that the graph is not emptied by the first few recalls
            // of old lots; sometimes any id, dead ones included.
            let alive = cheesedb.alive_memories().unwrap();
            let id = match random.u8(0..4) {
                0 => random.u64(1..=nodes.len() as u64),
                _ if alive.is_empty() => break,
                _ => alive[random.usize(..alive.len())],
            };
            let mode = if random.bool() { Mode::Fair } else { Mode::Strict };
            let Ok(preview) = cheesedb.preview_recall(id, mode) else {
                // Already recalled: SQLite must refuse it too.
                assert!(sqlite.preview_recall(id, mode).is_err(), "seed {seed}: SQLite recalled dead {id}");
                continue;
            };
            assert_eq!(sqlite.preview_recall(id, mode).unwrap(), preview, "seed {seed}: preview of {id} ({mode:?})");
            let removal = if random.u8(0..8) == 0 { Removal::Erase } else { Removal::Untrusted };
            let removed = cheesedb.recall(id, mode, removal).unwrap();
            assert_eq!(removed, preview);
            assert_eq!(sqlite.recall(id, mode, removal).unwrap(), removed, "seed {seed}: recall of {id} ({mode:?})");
            recalls_done += 1;
            modes_seen[usize::from(mode == Mode::Strict)] |= !removed.is_empty();
        }
        assert!(recalls_done >= 20, "seed {seed}: too few recalls ({recalls_done}) to prove anything");
        assert_eq!(modes_seen, [true, true], "seed {seed}: both modes must remove something");
        assert_eq!(sqlite.alive_memories().unwrap(), cheesedb.alive_memories().unwrap(), "seed {seed}");
    }
}

#[test]
fn fair_keeps_a_memory_with_an_untouched_leg_in_sqlite_too() {
    // The example of the specification: lots A, B, C; M1 = {A} or {B}; M2 = {C}; M3 = {M1, M2}.
    let lot = |name: &str| PlannedNode::Lot { label: "source", content: name.as_bytes().to_vec() };
    let memory = |legs: Vec<Vec<u64>>| PlannedNode::Memory { content: b"memory".to_vec(), legs };
    let nodes = vec![
        lot("A"),
        lot("B"),
        lot("C"),
        memory(vec![vec![1], vec![2]]),
        memory(vec![vec![3]]),
        memory(vec![vec![4, 5]]),
    ];
    let folder = BenchFolder::new(None).unwrap();
    let (mut cheesedb, mut sqlite) = both_engines(&folder);
    write_to_both(&mut cheesedb, &mut sqlite, &nodes);
    assert_eq!(sqlite.preview_recall(3, Mode::Fair).unwrap(), vec![5, 6]);
    assert_eq!(
        sqlite.recall(3, Mode::Fair, Removal::Untrusted).unwrap(),
        cheesedb.recall(3, Mode::Fair, Removal::Untrusted).unwrap()
    );
    assert_eq!(sqlite.recall(1, Mode::Strict, Removal::Untrusted).unwrap(), vec![4]);
    assert_eq!(cheesedb.recall(1, Mode::Strict, Removal::Untrusted).unwrap(), vec![4]);
}

#[test]
fn both_engines_agree_on_the_benchmark_families() {
    let mut workload = Workload::new(SMOKE.shape, 11);
    let folder = BenchFolder::new(None).unwrap();
    let (mut cheesedb, mut sqlite) = both_engines(&folder);
    loop {
        let batch = workload.next_setup_batch(300);
        if batch.is_empty() {
            break;
        }
        write_to_both(&mut cheesedb, &mut sqlite, &batch);
    }
    let modes = [Mode::Fair, Mode::Strict, Mode::Fair, Mode::Strict];
    for (family, mode) in workload.families().into_iter().zip(modes) {
        let removed = cheesedb.recall(family.root, mode, Removal::Untrusted).unwrap();
        let expected = if mode == Mode::Fair { family.members } else { family.members + family.witnesses };
        assert_eq!(removed.len() as u64, expected);
        assert_eq!(sqlite.recall(family.root, mode, Removal::Untrusted).unwrap(), removed);
    }
}

fn folder_contains(folder: &Path, needle: &[u8]) -> bool {
    walk(folder).iter().any(|file| memchr::memmem::find(&std::fs::read(file).unwrap(), needle).is_some())
}

fn walk(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn sqlite_erase_leaves_the_text_in_no_file() {
    let folder = BenchFolder::new(None).unwrap();
    let sqlite_folder = folder.fresh("sqlite", 1).unwrap();
    let mut sqlite = SqliteSide::create(&sqlite_folder).unwrap();
    let secret = b"the secret that must go: 7d1c".to_vec();
    let nodes = vec![
        PlannedNode::Lot { label: "source", content: b"keep this source".to_vec() },
        PlannedNode::Lot { label: "source", content: secret.clone() },
        PlannedNode::Memory { content: b"learned from the secret, also going".to_vec(), legs: vec![vec![2]] },
        PlannedNode::Memory { content: b"kept memory".to_vec(), legs: vec![vec![1]] },
    ];
    for node in &nodes {
        sqlite.write_one(node).unwrap();
    }
    assert!(folder_contains(&sqlite_folder, &secret));
    assert_eq!(sqlite.recall(2, Mode::Fair, Removal::Erase).unwrap(), vec![3]);
    assert!(!folder_contains(&sqlite_folder, &secret), "the erased lot is still in a file");
    assert!(!folder_contains(&sqlite_folder, b"learned from the secret"), "the erased memory is still in a file");
    assert!(folder_contains(&sqlite_folder, b"kept memory"));
}
