//! [`Io`]: which system interface a store's files go through, chosen when the store is opened.

use std::fmt;
use std::str::FromStr;

/// How a [`Store`](crate::Store) reaches its files. Both write the same bytes and keep the same
/// promises; they differ only in the system calls.
///
/// ```
/// use cheesedb::Io;
///
/// assert_eq!("uring".parse::<Io>(), Ok(Io::Uring));
/// assert_eq!(Io::default(), Io::Std);
/// assert!("mmap".parse::<Io>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Io {
    /// Ordinary system calls: `pwrite`, `fdatasync` (`F_FULLFSYNC` on macOS). Works everywhere.
    #[default]
    Std,
    /// Linux io_uring: the writes of a durable write and their `fdatasync` go to the kernel in
    /// one submission. Opening fails, saying why, where the kernel does not offer it.
    Uring,
}

impl Io {
    /// The name that [`FromStr`] accepts: `std` or `uring`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Io::Std => "std",
            Io::Uring => "uring",
        }
    }
}

impl fmt::Display for Io {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// The text names no [`Io`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownIo {
    /// The text that was given.
    pub text: String,
}

impl fmt::Display for UnknownIo {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "unknown I/O backend {:?}: expected \"std\" or \"uring\"", self.text)
    }
}

impl std::error::Error for UnknownIo {}

impl FromStr for Io {
    type Err = UnknownIo;

    fn from_str(text: &str) -> Result<Io, UnknownIo> {
        match text {
            "std" => Ok(Io::Std),
            "uring" => Ok(Io::Uring),
            _ => Err(UnknownIo { text: text.to_string() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_to_their_backend() {
        for io in [Io::Std, Io::Uring] {
            assert_eq!(io.to_string().parse::<Io>(), Ok(io));
        }
        let unknown = "URING".parse::<Io>().unwrap_err();
        assert_eq!(unknown.to_string(), "unknown I/O backend \"URING\": expected \"std\" or \"uring\"");
    }
}
