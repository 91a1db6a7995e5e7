//! One connection to the memory server: frames out and in, one request at a time.

use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::path::Path;

use cheesedb_core::{Error, MessageProblem};

use crate::protocol::{
    read_frame_body, read_frame_length, write_frame, FrameError, Request, Response, PROTOCOL_VERSION,
};

use super::peer::check_server_user;
use super::readable::{poll_readable, POLL_BEFORE_SLEEP};
use crate::process::OpeningProcess;

/// Bytes the reader keeps: a `get` answer and its frame arrive with one read.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// A connection that said hello. After a broken stream or a message that is not one of the
/// protocol, every later request fails at once: the server may be halfway through a frame. In
/// a process forked from the one that opened it, nothing is sent or read: the socket is the
/// parent's too, and an answer read here would be missing there.
pub(crate) struct Connection {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    body: Vec<u8>,
    broken: bool,
    process: OpeningProcess,
}

impl Connection {
    /// Connects to the server at `socket` (refusing a link there, or a socket of another user),
    /// checks that it runs as this user (or root), and says hello.
    pub(crate) fn open(socket: &Path) -> Result<Connection, Error> {
        let stream = super::socket::connect(socket)?;
        check_server_user(&stream)?;
        let writer = stream.try_clone().map_err(|error| Error::ServerUnavailable {
            path: socket.display().to_string(),
            reason: error.to_string(),
        })?;
        let mut connection = Connection {
            reader: BufReader::with_capacity(READ_BUFFER_BYTES, stream),
            writer,
            body: Vec::new(),
            broken: false,
            process: OpeningProcess::current(),
        };
        connection.hello()?;
        Ok(connection)
    }

    /// Sends the hello and checks the server's version from the first bytes of its answer, which
    /// every version of the protocol keeps in the same place.
    fn hello(&mut self) -> Result<(), Error> {
        let client = format!("cheesedb {}", env!("CARGO_PKG_VERSION"));
        let request = Request::Hello { version: PROTOCOL_VERSION, client };
        self.send(&request)?;
        self.receive(false)?;
        if let Some(server) = Response::hello_version(&self.body) {
            if server != PROTOCOL_VERSION {
                self.broken = true;
                return Err(Error::VersionMismatch { client: PROTOCOL_VERSION, server });
            }
        }
        match self.decode()? {
            Response::Hello { .. } => Ok(()),
            Response::Failed(error) => Err(error),
            _ => Err(self.unexpected()),
        }
    }

    /// Whether the connection can no longer be used.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// The process that opened the connection, the only one that may use it.
    pub(crate) fn opening_process(&self) -> &OpeningProcess {
        &self.process
    }

    /// Sends `request` and returns the server's answer; a `Failed` answer is returned as its
    /// error.
    pub(crate) fn call(&mut self, request: &Request) -> Result<Response, Error> {
        self.send(request)?;
        self.receive(request.is_write())?;
        match self.decode()? {
            Response::Failed(error) => Err(error),
            response => Ok(response),
        }
    }

    /// Sends `request` and collects a list answered in parts: `part` takes each response apart
    /// into its items and whether more follows, or `None` for a response of another kind.
    pub(crate) fn call_list<T>(
        &mut self,
        request: &Request,
        mut part: impl FnMut(Response) -> Option<(Vec<T>, bool)>,
    ) -> Result<Vec<T>, Error> {
        let mut response = self.call(request)?;
        let mut items = Vec::new();
        loop {
            let Some((mut more_items, more)) = part(response) else { return Err(self.unexpected()) };
            items.append(&mut more_items);
            if !more {
                return Ok(items);
            }
            self.receive(request.is_write())?;
            response = match self.decode()? {
                Response::Failed(error) => return Err(error),
                response => response,
            };
        }
    }

    /// The error for an answer of the wrong kind; the connection is of no further use.
    pub(crate) fn unexpected(&mut self) -> Error {
        self.broken = true;
        Error::MalformedMessage { reason: MessageProblem::UnexpectedResponse }
    }

    fn check_usable(&self, write_in_flight: bool) -> Result<(), Error> {
        self.process.check()?;
        if self.broken {
            return Err(Error::ConnectionLost {
                reason: String::from("an earlier request broke this connection; open the agent again"),
                write_in_flight,
            });
        }
        Ok(())
    }

    /// Writes `request` as one frame. A server that refused the connection (busy, say) may
    /// have closed it before reading: its answer is still read then.
    fn send(&mut self, request: &Request) -> Result<(), Error> {
        self.check_usable(false)?;
        let body = request.encode()?;
        match write_frame(&mut self.writer, &body) {
            Ok(()) => Ok(()),
            Err(FrameError::TooLarge { size_bytes }) => Err(FrameError::TooLarge { size_bytes }.into_error(false)),
            Err(FrameError::Io(error)) => match self.receive(false).and_then(|()| self.decode()) {
                Ok(Response::Failed(refusal)) => {
                    self.broken = true;
                    Err(refusal)
                }
                _ => {
                    self.broken = true;
                    Err(FrameError::Io(error).into_error(request.is_write()))
                }
            },
        }
    }

    /// Reads one frame's body into `self.body`.
    fn receive(&mut self, write_in_flight: bool) -> Result<(), Error> {
        self.check_usable(write_in_flight)?;
        // A write's answer waits for its sync, far longer than a poll: sleep at once.
        if !write_in_flight && self.reader.buffer().is_empty() {
            poll_readable(self.reader.get_ref(), POLL_BEFORE_SLEEP);
        }
        let outcome = match read_frame_length(&mut self.reader) {
            Ok(Some(size)) => read_frame_body(&mut self.reader, size, &mut self.body).map_err(FrameError::Io),
            Ok(None) => Err(FrameError::Io(std::io::Error::from(std::io::ErrorKind::UnexpectedEof))),
            Err(error) => Err(error),
        };
        outcome.map_err(|error| {
            self.broken = true;
            error.into_error(write_in_flight)
        })
    }

    /// Decodes the frame in `self.body`.
    fn decode(&mut self) -> Result<Response, Error> {
        Response::decode(&self.body).inspect_err(|_| self.broken = true)
    }
}
