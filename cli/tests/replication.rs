//! Replication against a real SeaweedFS on loopback: `replicate`, `restore` and `follow` end to
//! end, erasures shipped, tampering caught, two primaries fenced, a killed primary and a
//! restarted object store losing nothing shipped.

mod common;

use cheesedb::replication::Bucket;
use common::seaweed::Seaweed;
use common::server_process::ServerProcess;
use common::Cli;
use serde_json::Value;

/// A data folder configured for `server`.
fn configured(server: &Seaweed) -> Cli {
    let cli = Cli::new();
    server.configure(cli.folder());
    cli
}

fn location(server: &Seaweed, prefix: &str) -> String {
    format!("s3://{}/{prefix}", server.bucket)
}

fn fingerprint(cli: &Cli, agent: &str) -> String {
    cli.json(&["verify", agent])["fingerprint"].as_str().unwrap().to_owned()
}

/// Restores `prefix` into a new data folder that shares `source`'s saved tokens.
fn restored(server: &Seaweed, source: &Cli, prefix: &str, extra: &[&str]) -> Cli {
    let copy = configured(server);
    let (from, folder) = (location(server, prefix), copy.folder().to_str().unwrap().to_owned());
    let mut arguments = vec!["restore", "--from", &from, "--to", &folder];
    arguments.extend_from_slice(extra);
    copy.run(&arguments).ok();
    std::fs::copy(source.folder().join("tokens"), copy.folder().join("tokens")).unwrap();
    copy
}

/// Every object of the bucket, read through the S3 API.
fn objects(server: &Seaweed) -> Vec<(String, Vec<u8>)> {
    let mut bucket = server.bucket();
    let keys = bucket.list("").unwrap();
    keys.into_iter().filter_map(|key| bucket.get(&key).unwrap().map(|(bytes, _)| (key, bytes))).collect()
}

fn holds(bytes: &[u8], needle: &str) -> bool {
    bytes.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[test]
fn a_restore_gives_the_same_fingerprints_and_contents_now_and_at_a_kept_point() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    primary.create_agent("alice");
    primary.json(&["agent", "create", "bob", "--encrypted"]);
    let lot = primary.lot("alice", "web", "the user lives in Pune");
    let early = fingerprint(&primary, "alice");
    let memory = primary.remember("alice", "lives in Pune", &[&lot.to_string()]);
    primary.lot("bob", "chat", "bob likes tea");
    let shipped = primary.json(&["replicate", "--to", &location(&server, "one"), "--once"]);
    assert_eq!(shipped["shipped"]["agents"], 2, "{shipped}");
    let copy = restored(&server, &primary, "one", &[]);
    for agent in ["alice", "bob"] {
        assert_eq!(fingerprint(&copy, agent), fingerprint(&primary, agent), "{agent}");
    }
    assert_eq!(copy.json(&["get", "alice", &memory.to_string()])["content"], "lives in Pune");
    assert_eq!(copy.json(&["get", "bob", "1"])["content"], "bob likes tea");
    // Writes after the restore go on where the original stopped.
    assert_eq!(copy.lot("alice", "web", "more"), memory + 1);

    let then = restored(&server, &primary, "one", &["--agent", "alice", "--fingerprint", &early]);
    assert_eq!(fingerprint(&then, "alice"), early);
    assert_eq!(then.json(&["list", "alice"])["memories"], Value::Array(vec![]));
}

#[test]
fn an_erasure_shipped_leaves_its_text_in_no_object() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    primary.create_agent("alice");
    let lot = primary.lot("alice", "web", "canary-9f2c the user lives in Pune");
    primary.remember("alice", "canary-9f2c memory", &[&lot.to_string()]);
    primary.lot("alice", "web", "kept text");
    primary.json(&["replicate", "--to", &location(&server, "erase"), "--once"]);
    assert!(objects(&server).iter().any(|(_, bytes)| holds(bytes, "canary-9f2c")), "shipped first");
    let follower = configured(&server);
    let follower_folder = follower.folder().to_str().unwrap().to_owned();
    follower.run(&["follow", "--from", &location(&server, "erase"), "--to", &follower_folder, "--once"]).ok();

    primary.json(&["recall", "alice", &lot.to_string(), "--erase"]);
    let shipped = primary.json(&["replicate", "--to", &location(&server, "erase"), "--once"]);
    assert_eq!(shipped["agents"][0]["deletions_pending"], 0, "{shipped}");
    for (key, bytes) in objects(&server) {
        assert!(!holds(&bytes, "canary-9f2c"), "{key} still holds erased text");
    }
    assert!(objects(&server).iter().any(|(_, bytes)| holds(bytes, "kept text")));
    follower.run(&["follow", "--from", &location(&server, "erase"), "--to", &follower_folder, "--once"]).ok();
    std::fs::copy(primary.folder().join("tokens"), follower.folder().join("tokens")).unwrap();
    assert_eq!(fingerprint(&follower, "alice"), fingerprint(&primary, "alice"));
    let in_files = common::files_below(follower.folder())
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .any(|bytes| holds(&bytes, "canary-9f2c"));
    assert!(!in_files, "the follower applied the erasure");
}

#[test]
fn an_encrypted_agents_erasure_ships_its_destroyed_keys_and_no_sealed_text_is_readable() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    primary.json(&["agent", "create", "bob", "--encrypted"]);
    let lot = primary.lot("bob", "chat", "canary-7d1e bob's secret");
    primary.lot("bob", "chat", "bob's kept text");
    let url = location(&server, "sealed");
    primary.json(&["replicate", "--to", &url, "--once"]);
    let key_pieces_before: Vec<String> =
        objects(&server).into_iter().map(|(key, _)| key).filter(|key| key.contains("/keys/")).collect();
    assert!(!key_pieces_before.is_empty(), "the key table is shipped");
    assert!(objects(&server).iter().all(|(_, bytes)| !holds(bytes, "canary-7d1e")), "sealed from the start");

    primary.json(&["recall", "bob", &lot.to_string(), "--erase"]);
    let shipped = primary.json(&["replicate", "--to", &url, "--once"]);
    assert_eq!(shipped["agents"][0]["deletions_pending"], 0, "{shipped}");
    let keys_now: Vec<String> = objects(&server).into_iter().map(|(key, _)| key).collect();
    for key in &key_pieces_before {
        assert!(!keys_now.contains(key), "{key}: a key table piece holding the destroyed key is gone");
    }
    let copy = restored(&server, &primary, "sealed", &[]);
    assert_eq!(fingerprint(&copy, "bob"), fingerprint(&primary, "bob"));
    assert_eq!(copy.json(&["get", "bob", &lot.to_string()])["content"], Value::Null);
    assert_eq!(copy.json(&["get", "bob", &(lot + 1).to_string()])["content"], "bob's kept text");
}

#[test]
fn a_follower_stops_with_corrupt_on_a_rewritten_object_or_a_head_gone_backwards() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    primary.create_agent("alice");
    primary.lot("alice", "web", "first");
    let url = location(&server, "tamper");
    primary.json(&["replicate", "--to", &url, "--once"]);
    let follower = configured(&server);
    let folder = follower.folder().to_str().unwrap().to_owned();
    follower.run(&["follow", "--from", &url, "--to", &folder, "--once"]).ok();
    let mut bucket = server.bucket();

    primary.lot("alice", "web", "second");
    primary.json(&["replicate", "--to", &url, "--once"]);
    // Rewrite the newest piece in place: same key, other bytes.
    let pieces: Vec<String> = bucket.list("").unwrap().into_iter().filter(|key| !key.ends_with("/head")).collect();
    for key in &pieces {
        let (mut bytes, tag) = bucket.get(key).unwrap().unwrap();
        if holds(&bytes, "second") {
            let at = bytes.windows(6).position(|window| window == b"second").unwrap();
            bytes[at] = b'S';
            bucket.put_replacing(key, &bytes, &tag).unwrap();
        }
    }
    let refused = follower.run(&["follow", "--from", &url, "--to", &folder, "--once"]);
    let stderr = refused.fails_with(3);
    assert!(stderr.contains("replica piece differs"), "{stderr}");

    // A head put back to an older version goes backwards.
    let url = location(&server, "backwards");
    primary.json(&["replicate", "--to", &url, "--once"]);
    let older =
        objects(&server).into_iter().find(|(key, _)| key.starts_with("backwards/") && key.ends_with("/head")).unwrap();
    primary.lot("alice", "web", "third");
    primary.json(&["replicate", "--to", &url, "--once"]);
    let fresh = configured(&server);
    let fresh_folder = fresh.folder().to_str().unwrap().to_owned();
    fresh.run(&["follow", "--from", &url, "--to", &fresh_folder, "--once"]).ok();
    let (_, tag) = bucket.get(&older.0).unwrap().unwrap();
    bucket.put_replacing(&older.0, &older.1, &tag).unwrap();
    let refused = fresh.run(&["follow", "--from", &url, "--to", &fresh_folder, "--once"]);
    let stderr = refused.fails_with(3);
    assert!(stderr.contains("less history") && stderr.contains("/head"), "{stderr}");
}

#[test]
fn a_second_primary_on_the_same_prefix_is_fenced() {
    let Some(server) = Seaweed::start() else { return };
    let url = location(&server, "shared");
    let first = configured(&server);
    first.create_agent("alice");
    first.lot("alice", "web", "from the first store");
    first.json(&["replicate", "--to", &url, "--once"]);
    let second = configured(&server);
    second.create_agent("alice");
    second.lot("alice", "web", "from the second store");
    let refused = second.run(&["replicate", "--to", &url, "--once"]);
    let stderr = refused.fails_with(2);
    assert!(stderr.contains("another store replicates it"), "{stderr}");

    // A copy restored from the first, written to apart from it, is fenced too once it differs.
    let copy = restored(&server, &first, "shared", &[]);
    copy.lot("alice", "web", "the copy's own");
    first.lot("alice", "web", "the first's own");
    first.json(&["replicate", "--to", &url, "--once"]);
    let diverged = copy.run(&["replicate", "--to", &url, "--once"]);
    assert!(diverged.fails_with(2).contains("another store replicates it"));
    let check = restored(&server, &first, "shared", &[]);
    assert_eq!(fingerprint(&check, "alice"), fingerprint(&first, "alice"));
}

#[test]
fn a_killed_primary_and_a_restarted_object_store_lose_nothing_shipped() {
    let Some(mut server) = Seaweed::start() else { return };
    let url = location(&server, "killed");
    let primary = configured(&server);
    primary.create_agent("alice");
    // A head from the start: a primary killed before its first pass leaves nothing to restore.
    primary.json(&["replicate", "--to", &url, "--once"]);
    for round in 0..3u64 {
        let serving = ServerProcess::start(primary.folder(), &["--replicate-to", &url]);
        let writes = 20 + fastrand::u64(..40);
        for index in 0..writes {
            primary.lot("alice", "web", &format!("round {round} write {index}"));
        }
        std::thread::sleep(std::time::Duration::from_millis(fastrand::u64(..600)));
        serving.kill();
        if round == 1 {
            server.restart();
        }
        // What the bucket holds is a prefix of the primary's history, and restores whole.
        let copy = restored(&server, &primary, "killed", &[]);
        let shipped = fingerprint(&copy, "alice");
        let records: u64 = shipped.split('-').next().unwrap().parse().unwrap();
        let point = restored(&server, &primary, "killed", &["--agent", "alice", "--fingerprint", &shipped]);
        assert_eq!(fingerprint(&point, "alice"), shipped);
        let primary_records: u64 = fingerprint(&primary, "alice").split('-').next().unwrap().parse().unwrap();
        assert!(records <= primary_records);
    }
    primary.json(&["replicate", "--to", &url, "--once"]);
    let copy = restored(&server, &primary, "killed", &[]);
    assert_eq!(fingerprint(&copy, "alice"), fingerprint(&primary, "alice"));
    assert_eq!(copy.json(&["list", "alice"])["lots"], primary.json(&["list", "alice"])["lots"]);
}

#[test]
fn with_wait_for_ship_a_write_the_object_store_misses_is_reported_stored_here_not_shipped() {
    let Some(mut server) = Seaweed::start() else { return };
    let url = location(&server, "stopped");
    let primary = configured(&server);
    primary.create_agent("alice");
    let serving = ServerProcess::start(primary.folder(), &["--replicate-to", &url, "--wait-for-ship"]);
    primary.lot("alice", "web", "shipped at once");

    server.stop();
    let run = primary.run(&["lot", "alice", "web", "kept here while the object store is down"]);
    let stderr = run.fails_with(7);
    assert!(stderr.contains("stored here as id 2 but not yet in the object store"), "{stderr}");
    assert!(stderr.contains("do not write it again"), "{stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    let library = serving.client().open_agent(&saved_token(&primary, "alice")).unwrap().add_lot("web", b"again");
    assert!(
        matches!(library, Err(cheesedb::Error::StoredNotShipped { id: Some(id), .. }) if id == cheesedb::Id::from(3)),
        "{library:?}"
    );
    let kept = primary.json(&["get", "alice", "2"]);
    assert_eq!(kept["content"], "kept here while the object store is down", "stored here: {kept}");

    // Back, the object store gets it from the next pass: the next write is answered once shipped
    // and the replica holds all of them.
    server.restart();
    primary.lot("alice", "web", "after the object store came back");
    let copy = restored(&server, &primary, "stopped", &[]);
    assert_eq!(fingerprint(&copy, "alice"), fingerprint(&primary, "alice"));
    assert_eq!(copy.json(&["get", "alice", "2"])["content"], "kept here while the object store is down");
    serving.stop();
}

/// The token `cli`'s tokens file holds for `agent`.
fn saved_token(cli: &Cli, agent: &str) -> cheesedb::Token {
    let tokens: Value = serde_json::from_str(&std::fs::read_to_string(cli.folder().join("tokens")).unwrap()).unwrap();
    tokens[agent].as_str().unwrap().parse().unwrap()
}

#[test]
fn with_wait_for_ship_a_write_is_in_the_bucket_when_it_is_answered() {
    let Some(server) = Seaweed::start() else { return };
    let url = location(&server, "waiting");
    let primary = configured(&server);
    primary.create_agent("alice");
    let serving = ServerProcess::start(primary.folder(), &["--replicate-to", &url, "--wait-for-ship"]);
    for index in 0..3 {
        primary.lot("alice", "web", &format!("write {index}"));
        let copy = restored(&server, &primary, "waiting", &[]);
        assert_eq!(fingerprint(&copy, "alice"), fingerprint(&primary, "alice"), "after write {index}");
    }
    serving.stop();
}
