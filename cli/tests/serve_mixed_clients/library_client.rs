//! A client in this process: `cheesedb::Client` on the server's socket, connecting again
//! whenever the server went away.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cheesedb::{Client, ClientAgent, Error, Id, Leg, Mode, Removal, Token};

use super::operations::{Operations, Outcome, Read, Remembered};

/// How long a library client keeps trying to reach a server that went away.
const RECONNECT_PATIENCE: Duration = Duration::from_secs(60);
/// The pause between two attempts.
const RECONNECT_PAUSE: Duration = Duration::from_millis(5);

/// One agent, reached through the server.
pub struct LibraryClient {
    name: String,
    socket: PathBuf,
    token: Token,
    agent: Option<ClientAgent>,
    /// Connections made after the first, to a restarted server.
    pub reconnections: u64,
}

impl LibraryClient {
    /// A client of the server at `socket` on the agent of `token`; it connects at its first
    /// operation.
    pub fn new(name: String, socket: PathBuf, token: Token) -> LibraryClient {
        LibraryClient { name, socket, token, agent: None, reconnections: 0 }
    }

    /// The agent, connecting (again) first when there is no connection.
    fn agent(&mut self) -> &ClientAgent {
        if self.agent.is_none() {
            let started = Instant::now();
            let agent = loop {
                match Client::connect(&self.socket).and_then(|client| client.open_agent(&self.token)) {
                    Ok(agent) => break agent,
                    Err(Error::ServerUnavailable { .. } | Error::ConnectionLost { .. }) => {
                        assert!(started.elapsed() < RECONNECT_PATIENCE, "{}: the server never came back", self.name);
                        std::thread::sleep(RECONNECT_PAUSE);
                    }
                    Err(error) => panic!("{}: connecting: {error}", self.name),
                }
            };
            self.reconnections += 1;
            self.agent = Some(agent);
        }
        self.agent.as_ref().expect("connected above")
    }

    /// What the client was told: a broken connection is dropped, to connect again next time.
    fn outcome<T>(&mut self, result: Result<T, Error>) -> Outcome<T> {
        match result {
            Ok(value) => Outcome::Done(value),
            Err(Error::ConnectionLost { write_in_flight, .. }) => {
                self.agent = None;
                if write_in_flight {
                    Outcome::Unknown
                } else {
                    Outcome::Refused
                }
            }
            Err(Error::ServerUnavailable { .. }) => {
                self.agent = None;
                Outcome::Refused
            }
            // A parent this client recalled with an outcome it never heard.
            Err(Error::DeadParent { .. } | Error::AlreadyRecalled { .. }) => Outcome::Refused,
            Err(error) => panic!("{}: {error}", self.name),
        }
    }
}

fn legs_of(legs: &[Vec<u64>]) -> Vec<Leg> {
    legs.iter().map(|leg| leg.iter().map(|id| Id::from(*id)).collect()).collect()
}

impl Operations for LibraryClient {
    fn add_lot(&mut self, label: &str, text: &str) -> Outcome<u64> {
        let result = self.agent().add_lot(label, text.as_bytes()).map(Id::get);
        self.outcome(result)
    }

    fn remember(&mut self, text: &str, legs: &[Vec<u64>]) -> Outcome<Remembered> {
        let result = self.agent().remember(text.as_bytes(), &legs_of(legs));
        self.outcome(result.map(|id| Remembered { id: id.get(), tracked: Vec::new() }))
    }

    fn recall(&mut self, id: u64) -> Outcome<Vec<u64>> {
        let result = self.agent().recall(Id::from(id), Mode::Fair, Removal::Untrusted);
        self.outcome(result.map(|removed| removed.into_iter().map(Id::get).collect()))
    }

    fn get(&mut self, id: u64) -> Outcome<Read> {
        let result = self.agent().get(Id::from(id));
        if let Err(Error::UnknownId { .. }) = result {
            panic!("{}: acknowledged id {id} is unknown to the server", self.name);
        }
        self.outcome(result.map(|node| Read {
            alive: node.is_alive(),
            content: node.content().map(|content| String::from_utf8(content.to_vec()).expect("text written as UTF-8")),
        }))
    }
}
