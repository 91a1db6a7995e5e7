//! Every size the engine accepts has a limit; each violation is `Error::LimitExceeded` and
//! writes nothing.

use crate::error::Error;
use crate::error_facts::Limit;

/// The largest content of one lot or memory.
pub const CONTENT_MAX_BYTES: usize = 16 * 1024 * 1024;
/// The longest lot label.
pub const LABEL_MAX_BYTES: usize = 256;
/// The longest agent name.
pub const AGENT_NAME_MAX_BYTES: usize = 256;
/// The most legs one memory may have.
pub const LEGS_PER_MEMORY_MAX: usize = 64;
/// The most parents one leg may have.
pub const PARENTS_PER_LEG_MAX: usize = 64;
/// The most numbers one vector may have (the largest embedding models give a few thousand).
pub const VECTOR_DIMENSION_MAX: usize = 8192;
/// The most lots and memories one batch may write.
pub const BATCH_MAX_RECORDS: usize = 65_536;
/// The most bytes one batch may write.
pub const BATCH_MAX_BYTES: usize = 64 * 1024 * 1024;
/// The most lots and memories one agent may ever hold (ids are packed into 30 bits in RAM).
pub const NODES_PER_AGENT_MAX: u64 = (1 << 30) - 1;
/// The most segment files one agent may have (segment numbers are kept in 16 bits in RAM).
pub const SEGMENTS_PER_AGENT_MAX: u64 = u16::MAX as u64;
/// The most sealed segment files one open agent keeps open (besides its active segment): sealed
/// segments are opened when read, so the files an agent holds do not grow with its segments.
///
/// Reads of recent nodes touch the last few segments and an erasure usually one or two, so eight
/// keeps those open; verification and compaction read each segment once, in order, and would
/// gain nothing from more. With the active file an agent holds at most nine descriptors (ten
/// while an operation has a file of its own open), so a hundred open agents fit under the common
/// limit of 1,024.
pub const SEALED_FILES_OPEN_MAX: usize = 8;
/// The most agents one store may hold.
pub const AGENTS_PER_STORE_MAX: usize = 65_536;
/// The most spaces one store holds (they are listed in the catalog beside the agents).
pub const SPACES_PER_STORE_MAX: usize = 4_096;
/// The most agents that hold a role in one space at once.
pub const MEMBERS_PER_SPACE_MAX: usize = 1_024;
/// The smallest segment size a store may be configured with.
pub const SEGMENT_MIN_BYTES: u64 = 4 * 1024;
/// The largest segment size (record offsets are kept in 32 bits in RAM).
pub const SEGMENT_MAX_BYTES: u64 = u32::MAX as u64 / 2;

/// Returns `LimitExceeded` when `size` is over `limit`.
pub(crate) fn check(what: Limit, size: usize, limit: usize) -> Result<(), Error> {
    if size > limit {
        return Err(Error::LimitExceeded { what, size: size as u64, limit: limit as u64 });
    }
    Ok(())
}

/// The largest stretch of zeros written ahead of the active segment's writes.
pub const PREALLOCATE_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Tunable settings of a store; the defaults suit most uses. Build one from
/// `Options::default()` with the chainable setters, so that settings added later do not break
/// code that sets the ones it knows:
///
/// ```
/// let options = cheesedb_core::Options::default().segment_size_max_bytes(4096).preallocate_bytes(0);
/// assert_eq!(options.segment_size_max_bytes, 4096);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// A segment is sealed and a new one started once it grows past this size.
    pub segment_size_max_bytes: u64,
    /// A snapshot of the recall graph is written when the agent is closed, or a segment is
    /// sealed, once the log has grown by this much since the last one (an eighth of it for an
    /// encrypted agent, whose replay opens a key per record); open then replays only what
    /// follows it. `u64::MAX` turns snapshots off.
    pub snapshot_after_bytes: u64,
    /// The active segment is extended with this many zero bytes at a time, ahead of the writes,
    /// so that most durable writes change no file size (and need no metadata flush). Zero
    /// turns this off.
    pub preallocate_bytes: u64,
    /// Compaction starts by itself once this many recalled lots and memories still keep their
    /// text in the files (an Untrusted recall leaves it there): a host that runs it in the
    /// background (the library does) rewrites one segment at a time, so a write waits for at
    /// most one segment's rewrite. Zero turns this off.
    pub auto_compact_dead_nodes: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            segment_size_max_bytes: 64 * 1024 * 1024,
            snapshot_after_bytes: 4 * 1024 * 1024,
            preallocate_bytes: 256 * 1024,
            auto_compact_dead_nodes: 10_000,
        }
    }
}

impl Options {
    /// Sets the size past which a segment is sealed and a new one started.
    #[must_use]
    pub fn segment_size_max_bytes(mut self, bytes: u64) -> Options {
        self.segment_size_max_bytes = bytes;
        self
    }

    /// Sets how much the log grows between snapshots of the recall graph; `u64::MAX` turns
    /// snapshots off.
    #[must_use]
    pub fn snapshot_after_bytes(mut self, bytes: u64) -> Options {
        self.snapshot_after_bytes = bytes;
        self
    }

    /// Sets the stretch of zeros written ahead of the active segment's writes; zero turns it
    /// off.
    #[must_use]
    pub fn preallocate_bytes(mut self, bytes: u64) -> Options {
        self.preallocate_bytes = bytes;
        self
    }

    /// Sets how many recalled nodes may keep their text in the files before compaction starts
    /// by itself; zero turns automatic compaction off.
    #[must_use]
    pub fn auto_compact_dead_nodes(mut self, nodes: u64) -> Options {
        self.auto_compact_dead_nodes = nodes;
        self
    }

    /// Checks the settings, clamping nothing silently.
    ///
    /// # Errors
    ///
    /// `Error::LimitExceeded` when the preallocation or the segment size is out of its range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.preallocate_bytes > PREALLOCATE_MAX_BYTES {
            return Err(Error::LimitExceeded {
                what: Limit::PreallocateBytes,
                size: self.preallocate_bytes,
                limit: PREALLOCATE_MAX_BYTES,
            });
        }
        let size = self.segment_size_max_bytes;
        if !(SEGMENT_MIN_BYTES..=SEGMENT_MAX_BYTES).contains(&size) {
            return Err(Error::LimitExceeded { what: Limit::SegmentBytes, size, limit: SEGMENT_MAX_BYTES });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_refuses_only_sizes_over_the_limit() {
        assert!(check(Limit::LabelBytes, 256, LABEL_MAX_BYTES).is_ok());
        assert!(matches!(
            check(Limit::LabelBytes, 257, LABEL_MAX_BYTES),
            Err(Error::LimitExceeded { size: 257, limit: 256, .. })
        ));
    }

    #[test]
    fn options_refuse_tiny_segments() {
        let options = Options::default().segment_size_max_bytes(10);
        assert!(options.validate().is_err());
        assert!(Options::default().validate().is_ok());
    }

    #[test]
    fn setters_change_only_their_own_setting() {
        let options = Options::default().segment_size_max_bytes(4096).snapshot_after_bytes(7).preallocate_bytes(3);
        assert_eq!(
            (options.segment_size_max_bytes, options.snapshot_after_bytes, options.preallocate_bytes),
            (4096, 7, 3)
        );
        let default = Options::default();
        assert_eq!(Options::default().preallocate_bytes(0).segment_size_max_bytes, default.segment_size_max_bytes);
        let off = Options::default().auto_compact_dead_nodes(0);
        assert_eq!((off.auto_compact_dead_nodes, off.preallocate_bytes), (0, default.preallocate_bytes));
        assert_eq!(default.auto_compact_dead_nodes, 10_000);
    }
}
