//! Many clients writing and recalling through the server at once: nothing lost, no id twice,
//! and every acknowledged write still there after the server is killed with SIGKILL and
//! started again.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cheesedb::{Error, Id, Leg, Mode, Removal, Store, Token};
use common::server_process::ServerProcess;

/// How long the clients write before the kill, unless `SERVE_SOAK_MS` says otherwise
/// (`.ci/serve_soak.sh` runs it for a minute).
const WRITE_FOR_MS_DEFAULT: u64 = 1500;

/// Clients writing at once.
const CLIENTS: usize = 16;
/// Agents they share.
const AGENTS: usize = 4;

/// What one client was told was stored: id -> content, and the ids it recalled.
#[derive(Default)]
struct Acknowledged {
    written: BTreeMap<(usize, u64), Vec<u8>>,
    recalled: Vec<(usize, u64)>,
}

/// One client's work until `stop`: lots, memories on them, now and then a recall of its own lot.
fn client_work(
    server_socket: &std::path::Path,
    tokens: &[Token],
    client_index: usize,
    stop: &AtomicBool,
) -> Acknowledged {
    let client = cheesedb::Client::connect(server_socket).unwrap();
    let agent_index = client_index % AGENTS;
    let agent = client.open_agent(&tokens[agent_index]).unwrap();
    let mut acknowledged = Acknowledged::default();
    let mut step = 0u64;
    while !stop.load(Ordering::Relaxed) {
        step += 1;
        let content = format!("client {client_index} step {step}").into_bytes();
        let outcome = if step.is_multiple_of(3) {
            match acknowledged.written.keys().rev().find(|(agent, _)| *agent == agent_index) {
                Some(&(_, parent)) => agent.remember(&content, &[Leg::from([Id::from(parent)])]),
                None => agent.add_lot("note", &content),
            }
        } else {
            agent.add_lot("note", &content)
        };
        match outcome {
            Ok(id) => {
                let earlier = acknowledged.written.insert((agent_index, id.get()), content);
                assert!(earlier.is_none(), "id {id} handed out twice to one client");
                if step.is_multiple_of(17) && agent.recall(id, Mode::Fair, Removal::Untrusted).is_ok() {
                    acknowledged.recalled.push((agent_index, id.get()));
                }
            }
            Err(Error::DeadParent { .. }) => {}
            Err(Error::ConnectionLost { .. } | Error::ServerUnavailable { .. }) => break,
            Err(error) => panic!("client {client_index}: {error}"),
        }
    }
    acknowledged
}

#[test]
fn every_acknowledged_write_survives_sigkill() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let tokens: Arc<Vec<Token>> =
        Arc::new((0..AGENTS).map(|index| client.create_agent(&format!("agent-{index}")).unwrap()).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let all = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|index| {
            let (socket, tokens, stop, all) = (server.socket.clone(), tokens.clone(), stop.clone(), all.clone());
            std::thread::spawn(move || {
                let acknowledged = client_work(&socket, &tokens, index, &stop);
                all.lock().unwrap().push(acknowledged);
            })
        })
        .collect();
    let write_for_ms =
        std::env::var("SERVE_SOAK_MS").ok().and_then(|text| text.parse().ok()).unwrap_or(WRITE_FOR_MS_DEFAULT);
    std::thread::sleep(Duration::from_millis(write_for_ms));
    server.kill();
    stop.store(true, Ordering::Relaxed);
    threads.into_iter().for_each(|thread| thread.join().unwrap());

    let all = std::mem::take(&mut *all.lock().unwrap());
    let mut written = BTreeMap::new();
    let mut recalled = Vec::new();
    for acknowledged in all {
        for (key, content) in acknowledged.written {
            assert!(written.insert(key, content).is_none(), "id {key:?} handed out to two clients");
        }
        recalled.extend(acknowledged.recalled);
    }
    assert!(written.len() > 100, "only {} writes in the run", written.len());
    println!(
        "{} acknowledged writes and {} recalls by {CLIENTS} clients before SIGKILL",
        written.len(),
        recalled.len()
    );

    // Restarted on the stale socket, the server has every acknowledged write.
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    for (agent_index, token) in tokens.iter().enumerate() {
        let agent = client.open_agent(token).unwrap();
        for ((_, id), content) in written.range((agent_index, 0)..(agent_index + 1, 0)) {
            let node = agent.audit(Id::from(*id)).unwrap();
            if node.is_alive() {
                assert_eq!(node.content(), Some(&content[..]), "agent {agent_index} id {id}");
            } else {
                // Recalled, or built on a recalled node: its text stays until a compaction,
                // which starts by itself once enough recalled nodes keep theirs.
                assert!(node.content().is_none_or(|text| text == content), "agent {agent_index} id {id}");
            }
        }
        for (_, id) in recalled.iter().filter(|(index, _)| *index == agent_index) {
            assert!(!agent.get(Id::from(*id)).unwrap().is_alive(), "recall of {id} lost");
        }
        agent.verify().unwrap();
    }
    server.stop();
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(store.agent_names().unwrap().len(), AGENTS);
}

/// The process ids that `cheesedb log AGENT` shows in `cli`'s folder.
fn logged_pids(cli: &common::Cli, agent: &str) -> Vec<u64> {
    let entries = cli.json(&["log", agent]);
    entries.as_array().unwrap().iter().filter_map(|entry| entry["pid"].as_u64()).collect()
}

#[test]
fn a_write_whose_connection_is_lost_exits_as_outcome_unknown() {
    let cli = common::Cli::new();
    // A batch left open holds every other writer of the agent at its gate: a long client
    // timeout keeps the server from dropping it while the commands wait.
    let server = ServerProcess::start(cli.folder(), &["--client-timeout-ms", "600000"]);
    let token: Token = cli.create_agent("alice")["token"].as_str().unwrap().parse().unwrap();
    let lot = cli.lot("alice", "web", "the first lot");
    let holder = server.client().open_agent(&token).unwrap();
    holder.stage(|batch| batch.add_lot("web", b"staged, never committed")).unwrap();

    let lot_text = lot.to_string();
    let writes: [&[&str]; 3] = [
        &["lot", "alice", "web", "sent, then the server died"],
        &["remember", "alice", "learned, then the server died", "--leg", &lot_text],
        &["recall", "alice", &lot_text],
    ];
    let children: Vec<std::process::Child> = writes
        .iter()
        .map(|arguments| {
            cli.command(arguments)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Each command opened the agent (its access log says so) and then sent its write, which
    // waits at the gate: the server dies with every write in flight.
    let pids: Vec<u64> = children.iter().map(|child| u64::from(child.id())).collect();
    let started = std::time::Instant::now();
    while !pids.iter().all(|pid| logged_pids(&cli, "alice").contains(pid)) {
        assert!(started.elapsed() < common::server_process::PATIENCE, "the commands never opened the agent");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    for (child, arguments) in children.into_iter().zip(writes) {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{arguments:?} may have been stored, yet: {stderr}");
        assert!(stderr.contains("the write may have been stored: check with get before retrying"), "{stderr}");
        common::assert_one_clean_line(&stderr);
    }
}
