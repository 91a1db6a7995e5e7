//! Hostile bytes on the server's socket: garbage, a length of 4 GiB, half a frame then silence,
//! a client that never reads. None of them crashes the server or stalls another client.

use crate::common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use cheesedb::protocol::{write_frame, Request, Response, PROTOCOL_VERSION};
use cheesedb::{ClientAgent, Error};
use common::server_process::ServerProcess;

/// The client timeout the servers of these tests use.
const CLIENT_TIMEOUT_MS: &str = "500";

/// A request of another client takes at most this long while a hostile one misbehaves.
const PROMPT: Duration = Duration::from_millis(300);

fn server(folder: &std::path::Path) -> ServerProcess {
    ServerProcess::start(folder, &["--client-timeout-ms", CLIENT_TIMEOUT_MS])
}

/// A well-behaved client with one agent holding one lot.
fn well_behaved(server: &ServerProcess) -> ClientAgent {
    let client = server.client();
    let agent = client.open_agent(&client.create_agent("good").unwrap()).unwrap();
    agent.add_lot("note", b"hello").unwrap();
    agent
}

/// Asserts that `agent` is served promptly.
fn assert_served_promptly(agent: &ClientAgent) {
    let started = Instant::now();
    assert_eq!(agent.get(cheesedb::Id::from(1)).unwrap().content(), Some(&b"hello"[..]));
    assert!(started.elapsed() < PROMPT, "a request took {:?}", started.elapsed());
}

fn raw(server: &ServerProcess) -> UnixStream {
    let stream = UnixStream::connect(&server.socket).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream
}

fn say_hello(stream: &mut UnixStream) {
    let hello = Request::Hello { version: PROTOCOL_VERSION, client: String::from("test") }.encode().unwrap();
    write_frame(stream, &hello).unwrap();
    assert!(matches!(read_response(stream), Some(Response::Hello { .. })));
}

/// The next response on `stream`, `None` when the server closed it.
fn read_response(stream: &mut UnixStream) -> Option<Response> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).ok()?;
    let mut body = vec![0u8; usize::try_from(u32::from_le_bytes(length)).unwrap()];
    stream.read_exact(&mut body).ok()?;
    Some(Response::decode(&body).unwrap())
}

/// Waits for the server to close `stream`; returns how long that took.
fn closed_after(stream: &mut UnixStream) -> Duration {
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    started.elapsed()
}

#[test]
fn garbage_is_answered_and_the_connection_goes_on() {
    let folder = tempfile::tempdir().unwrap();
    let server = server(folder.path());
    let good = well_behaved(&server);
    let mut stream = raw(&server);
    say_hello(&mut stream);
    for garbage in [&[0xffu8; 64][..], &[], &[200, 1, 2, 3], &[3, 0xff, 0xff, 0xff, 0xff, 0x0f]] {
        write_frame(&mut stream, garbage).unwrap();
        match read_response(&mut stream) {
            Some(Response::Failed(error)) => {
                assert!(matches!(error, Error::MalformedMessage { .. }));
            }
            other => panic!("garbage answered {other:?}"),
        }
    }
    // Requests before an agent is open are refused, not served.
    write_frame(&mut stream, &Request::Lots.encode().unwrap()).unwrap();
    assert!(matches!(read_response(&mut stream), Some(Response::Failed(_))));
    assert_served_promptly(&good);
    server.stop();
}

#[test]
fn garbage_instead_of_a_hello_closes_the_connection() {
    let folder = tempfile::tempdir().unwrap();
    let server = server(folder.path());
    let good = well_behaved(&server);
    let mut stream = raw(&server);
    stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    // "GET " read as a length is over the limit: refused with one frame, then closed.
    assert!(matches!(read_response(&mut stream), Some(Response::Failed(_))));
    assert!(closed_after(&mut stream) < Duration::from_secs(5));
    let mut stream = raw(&server);
    write_frame(&mut stream, &Request::Lots.encode().unwrap()).unwrap();
    assert!(matches!(read_response(&mut stream), Some(Response::Failed(_))));
    assert_served_promptly(&good);
    server.stop();
}

#[test]
fn a_length_of_four_gib_is_refused_from_the_length_alone() {
    let folder = tempfile::tempdir().unwrap();
    let server = server(folder.path());
    let good = well_behaved(&server);
    let mut stream = raw(&server);
    say_hello(&mut stream);
    stream.write_all(&u32::MAX.to_le_bytes()).unwrap();
    match read_response(&mut stream) {
        Some(Response::Failed(error)) => {
            assert!(matches!(error, Error::FrameTooLarge { size_bytes: 4_294_967_295, .. }));
        }
        other => panic!("a 4 GiB frame answered {other:?}"),
    }
    assert!(closed_after(&mut stream) < Duration::from_secs(5));
    assert_served_promptly(&good);
    server.stop();
}

#[test]
fn half_a_frame_then_silence_is_timed_out_without_stalling_others() {
    let folder = tempfile::tempdir().unwrap();
    let server = server(folder.path());
    let good = well_behaved(&server);
    let mut stalled = Vec::new();
    for cut in [2usize, 4, 10] {
        let mut stream = raw(&server);
        say_hello(&mut stream);
        let mut frame = Vec::new();
        write_frame(&mut frame, &Request::AddLot { label: String::from("l"), content: vec![7; 100] }.encode().unwrap())
            .unwrap();
        stream.write_all(&frame[..cut]).unwrap();
        stalled.push(stream);
    }
    assert_served_promptly(&good);
    for mut stream in stalled {
        let waited = closed_after(&mut stream);
        assert!(waited < Duration::from_secs(5), "a stalled frame was kept {waited:?}");
    }
    assert_served_promptly(&good);
    server.stop();
}

#[test]
fn a_client_that_never_reads_is_given_up_without_stalling_others() {
    let folder = tempfile::tempdir().unwrap();
    let server = server(folder.path());
    let client = server.client();
    let token = client.create_agent("good").unwrap();
    let good = client.open_agent(&token).unwrap();
    good.add_lot("note", b"hello").unwrap();
    let big = good.add_lot("big", &vec![b'x'; 4 * 1024 * 1024]).unwrap();
    let mut stream = raw(&server);
    say_hello(&mut stream);
    write_frame(&mut stream, &Request::OpenAgent { token: *token.as_bytes() }.encode().unwrap()).unwrap();
    assert!(matches!(read_response(&mut stream), Some(Response::AgentOpened { .. })));
    // Ask for the big lot again and again, reading nothing.
    let get = Request::Get { id: big.get() }.encode().unwrap();
    stream.set_write_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut frames = Vec::new();
    for _ in 0..20 {
        frames.clear();
        write_frame(&mut frames, &get).unwrap();
        if stream.write_all(&frames).is_err() {
            break;
        }
    }
    assert_served_promptly(&good);
    // A writing client of the same agent is not held up either.
    let started = Instant::now();
    good.add_lot("note", b"more").unwrap();
    assert!(started.elapsed() < PROMPT);
    std::thread::sleep(Duration::from_millis(1500));
    assert_served_promptly(&good);
    server.stop();
}

#[test]
fn a_batch_left_open_is_dropped_and_the_agent_writable_again() {
    let folder = tempfile::tempdir().unwrap();
    let server = server(folder.path());
    let client = server.client();
    let token = client.create_agent("good").unwrap();
    let good = client.open_agent(&token).unwrap();
    let mut stream = raw(&server);
    say_hello(&mut stream);
    write_frame(&mut stream, &Request::OpenAgent { token: *token.as_bytes() }.encode().unwrap()).unwrap();
    assert!(matches!(read_response(&mut stream), Some(Response::AgentOpened { .. })));
    let stage = Request::BatchStage(cheesedb::protocol::BatchWrite::AddLot {
        label: String::from("l"),
        content: b"staged".to_vec(),
    });
    write_frame(&mut stream, &stage.encode().unwrap()).unwrap();
    assert!(matches!(read_response(&mut stream), Some(Response::Id(1))));
    // The batch holds the gate: this write waits, then passes once the batch is dropped.
    let started = Instant::now();
    let id = good.add_lot("note", b"after").unwrap();
    assert_eq!(id, cheesedb::Id::from(1), "the staged lot was never written");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(closed_after(&mut stream) < Duration::from_secs(5));
    server.stop();
}

#[test]
fn a_connection_over_the_limit_is_refused_with_an_error() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &["--connections-max", "2"]);
    let client = server.client(); // one connection, kept idle by the client
    let token = client.create_agent("good").unwrap();
    let _good = client.open_agent(&token).unwrap(); // the same connection, now the agent's
    let _second = client.open_agent(&token).unwrap();
    let refused = client.open_agent(&token);
    assert_eq!(refused.err(), Some(Error::ServerBusy { connections_max: 2 }));
    server.stop();
}
