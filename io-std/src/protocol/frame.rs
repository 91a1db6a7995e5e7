//! Frames: a body's length as a `u32` little-endian, then the body. The limit is checked on the
//! length alone, before any byte of the body is read or any memory is set aside for it.

use std::io::{self, Read, Write};

use cheesedb_core::limits::CONTENT_MAX_BYTES;
use cheesedb_core::MessageProblem;

use crate::Error;

/// Decodes one whole message from a frame's body: `Error::MalformedMessage` saying `not_one`
/// for bytes that do not decode, or that leave bytes over. Never panics, whatever the bytes.
pub(crate) fn decode_whole<T: serde::de::DeserializeOwned>(bytes: &[u8], not_one: MessageProblem) -> Result<T, Error> {
    let (message, rest) =
        postcard::take_from_bytes::<T>(bytes).map_err(|_| Error::MalformedMessage { reason: not_one })?;
    if !rest.is_empty() {
        return Err(Error::MalformedMessage { reason: MessageProblem::BytesLeftOver });
    }
    Ok(message)
}

/// The version a hello announces, read from a body's first bytes alone: each side's hello is
/// the first variant of its enum and starts with the version. `None` for another message.
pub(crate) fn hello_version(bytes: &[u8]) -> Option<u32> {
    let (variant, rest) = postcard::take_from_bytes::<u32>(bytes).ok()?;
    if variant != 0 {
        return None;
    }
    postcard::take_from_bytes::<u32>(rest).ok().map(|(version, _)| version)
}

/// Bytes of a frame's length.
pub const FRAME_LENGTH_BYTES: usize = 4;

/// What a frame holds besides the largest content: a label, legs, a vector, the encoding.
const FRAME_OVERHEAD_BYTES: usize = 256 * 1024;

/// The largest body of a frame: the largest content a lot or memory may have, plus room for
/// what comes with it.
pub const FRAME_MAX_BYTES: usize = CONTENT_MAX_BYTES + FRAME_OVERHEAD_BYTES;

/// The body read at a time while a frame comes in: a peer that announces a large frame and
/// sends little gets no more memory than it sent.
const READ_STEP_BYTES: u64 = 64 * 1024;

/// Why a frame could not be read or written.
#[derive(Debug)]
pub enum FrameError {
    /// The body is over [`FRAME_MAX_BYTES`]: refused before any of it was read or written.
    TooLarge {
        /// The body's size.
        size_bytes: u64,
    },
    /// The stream failed, or the peer closed it in the middle of a frame (`UnexpectedEof`).
    Io(io::Error),
}

impl FrameError {
    /// The error a caller of the client sees: `Error::FrameTooLarge`, or for a failed stream
    /// `Error::ConnectionLost` (`write_in_flight` says whether the request was a write).
    #[must_use]
    pub fn into_error(self, write_in_flight: bool) -> Error {
        match self {
            FrameError::TooLarge { size_bytes } => Error::FrameTooLarge { size_bytes, limit_bytes: limit_bytes() },
            FrameError::Io(error) => Error::ConnectionLost { reason: describe_io(&error), write_in_flight },
        }
    }
}

/// A failed stream in a few words.
fn describe_io(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::UnexpectedEof => String::from("the server closed the connection"),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => String::from("timed out"),
        _ => error.to_string(),
    }
}

/// Writes `body` as one frame with one write.
///
/// # Errors
///
/// `FrameError::TooLarge` for a body over [`FRAME_MAX_BYTES`] (nothing is written);
/// `FrameError::Io` when the writer fails.
pub fn write_frame(writer: &mut impl Write, body: &[u8]) -> Result<(), FrameError> {
    let length = checked_length(body.len())?;
    let mut frame = Vec::with_capacity(FRAME_LENGTH_BYTES + body.len());
    frame.extend_from_slice(&length.to_le_bytes());
    frame.extend_from_slice(body);
    writer.write_all(&frame).map_err(FrameError::Io)?;
    writer.flush().map_err(FrameError::Io)
}

/// The length of a body of `size` bytes as a frame carries it.
fn checked_length(size: usize) -> Result<u32, FrameError> {
    let too_large = || FrameError::TooLarge { size_bytes: u64::try_from(size).unwrap_or(u64::MAX) };
    if size > FRAME_MAX_BYTES {
        return Err(too_large());
    }
    u32::try_from(size).map_err(|_| too_large())
}

/// [`FRAME_MAX_BYTES`] as a `u64`.
fn limit_bytes() -> u64 {
    u64::try_from(FRAME_MAX_BYTES).unwrap_or(u64::MAX)
}

/// Reads the length of the next frame: `Ok(None)` when the peer closed the connection before
/// its first byte.
///
/// # Errors
///
/// `FrameError::TooLarge` for a length over [`FRAME_MAX_BYTES`]; `FrameError::Io` when
/// reading fails or the peer closes within the length.
pub fn read_frame_length(reader: &mut impl Read) -> Result<Option<usize>, FrameError> {
    let mut length = [0u8; FRAME_LENGTH_BYTES];
    let mut filled = 0;
    while filled < FRAME_LENGTH_BYTES {
        let Some(rest) = length.get_mut(filled..) else { break };
        match reader.read(rest) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Io(io::Error::from(io::ErrorKind::UnexpectedEof))),
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(FrameError::Io(error)),
        }
    }
    let size = u32::from_le_bytes(length);
    let size_bytes = u64::from(size);
    if size_bytes > limit_bytes() {
        return Err(FrameError::TooLarge { size_bytes });
    }
    usize::try_from(size).map(Some).map_err(|_| FrameError::TooLarge { size_bytes })
}

/// Reads a body of `size` bytes (a length [`read_frame_length`] returned) into `body`,
/// replacing what it held. Memory grows with what arrives, not with what was announced.
///
/// # Errors
///
/// The reader's error; `UnexpectedEof` when the peer closes before the body is whole.
pub fn read_frame_body(reader: &mut impl Read, size: usize, body: &mut Vec<u8>) -> io::Result<()> {
    body.clear();
    let size_bytes = u64::try_from(size).unwrap_or(u64::MAX);
    let mut remaining = size_bytes;
    while remaining > 0 {
        let step = remaining.min(READ_STEP_BYTES);
        let read = reader.by_ref().take(step).read_to_end(body)?;
        if read == 0 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        remaining -= u64::try_from(read).unwrap_or(u64::MAX).min(remaining);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_of(body: &[u8]) -> Vec<u8> {
        let mut frame = Vec::new();
        write_frame(&mut frame, body).unwrap();
        frame
    }

    #[test]
    fn a_frame_reads_back_as_written() {
        let frame = frame_of(b"hello");
        let mut reader = &frame[..];
        let size = read_frame_length(&mut reader).unwrap().unwrap();
        let mut body = Vec::new();
        read_frame_body(&mut reader, size, &mut body).unwrap();
        assert_eq!(body, b"hello");
        assert_eq!(read_frame_length(&mut reader).unwrap(), None, "the end after a whole frame");
    }

    #[test]
    fn a_length_over_the_limit_is_refused_before_the_body() {
        let frame = u32::MAX.to_le_bytes();
        let refused = read_frame_length(&mut &frame[..]);
        assert!(matches!(refused, Err(FrameError::TooLarge { size_bytes: 4_294_967_295 })), "{refused:?}");
        let just_over = u32::try_from(FRAME_MAX_BYTES + 1).unwrap().to_le_bytes();
        assert!(matches!(read_frame_length(&mut &just_over[..]), Err(FrameError::TooLarge { .. })));
        let at_limit = u32::try_from(FRAME_MAX_BYTES).unwrap().to_le_bytes();
        assert_eq!(read_frame_length(&mut &at_limit[..]).unwrap(), Some(FRAME_MAX_BYTES));
    }

    #[test]
    fn a_body_over_the_limit_is_not_written() {
        let mut written = Vec::new();
        let body = vec![0u8; FRAME_MAX_BYTES + 1];
        assert!(matches!(write_frame(&mut written, &body), Err(FrameError::TooLarge { .. })));
        assert!(written.is_empty());
    }

    #[test]
    fn a_cut_frame_is_an_unexpected_end() {
        let frame = frame_of(b"hello");
        let mut reader = &frame[..6];
        let size = read_frame_length(&mut reader).unwrap().unwrap();
        let error = read_frame_body(&mut reader, size, &mut Vec::new()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
        let cut = read_frame_length(&mut &frame[..2]);
        assert!(matches!(cut, Err(FrameError::Io(error)) if error.kind() == io::ErrorKind::UnexpectedEof));
    }

    #[test]
    fn an_announced_size_sets_no_memory_aside() {
        let mut body = Vec::new();
        let outcome = read_frame_body(&mut &b"abc"[..], FRAME_MAX_BYTES, &mut body);
        assert!(outcome.is_err());
        assert!(body.capacity() < 1024 * 1024, "capacity {}", body.capacity());
    }
}
