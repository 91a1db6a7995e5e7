//! Read tracking and trust through the server: a session's reads become parents of its next
//! memory, listing does not count, limits refuse rather than drop; trust follows trust.toml.

use crate::common;

use cheesedb::{Error, Id, Leg, Limit, Mode, Removal, TrustLevel};
use common::server_process::ServerProcess;

#[test]
fn reads_of_a_session_become_parents_of_its_next_memory() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    let writer = client.open_agent(&token).unwrap();
    let poisoned = writer.add_lot("web_page", b"the moon is cheese").unwrap();
    let declared = writer.add_lot("user_message", b"tell me about the moon").unwrap();
    let listed = writer.add_lot("note", b"only listed").unwrap();

    let model = client.open_agent(&token).unwrap();
    // Off by default: nothing is added.
    model.get(poisoned).unwrap();
    let untracked = model.remember(b"first", &[Leg::from([declared])]).unwrap();
    assert!(model.get(untracked).unwrap().tracked_parents().is_empty());

    model.track_reads(true).unwrap();
    model.get(poisoned).unwrap();
    assert_eq!(model.lots().unwrap().len(), 3, "listing is not reading");
    let hits = model.search("moon", 10).unwrap();
    assert!(hits.iter().any(|hit| hit.id == poisoned));
    let memory = model.remember(b"the moon is edible", &[Leg::from([declared])]).unwrap();
    let node = model.get(memory).unwrap();
    assert!(node.tracked_parents().contains(&poisoned), "{node:?}");
    assert!(!node.tracked_parents().contains(&listed));
    // The reads were forgotten with the write; reads of another session never counted.
    writer.get(listed).unwrap();
    let next = model.remember(b"next", &[Leg::from([declared])]).unwrap();
    assert_eq!(model.get(next).unwrap().tracked_parents(), &[memory], "only the get of the memory above");

    // Recalling the poisoned source takes the memory written after reading it.
    let removed = writer.recall(poisoned, Mode::Fair, Removal::Untrusted).unwrap();
    assert!(removed.contains(&memory), "{removed:?}");

    // A read recalled since is refused, not dropped; off forgets the reads.
    model.track_reads(false).unwrap();
    model.track_reads(true).unwrap();
    model.get(declared).unwrap();
    let fresh = writer.add_lot("note", b"fresh").unwrap();
    model.get(fresh).unwrap();
    writer.recall(fresh, Mode::Fair, Removal::Untrusted).unwrap();
    assert_eq!(model.remember(b"x", &[Leg::from([declared])]), Err(Error::DeadParent { id: fresh }));
    model.track_reads(false).unwrap();
    model.remember(b"x", &[Leg::from([declared])]).unwrap();
    server.stop();
}

#[test]
fn too_many_reads_refuse_the_write() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let agent = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();
    let ids: Vec<Id> = agent
        .batch(|batch| (0..70).map(|index| batch.add_lot("note", format!("lot {index}").as_bytes())).collect())
        .unwrap();
    agent.track_reads(true).unwrap();
    for id in &ids {
        agent.get(*id).unwrap();
    }
    let refused = agent.remember(b"x", &[Leg::from([ids[0]])]);
    assert!(matches!(refused, Err(Error::LimitExceeded { what: Limit::ReadSetIds, .. })), "{refused:?}");
    // A batch uses the reads too.
    let refused = agent.batch(|batch| batch.remember(b"x", &[Leg::from([ids[0]])]));
    assert!(matches!(refused, Err(Error::LimitExceeded { .. })), "{refused:?}");
    server.stop();
}

#[test]
fn trust_follows_the_rules_of_trust_toml() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("trust.toml"), "[labels]\nuser_message = \"high\"\nweb_page = \"low\"\n")
        .unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let agent = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();
    let user = agent.add_lot("user_message", b"I live in Pune").unwrap();
    let web = agent.add_lot("web_page", b"lives in Pune").unwrap();
    let note = agent.add_lot("note", b"Pune").unwrap();
    assert_eq!(agent.trust(user).unwrap(), TrustLevel::High);
    assert_eq!(agent.trust(web).unwrap(), TrustLevel::Low);
    assert_eq!(agent.trust(note).unwrap(), TrustLevel::Normal);
    let either = agent.remember(b"lives in Pune", &[Leg::from([user]), Leg::from([web])]).unwrap();
    assert_eq!(agent.trust(either).unwrap(), TrustLevel::High);
    let both = agent.remember(b"lives in Pune", &[Leg::from([user, web])]).unwrap();
    assert_eq!(agent.trust(both).unwrap(), TrustLevel::Low);
    assert_eq!(agent.trust(Id::from(99)), Err(Error::UnknownId { id: Id::from(99) }));
    server.stop();
}

#[test]
fn a_broken_trust_toml_stops_the_server_from_starting() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("trust.toml"), "[labels]\nweb_page = \"lowish\"\n").unwrap();
    let refused = ServerProcess::try_start(folder.path(), &[]).err().unwrap();
    assert!(refused.contains("trust.toml"), "{refused}");
    common::assert_one_clean_line(&refused);
}

/// Stages a memory on `source` and lots whose sizes, as each step counts them, fill the
/// batch's limit to just under it: every step passes, and the commit, whose records are larger
/// by their headers, passes the limit and fails with nothing written.
fn stage_a_batch_too_large_to_commit(agent: &cheesedb::ClientAgent, source: Id) {
    use cheesedb::limits::{BATCH_MAX_BYTES, CONTENT_MAX_BYTES};
    agent.stage(|batch| batch.remember(b"m", &[Leg::from([source])])).unwrap();
    let whole = vec![b'x'; CONTENT_MAX_BYTES - 1];
    for _ in 0..3 {
        agent.stage(|batch| batch.add_lot("w", &whole)).unwrap();
    }
    // What the memory's step counted (content, one leg of one parent, at most one tracked
    // read) and a margin smaller than the headers of five records.
    let counted_before = 3 * CONTENT_MAX_BYTES + 1 + 10 + 8 + 2;
    let last = vec![b'y'; BATCH_MAX_BYTES - counted_before - 1 - 32];
    agent.stage(|batch| batch.add_lot("w", &last)).unwrap();
    let failed = agent.commit_staged();
    assert!(
        matches!(failed, Err(Error::LimitExceeded { what: Limit::BatchBytes, .. })),
        "the commit passes the batch limit: {failed:?}"
    );
}

#[test]
fn a_failed_staged_commit_keeps_the_reads_for_the_next_memory() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    let model = client.open_agent(&token).unwrap();
    let declared = model.add_lot("user_message", b"declared").unwrap();
    let read = model.add_lot("web_page", b"read before the batch").unwrap();
    model.track_reads(true).unwrap();
    model.get(read).unwrap();

    stage_a_batch_too_large_to_commit(&model, declared);
    assert_eq!(model.lots().unwrap(), [declared, read], "nothing of the batch was written");
    // Nothing was written, so nothing used the read: the next memory still depends on it.
    let memory = model.remember(b"after the failed batch", &[Leg::from([declared])]).unwrap();
    assert_eq!(model.get(memory).unwrap().tracked_parents(), &[read]);
    // Written, the reads are forgotten.
    let next = model.remember(b"next", &[Leg::from([declared])]).unwrap();
    assert_eq!(model.get(next).unwrap().tracked_parents(), &[memory], "only the get of the memory above");
    server.stop();
}

#[test]
fn a_failed_staged_commit_without_tracking_adds_no_parent() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    let model = client.open_agent(&token).unwrap();
    let declared = model.add_lot("user_message", b"declared").unwrap();
    let read = model.add_lot("web_page", b"read, untracked").unwrap();
    model.get(read).unwrap();

    stage_a_batch_too_large_to_commit(&model, declared);
    assert_eq!(model.lots().unwrap(), [declared, read], "nothing of the batch was written");
    let memory = model.remember(b"after the failed batch", &[Leg::from([declared])]).unwrap();
    assert!(model.get(memory).unwrap().tracked_parents().is_empty(), "untracked reads are never parents");
    // Tracking turned on after the failure starts from nothing, not from the reads before.
    model.track_reads(true).unwrap();
    let next = model.remember(b"next", &[Leg::from([declared])]).unwrap();
    assert!(model.get(next).unwrap().tracked_parents().is_empty());
    server.stop();
}
