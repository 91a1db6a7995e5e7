//! The server's socket: private to its user, refused on a path another user owns, a stale one
//! replaced, a live one (another server) refused; peers of other users refused; a link planted
//! at a folder's socket never followed by a client.

use crate::common;

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::process::Command;

use cheesedb::{Error, SocketProblem};
use common::server_process::ServerProcess;
use common::Cli;

/// Whether the tests run as root, which may hand files to other users.
fn is_root() -> bool {
    rustix::process::getuid().is_root()
}

#[test]
fn the_socket_is_in_the_data_folder_with_mode_0600() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    assert_eq!(server.socket, folder.path().join("cheesedb.sock"));
    let metadata = std::fs::symlink_metadata(&server.socket).unwrap();
    assert!(metadata.file_type().is_socket());
    assert_eq!(metadata.permissions().mode() & 0o777, 0o600);
    // A client finds it from the data folder too.
    cheesedb::Client::connect(folder.path()).unwrap();
    server.stop();
}

#[test]
fn a_stale_socket_is_replaced_and_a_live_one_refused() {
    let folder = tempfile::tempdir().unwrap();
    let socket = folder.path().join("elsewhere.sock");
    let arguments = ["--socket", socket.to_str().unwrap()];
    let server = ServerProcess::start(folder.path(), &arguments);
    let token = server.client().create_agent("alice").unwrap();

    // A second server on the same folder and socket is refused with a clear line.
    let refused = ServerProcess::try_start(folder.path(), &arguments).err().expect("a second server refused");
    assert!(refused.contains("another cheesedb server is running"), "{refused}");
    common::assert_one_clean_line(&refused);
    // On another socket of the same folder, the store's lock refuses it.
    let other = folder.path().join("other.sock");
    let refused = ServerProcess::try_start(folder.path(), &["--socket", other.to_str().unwrap()]).err().unwrap();
    assert!(refused.contains("in use by another cheesedb process"), "{refused}");
    assert!(!other.exists());

    server.kill();
    assert!(socket.exists(), "a killed server leaves its socket");
    assert_eq!(
        cheesedb::Client::connect(&socket).err().map(|error| matches!(error, Error::ServerUnavailable { .. })),
        Some(true)
    );
    let server = ServerProcess::start(folder.path(), &arguments);
    server.client().open_agent(&token).unwrap();
    server.stop();
    assert!(!socket.exists(), "a stopped server removes its socket");
}

#[test]
fn a_path_that_is_not_a_socket_is_left_alone() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("cheesedb.sock");
    std::fs::write(&path, b"not a socket").unwrap();
    let refused = ServerProcess::try_start(folder.path(), &[]).err().unwrap();
    assert!(refused.contains("other than a socket"), "{refused}");
    assert_eq!(std::fs::read(&path).unwrap(), b"not a socket");
}

#[test]
fn a_socket_path_another_user_owns_is_refused() {
    if !is_root() {
        return; // Only root can give a file to another user.
    }
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("taken.sock");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    std::os::unix::fs::chown(&path, Some(4321), Some(4321)).unwrap();
    let refused = ServerProcess::try_start(folder.path(), &["--socket", path.to_str().unwrap()]).err().unwrap();
    assert!(refused.contains("owned by user 4321"), "{refused}");
    assert_eq!(std::fs::symlink_metadata(&path).unwrap().uid(), 4321, "left in place");
}

#[test]
fn a_peer_of_another_user_is_refused() {
    if !is_root() || Command::new("python3").arg("--version").output().is_err() {
        return; // Only root can run a peer as another user.
    }
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    // Open the socket's mode so the kernel lets the other user connect: the server must refuse.
    std::fs::set_permissions(&server.socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = "import socket,sys\n\
                  s=socket.socket(socket.AF_UNIX)\n\
                  s.connect(sys.argv[1])\n\
                  data=b''\n\
                  while True:\n    chunk=s.recv(4096)\n    if not chunk: break\n    data+=chunk\n\
                  sys.stdout.write(data.hex())\n";
    let output =
        std::process::Command::new("python3").arg("-c").arg(script).arg(&server.socket).uid(4321).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let hex = String::from_utf8(output.stdout).unwrap();
    let bytes: Vec<u8> =
        (0..hex.len()).step_by(2).map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap()).collect();
    let answer = cheesedb::protocol::Response::decode(&bytes[4..]).unwrap();
    match answer {
        cheesedb::protocol::Response::Failed(error) => assert_eq!(error, Error::PeerRefused { uid: 4321 }),
        other => panic!("another user was answered {other:?}"),
    }
    server.stop();
}

#[test]
fn a_link_planted_at_the_socket_is_refused_and_nothing_reaches_the_server_it_names() {
    let first = Cli::new();
    let server = ServerProcess::start(first.folder(), &[]);
    let token: cheesedb::Token = first.create_agent("alice")["token"].as_str().unwrap().parse().unwrap();
    let lot = first.lot("alice", "web", "kept in the first store");
    let second = Cli::new();
    let planted = second.folder().join("cheesedb.sock");
    std::os::unix::fs::symlink(&server.socket, &planted).unwrap();

    let commands: [&[&str]; 6] = [
        &["agent", "list"],
        &["agent", "create", "mallory"],
        &["agent", "delete", "alice"],
        &["lot", "alice", "web", "planted"],
        &["get", "alice", "1"],
        &["search", "alice", "kept"],
    ];
    for arguments in commands {
        let run = second.run(arguments);
        let stderr = run.fails_with(2);
        assert!(
            stderr.contains("refusing the server's socket") && stderr.contains("symbolic link"),
            "{arguments:?}: {stderr}"
        );
    }
    let refused = cheesedb::Client::connect(second.folder()).unwrap_err();
    assert_eq!(
        refused,
        Error::SocketRefused { path: planted.display().to_string(), problem: SocketProblem::SymbolicLink }
    );

    // The first store is as it was: the same agents and lots, and no request of the second
    // folder in alice's access log (every command above would have opened her there).
    let client = server.client();
    assert_eq!(client.agent_names().unwrap(), ["alice"]);
    let alice = client.open_agent(&token).unwrap();
    assert_eq!(alice.lots().unwrap(), [cheesedb::Id::from(lot)]);
    assert!(!second.folder().join("tokens").exists(), "no token saved in the second folder");
    assert_eq!(std::fs::read_dir(second.folder()).unwrap().count(), 1, "the second folder holds only the link");
    server.stop();
    let operations: Vec<String> = first
        .json(&["log", "alice"])
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["operation"].as_str().unwrap().to_owned())
        .collect();
    assert!(!operations.iter().any(|operation| operation == "delete_agent" || operation == "search"), "{operations:?}");
}
