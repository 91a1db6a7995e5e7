//! Replication against a real SeaweedFS on loopback: `replicate`, `restore` and `follow` end to
//! end, erasures shipped (and gone from a follower's files), tampering caught, two primaries
//! fenced, a killed primary and a restarted object store losing nothing shipped, an object
//! store that lies in its LIST answers (through a proxy) losing nothing of anyone else, and a
//! head that grants another agent's token refused.

use crate::common;

use cheesedb::replication::{head_key, piece_key, Bucket, Owner, ReplicaHead, ReplicaPrefix};
use common::lying_proxy::LyingProxy;
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
    // Each agent's primary fingerprint is what its files hold, not a zero before the first ship.
    for status in shipped["agents"].as_array().unwrap() {
        let agent = status["agent"].as_str().unwrap();
        assert_eq!(status["primary"], fingerprint(&primary, agent), "{status}");
        assert_eq!(status["shipped"], status["primary"], "{status}");
    }
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

/// Objects that belong to no replica of the primary: another tenant's key, a key inside the
/// agent's own folder of no shape a shipper writes, another prefix's replica and another
/// agent's piece in the same prefix.
fn foreign_objects(server: &Seaweed, prefix: &str) -> Vec<String> {
    let replicas = ReplicaPrefix::new(prefix);
    let other_agents_piece = head_key(&replicas, Owner::agent("someone-else"))
        .replace("/head", "/keys/0000000000000000-0000000000000040-0000000000000001");
    let keys = vec![
        String::from("victim/keep-me"),
        format!("{}keep-me", head_key(&replicas, Owner::agent("alice")).trim_end_matches("head")),
        head_key(&ReplicaPrefix::new("other-store"), Owner::agent("alice")),
        other_agents_piece,
    ];
    let mut bucket = server.bucket();
    for key in &keys {
        bucket.put_new(key, b"not yours").unwrap();
    }
    keys
}

fn assert_still_there(server: &Seaweed, keys: &[String]) {
    let mut bucket = server.bucket();
    for key in keys {
        assert_eq!(bucket.get(key).unwrap().map(|(bytes, _)| bytes), Some(b"not yours".to_vec()), "{key} was deleted");
    }
}

/// Ships alice (written, erased, shipped again) through `proxy`, then restores her through it.
fn ship_through(server: &Seaweed, proxy: &LyingProxy, prefix: &str) -> Cli {
    let primary = Cli::new();
    proxy.configure(primary.folder());
    primary.create_agent("alice");
    let lot = primary.lot("alice", "web", "text to erase");
    primary.lot("alice", "web", "text to keep");
    let url = location(server, prefix);
    primary.json(&["replicate", "--to", &url, "--once"]);
    primary.json(&["recall", "alice", &lot.to_string(), "--erase"]);
    let shipped = primary.json(&["replicate", "--to", &url, "--once"]);
    assert_eq!(shipped["agents"][0]["deletions_pending"], 0, "{shipped}");
    let copy = Cli::new();
    proxy.configure(copy.folder());
    let folder = copy.folder().to_str().unwrap().to_owned();
    // Alice alone: the other agent's piece planted in the prefix has no head, which a restore
    // of the whole prefix reports (and fails on).
    let restored = copy.json(&["restore", "--from", &url, "--to", &folder, "--agent", "alice"]);
    assert_eq!(restored["restored"].as_array().map(Vec::len), Some(1), "{restored}");
    std::fs::copy(primary.folder().join("tokens"), copy.folder().join("tokens")).unwrap();
    assert_eq!(fingerprint(&copy, "alice"), fingerprint(&primary, "alice"));
    primary
}

#[test]
fn replicate_never_deletes_a_key_a_lying_list_answer_names_outside_its_agent() {
    let Some(server) = Seaweed::start() else { return };
    let foreign = foreign_objects(&server, "lies");
    let proxy = LyingProxy::start(&server.endpoint());
    proxy.inject(foreign.clone());
    ship_through(&server, &proxy, "lies");
    assert!(proxy.lists_altered() >= 2, "the lies were told: {}", proxy.lists_altered());
    assert_still_there(&server, &foreign);
}

#[test]
fn replicate_through_a_list_that_ignores_the_prefix_loses_no_other_object() {
    let Some(server) = Seaweed::start() else { return };
    let foreign = foreign_objects(&server, "ignored");
    // Another store's replica in the same bucket, shipped honestly first.
    let neighbour = configured(&server);
    neighbour.create_agent("bob");
    neighbour.lot("bob", "web", "bob's text");
    neighbour.json(&["replicate", "--to", &location(&server, "neighbour"), "--once"]);
    let before: Vec<(String, Vec<u8>)> = objects(&server);
    let proxy = LyingProxy::start(&server.endpoint());
    // Every answer names every key of the bucket, whatever prefix was asked for.
    proxy.inject(before.iter().map(|(key, _)| key.clone()).collect());
    ship_through(&server, &proxy, "ignored");
    assert!(proxy.lists_altered() >= 2, "the lies were told: {}", proxy.lists_altered());
    let after = objects(&server);
    for (key, bytes) in &before {
        assert!(after.iter().any(|(found, kept)| found == key && kept == bytes), "{key} was deleted or changed");
    }
    assert_still_there(&server, &foreign);
}

/// The head of `agent` under `prefix`, decoded, with its tag.
fn head_of(server: &Seaweed, prefix: &str, agent: &str) -> (String, ReplicaHead, cheesedb::replication::ObjectTag) {
    let key = head_key(&ReplicaPrefix::new(prefix), Owner::agent(agent));
    let (bytes, tag) = server.bucket().get(&key).unwrap().unwrap();
    (key, ReplicaHead::decode(&bytes).unwrap(), tag)
}

#[test]
fn a_restore_refuses_a_head_that_grants_another_agents_token_and_adopts_nothing() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    primary.create_agent("carol");
    primary.create_agent("dave");
    primary.lot("carol", "web", "carol's text");
    primary.lot("dave", "web", "dave's diary");
    let url = location(&server, "grants");
    primary.json(&["replicate", "--to", &url, "--once"]);
    let follower = configured(&server);
    let follower_folder = follower.folder().to_str().unwrap().to_owned();
    follower.run(&["follow", "--from", &url, "--to", &follower_folder, "--once"]).ok();
    let (carol_key, carol, tag) = head_of(&server, "grants", "carol");
    let (_, dave, _) = head_of(&server, "grants", "dave");
    let forgeries = [
        ("a token hash", ReplicaHead { token_hash: dave.token_hash, ..carol.clone() }, "grants a token"),
        ("a number", ReplicaHead { agent: dave.agent, ..carol.clone() }, "number of another agent"),
        ("the encrypted flag", ReplicaHead { encrypted: true, ..carol.clone() }, "encrypted flag"),
    ];
    let mut tag = tag;
    for (swapped, forged, said) in forgeries {
        // The head is re-encoded whole, so its crc is right for the forged bytes.
        tag = server.bucket().put_replacing(&carol_key, &forged.encode(), &tag).unwrap();
        for only in [None, Some("carol")] {
            let copy = configured(&server);
            let folder = copy.folder().to_str().unwrap().to_owned();
            let mut arguments = vec!["restore", "--from", &url, "--to", &folder];
            arguments.extend(only.iter().flat_map(|agent| ["--agent", agent]));
            let stderr = copy.run(&arguments).fails_with(3).to_owned();
            // The head's key is named (its hash shown shortened, as every long hex run is).
            assert!(stderr.contains(said) && stderr.contains("grants/agents/"), "{swapped}: {stderr}");
            let listed = copy.json(&["agent", "list"]);
            assert_eq!(listed["agents"], Value::Array(vec![]), "{swapped}: nothing adopted: {listed}");
        }
        let stderr =
            follower.run(&["follow", "--from", &url, "--to", &follower_folder, "--once"]).fails_with(3).to_owned();
        assert!(stderr.contains("grants/agents/"), "{swapped}: the follower refuses it too: {stderr}");
    }
    // Put back, the replica restores as before and carol's token opens carol's data only.
    server.bucket().put_replacing(&carol_key, &carol.encode(), &tag).unwrap();
    let copy = restored(&server, &primary, "grants", &[]);
    assert_eq!(copy.json(&["get", "carol", "1"])["content"], "carol's text");
    assert_eq!(copy.json(&["get", "dave", "1"])["content"], "dave's diary");
}

#[test]
fn a_restore_from_an_empty_prefix_or_with_a_head_missing_says_so_and_fails() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    primary.create_agent("alice");
    primary.create_agent("bob");
    primary.lot("alice", "web", "alice's text");
    primary.lot("bob", "web", "bob's text");
    primary.json(&["replicate", "--to", &location(&server, "whole"), "--once"]);

    let copy = configured(&server);
    let folder = copy.folder().to_str().unwrap().to_owned();
    for mistyped in ["whol", "nothing/here", ""] {
        let url = location(&server, mistyped);
        let url = if mistyped.is_empty() { url.trim_end_matches('/').to_owned() } else { url };
        let refused = copy.run(&["restore", "--from", &url, "--to", &folder]);
        if mistyped.is_empty() {
            // The bucket's root holds no `agents/` folder: the replica lives under its prefix.
            assert!(refused.fails_with(2).contains("holds no replica at the bucket's root"), "{}", refused.stderr);
        } else {
            assert!(refused.fails_with(2).contains("holds no replica under"), "{mistyped}: {}", refused.stderr);
        }
    }

    let (bob_head, _, _) = head_of(&server, "whole", "bob");
    server.bucket().delete(&bob_head).unwrap();
    let run = copy.run(&["--json", "restore", "--from", &location(&server, "whole"), "--to", &folder]);
    let stderr = run.fails_with(3);
    assert!(stderr.contains("head is missing") && stderr.contains("whole/agents/"), "{stderr}");
    let printed: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(printed["restored"].as_array().map(Vec::len), Some(1), "alice is restored: {printed}");
    assert_eq!(printed["heads_missing"][0], bob_head.as_str(), "{printed}");
}

/// A `follow` process that keeps running, and the fingerprints it has said each agent is at.
struct Following {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    reached: std::collections::BTreeMap<String, String>,
}

impl Following {
    fn start(follower: &Cli, url: &str, folder: &str) -> Following {
        let mut child = follower
            .command(&["--json", "follow", "--from", url, "--to", folder, "--interval-ms", "50"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Following { child, lines, reached: std::collections::BTreeMap::new() }
    }

    /// Waits until the follower has said it holds each agent at its fingerprint: it prints a
    /// line once a step has written the files.
    fn wait_for(&mut self, wanted: &[(&str, String)]) {
        while !wanted.iter().all(|(agent, at)| self.reached.get(*agent) == Some(at)) {
            // A guard against a follower that stopped answering, not the thing tested.
            let line = self.lines.recv_timeout(std::time::Duration::from_secs(120)).unwrap_or_else(|error| {
                panic!("the follower said nothing more ({error}); it reached {:?}, wanted {wanted:?}", self.reached)
            });
            let said: Value = serde_json::from_str(&line).unwrap();
            self.reached
                .insert(said["agent"].as_str().unwrap().to_owned(), said["fingerprint"].as_str().unwrap().to_owned());
        }
    }

    /// Stops it between steps: every step it announced is written whole.
    fn stop(self) {
        drop(self);
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The agent folder of agent `number` in a data folder.
fn agent_folder(data: &std::path::Path, number: u64) -> std::path::PathBuf {
    data.join(format!("agent-{number:016x}"))
}

/// Every piece the head of `agent` names, compared with the bytes of the follower's file there.
fn assert_follower_holds_what_the_head_names(server: &Seaweed, prefix: &str, agent: &str, follower: &Cli) {
    let (_, head, _) = head_of(server, prefix, agent);
    let mut bucket = server.bucket();
    for piece in &head.pieces {
        let key = piece_key(&ReplicaPrefix::new(prefix), Owner::agent(agent), piece);
        let (shipped, _) = bucket.get(&key).unwrap().unwrap();
        let file = std::fs::read(agent_folder(follower.folder(), head.agent).join(&piece.file)).unwrap();
        let held = file.get(piece.start as usize..piece.end as usize);
        // Compared as a flag: the bytes themselves would flood the failure message.
        let same = held == Some(shipped.as_slice());
        assert!(same, "{agent}: the follower's {} differs from {key}", piece.file);
    }
}

#[test]
fn after_an_erase_is_shipped_a_followers_files_hold_no_erased_byte_plaintext_or_encrypted() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    // Small segments: the erased text lies in a sealed segment, shipped again whole with the
    // same bounds once the Erase rewrites it; an encrypted agent's key table likewise.
    let small = cheesedb::Options::default().segment_size_max_bytes(4096).preallocate_bytes(0);
    let open = || cheesedb::Store::builder(primary.folder()).options(small.clone()).open().unwrap();
    let store = open();
    let tokens = [store.create_agent("alice").unwrap(), store.create_encrypted_agent("bob").unwrap()];
    let mut erased = Vec::new();
    for (token, name) in tokens.iter().zip(["alice", "bob"]) {
        let agent = store.open_agent(token).unwrap();
        erased.push(agent.add_lot("web", format!("canary-5e1f {name}'s erased text").as_bytes()).unwrap());
        for index in 0..60 {
            agent.add_lot("web", format!("{name} filler {index:04} {}", "x".repeat(80)).as_bytes()).unwrap();
        }
    }
    drop(store);
    let url = location(&server, "follow-erase");
    primary.json(&["replicate", "--to", &url, "--once"]);
    let follower = configured(&server);
    let follower_folder = follower.folder().to_str().unwrap().to_owned();
    // One follower process for the whole test: what it holds from one step to the next is
    // what could make it skip a stretch shipped again with the same bounds.
    let (alice, bob) = (tokens[0].to_string(), tokens[1].to_string());
    let mut following = Following::start(&follower, &url, &follower_folder);
    following.wait_for(&[("alice", fingerprint(&primary, &alice)), ("bob", fingerprint(&primary, &bob))]);

    let store = open();
    for (token, id) in tokens.iter().zip(&erased) {
        store.open_agent(token).unwrap().recall(*id, cheesedb::Mode::Fair, cheesedb::Removal::Erase).unwrap();
    }
    drop(store);
    let shipped = primary.json(&["replicate", "--to", &url, "--once"]);
    for status in shipped["agents"].as_array().unwrap() {
        assert_eq!(status["deletions_pending"], 0, "{shipped}");
    }
    following.wait_for(&[("alice", fingerprint(&primary, &alice)), ("bob", fingerprint(&primary, &bob))]);
    following.stop();
    for agent in ["alice", "bob"] {
        assert_follower_holds_what_the_head_names(&server, "follow-erase", agent, &follower);
    }
    for path in common::files_below(follower.folder()) {
        let bytes = std::fs::read(&path).unwrap();
        assert!(!holds(&bytes, "canary-5e1f"), "{} holds erased text", path.display());
    }
    // The encrypted agent's key table, with the erased lot's key destroyed, is the primary's.
    let (_, bob, _) = head_of(&server, "follow-erase", "bob");
    let keys = |data: &std::path::Path| std::fs::read(agent_folder(data, bob.agent).join("keys")).unwrap();
    assert_eq!(keys(follower.folder()), keys(primary.folder()), "the follower's key table is the primary's");
    let primary_store = cheesedb::Store::open_read_only(primary.folder()).unwrap();
    let follower_store = cheesedb::Store::open(follower.folder()).unwrap();
    for (token, id) in tokens.iter().zip(&erased) {
        let agent = follower_store.open_agent(token).unwrap();
        assert_eq!(agent.get(*id).unwrap().content(), None);
        assert_eq!(agent.verify().unwrap(), primary_store.open_agent(token).unwrap().verify().unwrap());
    }
}

#[test]
fn spaces_ship_and_restore_with_their_members_and_a_shared_erase_leaves_no_object_holding_it() {
    let Some(server) = Seaweed::start() else { return };
    let primary = configured(&server);
    // An agent and a space may share a name: their replicas stay apart.
    for agent in ["alice", "bob", "team"] {
        primary.create_agent(agent);
    }
    primary.json(&["space", "create", "team", "alice"]);
    primary.json(&["space", "grant", "alice", "team", "bob", "read"]);
    primary.json(&["lot", "alice", "web", "space-canary-6e1d the key is in the wiki", "--space", "team"]);
    primary.json(&["lot", "alice", "notes", "shared-kept-text", "--space", "team"]);
    let derived = primary.remember("bob", "bob-derived-canary-0b7e fetch it", &["team:1"]);
    primary.lot("team", "notes", "the agent named team");
    let shipped = primary.json(&["replicate", "--to", &location(&server, "spaces"), "--once"]);
    let statuses = shipped["agents"].as_array().unwrap();
    assert!(statuses.iter().any(|status| status["space"] == "team"), "{shipped}");
    assert!(statuses.iter().any(|status| status["agent"] == "team"), "{shipped}");

    let space_fingerprint = |cli: &Cli| cli.json(&["verify", "alice", "--space", "team"])["fingerprint"].clone();
    let copy = restored(&server, &primary, "spaces", &[]);
    assert_eq!(space_fingerprint(&copy), space_fingerprint(&primary));
    assert_eq!(copy.json(&["get", "bob", &derived.to_string()])["content"], "bob-derived-canary-0b7e fetch it");
    assert_eq!(copy.json(&["get", "bob", "1", "--space", "team"])["author"], "alice");
    assert_eq!(copy.json(&["get", "team", "1"])["content"], "the agent named team");
    // One member restored alone comes back with the space its memories build on.
    let only_bob = restored(&server, &primary, "spaces", &["--agent", "bob"]);
    assert_eq!(only_bob.json(&["get", "bob", &derived.to_string()])["alive"], true);
    assert_eq!(only_bob.json(&["space", "list"])[0]["space"], "team");

    primary.json(&["recall", "alice", "1", "--space", "team", "--erase"]);
    primary.json(&["replicate", "--to", &location(&server, "spaces"), "--once"]);
    for (key, bytes) in objects(&server) {
        for text in ["space-canary-6e1d", "bob-derived-canary-0b7e"] {
            assert!(!holds(&bytes, text), "{key} still holds {text}");
        }
    }
    assert!(objects(&server).iter().any(|(_, bytes)| holds(bytes, "shared-kept-text")));
    let after = restored(&server, &primary, "spaces", &[]);
    assert_eq!(after.json(&["get", "bob", &derived.to_string()])["alive"], false);
    assert_eq!(space_fingerprint(&after), space_fingerprint(&primary));
}
