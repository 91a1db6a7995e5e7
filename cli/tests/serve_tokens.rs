//! Tokens through the memory server: a wrong token and an unknown one get the same answer, and a
//! session reaches only the agent its token opened.

use crate::common;

use std::io::Read;
use std::os::unix::net::UnixStream;

use cheesedb::protocol::{write_frame, Request, PROTOCOL_VERSION};
use cheesedb::{Error, Store, Token};
use common::server_process::ServerProcess;

/// The raw bytes the server answers an `OpenAgent` with `token` with.
fn raw_answer_to(server: &ServerProcess, token: [u8; 32]) -> Vec<u8> {
    let mut stream = UnixStream::connect(&server.socket).unwrap();
    let hello = Request::Hello { version: PROTOCOL_VERSION, client: String::from("test") }.encode().unwrap();
    write_frame(&mut stream, &hello).unwrap();
    let _hello = read_frame(&mut stream);
    write_frame(&mut stream, &Request::OpenAgent { token }.encode().unwrap()).unwrap();
    read_frame(&mut stream)
}

fn read_frame(stream: &mut UnixStream) -> Vec<u8> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).unwrap();
    let mut body = vec![0u8; usize::try_from(u32::from_le_bytes(length)).unwrap()];
    stream.read_exact(&mut body).unwrap();
    body
}

#[test]
fn a_wrong_token_and_an_unknown_one_get_the_same_answer() {
    let folder = tempfile::tempdir().unwrap();
    let other_folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let right = client.create_agent("alice").unwrap();
    let mut wrong = *right.as_bytes();
    wrong[31] ^= 1;
    let unknown = *Store::open(other_folder.path()).unwrap().create_agent("alice").unwrap().as_bytes();

    assert_eq!(client.open_agent(&Token::from_bytes(wrong)).err(), Some(Error::UnknownToken));
    assert_eq!(client.open_agent(&Token::from_bytes(unknown)).err(), Some(Error::UnknownToken));
    assert_eq!(raw_answer_to(&server, wrong), raw_answer_to(&server, unknown), "the bytes differ");
    assert_eq!(raw_answer_to(&server, [0; 32]), raw_answer_to(&server, unknown));
    assert!(client.open_agent(&right).is_ok());
    server.stop();
}

#[test]
fn a_session_reaches_only_the_agent_its_token_opened() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let alice = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();
    let bob = client.open_agent(&client.create_agent("bob").unwrap()).unwrap();
    let secret = alice.add_lot("note", b"alice's secret").unwrap();
    assert_eq!(bob.get(secret).err(), Some(Error::UnknownId { id: secret }));
    assert!(bob.search("secret", 10).unwrap().is_empty());
    assert_eq!(bob.lots().unwrap(), Vec::new());
    assert_eq!(bob.name().unwrap(), "bob");
    server.stop();
}

#[test]
fn a_second_open_on_one_connection_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let token = client.create_agent("alice").unwrap();
    let mut stream = UnixStream::connect(&server.socket).unwrap();
    let hello = Request::Hello { version: PROTOCOL_VERSION, client: String::from("test") }.encode().unwrap();
    write_frame(&mut stream, &hello).unwrap();
    let _hello = read_frame(&mut stream);
    write_frame(&mut stream, &Request::OpenAgent { token: *token.as_bytes() }.encode().unwrap()).unwrap();
    let _done = read_frame(&mut stream);
    let other = *client.create_agent("bob").unwrap().as_bytes();
    write_frame(&mut stream, &Request::OpenAgent { token: other }.encode().unwrap()).unwrap();
    let answer = cheesedb::protocol::Response::decode(&read_frame(&mut stream)).unwrap();
    assert!(matches!(answer, cheesedb::protocol::Response::Failed(_)), "{answer:?}");
    server.stop();
}
