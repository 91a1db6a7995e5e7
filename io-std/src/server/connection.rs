//! One connection, on a thread of its own: the hello, then one request after another until the
//! client leaves, breaks the protocol's framing, is too slow, or the server stops.

use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Instant;

use crate::protocol::{
    read_frame_body, read_frame_length, FrameError, Request, Response, FRAME_LENGTH_BYTES, PROTOCOL_VERSION,
};
use crate::{Error, MessageProblem};

use super::peer::Peer;
use super::reply::hello;
use super::session::Session;
use super::timed_stream::{write_before, TimedReader};
use super::ServerState;

/// Bytes read from the socket at once: a whole small request comes in one system call.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Why a connection ended (kept for tests and for the server's own messages).
#[derive(Debug)]
pub enum Ended {
    /// The client closed it between requests, or the server stopped.
    Closed,
    /// The client broke the framing, sent something else than a hello first, or was too slow.
    Dropped,
}

/// A connection's socket and buffers.
struct Wire {
    reader: BufReader<TimedReader>,
    writer: UnixStream,
    body: Vec<u8>,
    frame: Vec<u8>,
}

/// Serves the connection `stream` from `peer` until it ends.
pub fn serve(state: &Arc<ServerState>, stream: UnixStream, peer: Peer) -> Ended {
    let timeout = state.settings.client_timeout;
    let Ok(reader) = stream.try_clone() else { return Ended::Dropped };
    if stream.set_write_timeout(Some(timeout)).is_err() {
        return Ended::Dropped;
    }
    let mut wire = Wire {
        reader: BufReader::with_capacity(READ_BUFFER_BYTES, TimedReader::new(reader)),
        writer: stream,
        body: Vec::new(),
        frame: Vec::new(),
    };
    let mut session = Session::new(state.clone(), peer);
    if !wire.hello_exchanged(state) {
        return Ended::Dropped;
    }
    loop {
        let idle_limit = session.batch_open().then_some(timeout);
        match wire.next_request(idle_limit, timeout) {
            Incoming::Request(request) => {
                let responses = session.handle(request).into_responses();
                let sent = wire.send_all(&responses, timeout);
                session.log_served();
                if !sent {
                    return Ended::Dropped;
                }
            }
            Incoming::Undecodable(error) => {
                if !wire.send_all(&[Response::failed(&error)], timeout) {
                    return Ended::Dropped;
                }
            }
            Incoming::Refused(error) => {
                let _ = wire.send_all(&[Response::failed(&error)], timeout);
                return Ended::Dropped;
            }
            Incoming::Closed => return Ended::Closed,
            Incoming::Broken => return Ended::Dropped,
        }
    }
}

/// What came in.
enum Incoming {
    Request(Request),
    /// A whole frame that is not a request: answered, and the connection goes on.
    Undecodable(Error),
    /// A frame that cannot be read (too large): answered, then the connection is closed, since
    /// the stream is no longer at a frame's start.
    Refused(Error),
    /// The client closed the connection between frames (or the server stopped reading).
    Closed,
    /// The stream failed or timed out.
    Broken,
}

impl Wire {
    /// Reads the hello and answers it; false when the connection is to be closed.
    fn hello_exchanged(&mut self, state: &ServerState) -> bool {
        let timeout = state.settings.client_timeout;
        match self.read_frame(Some(timeout), timeout) {
            Ok(true) => {}
            Ok(false) | Err(FrameError::Io(_)) => return false,
            Err(FrameError::TooLarge { size_bytes }) => {
                let refusal = FrameError::TooLarge { size_bytes }.into_error(false);
                let _ = self.send_all(&[Response::failed(&refusal)], timeout);
                return false;
            }
        }
        match Request::hello_version(&self.body) {
            Some(PROTOCOL_VERSION) => self.send_all(&[hello()], timeout),
            // The client reads the version from the answer and refuses; the server closes.
            Some(_) => {
                let _ = self.send_all(&[hello()], timeout);
                false
            }
            None => {
                let refusal = Error::MalformedMessage { reason: MessageProblem::FirstRequestNotHello };
                let _ = self.send_all(&[Response::failed(&refusal)], timeout);
                false
            }
        }
    }

    fn next_request(&mut self, idle_limit: Option<std::time::Duration>, timeout: std::time::Duration) -> Incoming {
        match self.read_frame(idle_limit, timeout) {
            Ok(true) => match Request::decode(&self.body) {
                Ok(request) => Incoming::Request(request),
                Err(error) => Incoming::Undecodable(error),
            },
            Ok(false) => Incoming::Closed,
            Err(FrameError::TooLarge { size_bytes }) => {
                Incoming::Refused(FrameError::TooLarge { size_bytes }.into_error(false))
            }
            Err(FrameError::Io(_)) => Incoming::Broken,
        }
    }

    /// Reads one frame into `self.body`: false when the client closed the connection before it.
    /// The wait for its first byte lasts up to `idle_limit` (`None`: any time); from there the
    /// whole frame must come within `timeout`.
    fn read_frame(
        &mut self,
        idle_limit: Option<std::time::Duration>,
        timeout: std::time::Duration,
    ) -> Result<bool, FrameError> {
        use std::io::BufRead;
        self.reader.get_mut().between_frames(idle_limit);
        let waiting = self.reader.fill_buf().map_err(FrameError::Io)?;
        if waiting.is_empty() {
            return Ok(false);
        }
        self.reader.get_mut().start_frame(timeout);
        let Some(size) = read_frame_length(&mut self.reader)? else { return Ok(false) };
        read_frame_body(&mut self.reader, size, &mut self.body).map_err(FrameError::Io)?;
        Ok(true)
    }

    /// Sends `responses`, each a frame, all within `timeout`: false when the client does not
    /// take them.
    fn send_all(&mut self, responses: &[Response], timeout: std::time::Duration) -> bool {
        let deadline = Instant::now() + timeout;
        for response in responses {
            if !self.encode_frame(response) {
                return false;
            }
            if write_before(&mut self.writer, &self.frame, deadline).is_err() {
                return false;
            }
        }
        true
    }

    /// Encodes `response` as a whole frame in `self.frame`; a response over the frame limit
    /// (which the server's lists are cut to avoid) becomes the error saying so.
    fn encode_frame(&mut self, response: &Response) -> bool {
        self.frame.clear();
        self.frame.extend_from_slice(&[0; FRAME_LENGTH_BYTES]);
        let mut body = std::mem::take(&mut self.body);
        if response.encode_into(&mut body).is_err() {
            return false;
        }
        let too_large = body.len() > crate::protocol::FRAME_MAX_BYTES;
        if too_large {
            let size_bytes = u64::try_from(body.len()).unwrap_or(u64::MAX);
            let refusal = Response::failed(&FrameError::TooLarge { size_bytes }.into_error(false));
            if refusal.encode_into(&mut body).is_err() {
                return false;
            }
        }
        let Ok(length) = u32::try_from(body.len()) else { return false };
        self.frame.splice(..FRAME_LENGTH_BYTES, length.to_le_bytes());
        self.frame.extend_from_slice(&body);
        self.body = body;
        true
    }
}
