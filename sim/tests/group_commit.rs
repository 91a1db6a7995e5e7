//! The `cheesedb` crate's threads and group commit over the simulated disk, crashes and failed
//! syncs included, for a fixed set of seeds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use cheesedb_sim::group_commit::{run_group_commit_campaign, GroupCommitConfig};

#[test]
fn writers_sharing_group_commits_lose_nothing_acknowledged_through_crashes() {
    let stats = run_group_commit_campaign(0, 24, GroupCommitConfig::default())
        .unwrap_or_else(|(seed, message)| panic!("group commit seed {seed}: {message}"));
    eprintln!("{stats:?}");
    assert!(stats.acknowledged > 500, "{stats:?}");
    assert!(stats.crashes > 50, "{stats:?}");
    assert!(stats.failed > 50, "{stats:?}");
    assert!(stats.syncs_while_writing < stats.acknowledged, "nothing was grouped: {stats:?}");
}
