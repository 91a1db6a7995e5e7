//! A connection's socket with the server's patience: unbounded while a client is quiet between
//! requests, bounded once it started a frame, while it should read an answer, and between the
//! steps of a batch it opened.
//!
//! The socket's timeout is changed only when a read must wait for more bytes, so a request that
//! arrives whole costs no extra system call. Between frames the reader looks for the next one
//! for a few tens of microseconds before it sleeps: a client sending its next request at once
//! (a loop of gets, a writer) then finds the thread awake, where waking a sleeping one can cost,
//! on a virtual machine with idle processors, several times the request's own work.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// The read half of a connection, with a deadline while a frame is coming in.
pub struct TimedReader {
    stream: UnixStream,
    /// When the frame coming in must be whole; `None` between frames.
    deadline: Option<Instant>,
    /// How long a wait between frames may last (`None`: forever).
    idle_limit: Option<Duration>,
    /// The timeout the socket has now.
    applied: Option<Duration>,
}

impl TimedReader {
    /// Reads from `stream`, between frames to begin with.
    pub fn new(stream: UnixStream) -> TimedReader {
        TimedReader { stream, deadline: None, idle_limit: None, applied: None }
    }

    /// A frame started: it must be whole within `limit`.
    pub fn start_frame(&mut self, limit: Duration) {
        self.deadline = Some(Instant::now() + limit);
    }

    /// Between frames: the next may take up to `idle_limit` to start (`None`: no limit).
    pub fn between_frames(&mut self, idle_limit: Option<Duration>) {
        self.deadline = None;
        self.idle_limit = idle_limit;
    }

    fn apply(&mut self, wanted: Option<Duration>) -> io::Result<()> {
        if wanted != self.applied {
            self.stream.set_read_timeout(wanted)?;
            self.applied = wanted;
        }
        Ok(())
    }
}

impl Read for TimedReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let wanted = match self.deadline {
            None => self.idle_limit,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::from(io::ErrorKind::TimedOut));
                }
                Some(left)
            }
        };
        self.apply(wanted)?;
        if self.deadline.is_none() {
            poll_readable(&self.stream, POLL_BEFORE_SLEEP);
        }
        self.stream.read(buffer)
    }
}

/// How long to look for the next request before sleeping: about a client's turnaround.
const POLL_BEFORE_SLEEP: Duration = Duration::from_micros(50);

/// Polls `stream` for up to `limit` until bytes can be read (or the peer closed it), yielding
/// the processor between looks; any error is left to the read that follows.
fn poll_readable(stream: &UnixStream, limit: Duration) {
    let started = Instant::now();
    let mut byte = [0u8; 1];
    loop {
        match rustix::net::recv(stream, &mut byte[..], rustix::net::RecvFlags::PEEK | rustix::net::RecvFlags::DONTWAIT)
        {
            Err(rustix::io::Errno::AGAIN) if started.elapsed() < limit => std::thread::yield_now(),
            _ => return,
        }
    }
}

/// Writes all of `bytes` to `stream` (whose write timeout is set) before `deadline`: a client
/// that reads slowly gets no longer than one that does not read at all.
pub fn write_before(stream: &mut UnixStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        match stream.write(bytes) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(written) => bytes = bytes.get(written..).unwrap_or_default(),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
        if !bytes.is_empty() && Instant::now() >= deadline {
            return Err(io::Error::from(io::ErrorKind::TimedOut));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_frame_times_out_and_an_idle_wait_does_not_before_its_limit() {
        let (one, mut other) = UnixStream::pair().unwrap();
        let mut reader = TimedReader::new(one);
        other.write_all(b"a").unwrap();
        let mut byte = [0u8; 1];
        reader.read_exact(&mut byte).unwrap();
        reader.start_frame(Duration::from_millis(50));
        let started = Instant::now();
        let error = reader.read_exact(&mut byte).unwrap_err();
        assert!(matches!(error.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock), "{error:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
        reader.between_frames(Some(Duration::from_millis(20)));
        assert!(reader.read_exact(&mut byte).is_err());
    }

    #[test]
    fn a_client_that_does_not_read_is_given_up() {
        let (mut one, _other) = UnixStream::pair().unwrap();
        one.set_write_timeout(Some(Duration::from_millis(20))).unwrap();
        let big = vec![0u8; 16 * 1024 * 1024];
        let deadline = Instant::now() + Duration::from_millis(100);
        assert!(write_before(&mut one, &big, deadline).is_err());
    }
}
