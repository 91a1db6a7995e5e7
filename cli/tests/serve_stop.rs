//! Stopping the server: SIGTERM and SIGINT finish the request in flight, remove the socket, close
//! the store and exit 0; a client sees a typed error after.

use crate::common;

use std::io::Read;
use std::os::unix::net::UnixStream;

use cheesedb::protocol::{write_frame, Request, Response, PROTOCOL_VERSION};
use cheesedb::{Error, Id, Store};
use common::server_process::ServerProcess;
use rustix::process::Signal;

fn read_response(stream: &mut UnixStream) -> Option<Response> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).ok()?;
    let mut body = vec![0u8; usize::try_from(u32::from_le_bytes(length)).unwrap()];
    stream.read_exact(&mut body).ok()?;
    Some(Response::decode(&body).unwrap())
}

fn request_in_flight_is_finished(signal: Signal) {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    let alice = client.open_agent(&token).unwrap();
    alice.add_lot("note", b"before").unwrap();

    let mut stream = UnixStream::connect(&server.socket).unwrap();
    let hello = Request::Hello { version: PROTOCOL_VERSION, client: String::from("test") }.encode().unwrap();
    write_frame(&mut stream, &hello).unwrap();
    assert!(matches!(read_response(&mut stream), Some(Response::Hello { .. })));
    write_frame(&mut stream, &Request::OpenAgent { token: *token.as_bytes() }.encode().unwrap()).unwrap();
    assert!(matches!(read_response(&mut stream), Some(Response::AgentOpened { .. })));
    // A large write, sent whole, and the signal right behind it.
    let content = vec![b'x'; 8 * 1024 * 1024];
    let write = Request::AddLot { label: String::from("big"), content: content.clone() }.encode().unwrap();
    write_frame(&mut stream, &write).unwrap();
    server.signal(signal);
    assert_eq!(read_response(&mut stream), Some(Response::Id(2)), "the request in flight was answered");
    assert_eq!(read_response(&mut stream), None, "then the connection closed");

    let socket = server.socket.clone();
    let (status, stderr) = server.wait();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!socket.exists(), "the socket was removed");
    assert!(matches!(alice.lots(), Err(Error::ConnectionLost { write_in_flight: false, .. })));
    assert!(matches!(cheesedb::Client::connect(&socket), Err(Error::ServerUnavailable { .. })));

    // The store was closed: it opens at once, with the write.
    let store = Store::open(folder.path()).unwrap();
    let agent = store.open_agent(&token).unwrap();
    assert_eq!(agent.get(Id::from(2)).unwrap().content(), Some(&content[..]));
    assert!(!agent.report().repaired_anything(), "{:?}", agent.report());
}

#[test]
fn sigterm_finishes_the_request_in_flight_and_removes_the_socket() {
    request_in_flight_is_finished(Signal::TERM);
}

#[test]
fn sigint_stops_the_same_way() {
    request_in_flight_is_finished(Signal::INT);
}

#[test]
fn idle_clients_do_not_keep_a_stopping_server_alive() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    let _sessions: Vec<_> = (0..8).map(|_| client.open_agent(&token).unwrap()).collect();
    let _silent = UnixStream::connect(&server.socket).unwrap();
    let started = std::time::Instant::now();
    server.stop();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
