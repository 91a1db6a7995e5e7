//! One io_uring instance and the one way this crate drives it: push a list of operations,
//! submit them, and return only when the kernel is done with every buffer they name.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use io_uring::{opcode, squeue, types, IoUring};

/// Entries of a ring's submission queue: the most operations one submission carries.
pub(crate) const RING_ENTRIES: u32 = 64;

/// The largest buffer of one operation; longer writes and reads are split. The kernel moves at
/// most about 2 GiB per call, and the length field is 32 bits.
pub(crate) const OPERATION_MAX_BYTES: usize = 1 << 30;

/// How long to sleep between looks at the completion queue once the ring itself has failed but
/// operations are still in flight (their buffers must outlive them).
const STRANDED_WAIT: Duration = Duration::from_millis(1);

/// What the rings of one storage have done, for tests and benchmarks that must see io_uring at
/// work rather than a silent fallback.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// `io_uring_enter` calls that handed operations to the kernel.
    pub(crate) submissions: AtomicU64,
    /// Operations handed to the kernel.
    pub(crate) operations: AtomicU64,
}

/// The file an operation acts on: a plain descriptor, or slot 0 of the ring's file table.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Plain(RawFd),
    Registered,
}

/// One operation, borrowing its buffer for as long as [`Ring::run`] runs.
#[derive(Debug)]
pub(crate) enum Operation<'a> {
    Write {
        target: Target,
        offset: u64,
        bytes: &'a [u8],
    },
    Read {
        target: Target,
        offset: u64,
        buffer: &'a mut [u8],
    },
    /// `fdatasync`: the data and the metadata needed to read it back (the length).
    SyncData {
        target: Target,
    },
    /// `fsync`: everything, as a folder needs for its entries.
    SyncAll {
        target: Target,
    },
}

/// An io_uring instance with a one-slot table of registered files.
pub(crate) struct Ring {
    ring: IoUring,
    /// Whether the ring has a file table (registered files may be missing on old kernels).
    has_file_table: bool,
    /// The descriptor in slot 0 of the file table, while a file owns the ring.
    registered: Option<RawFd>,
    counters: Arc<Counters>,
    /// Set when the kernel refused a submission: the ring is never entered again, so entries it
    /// did not read are never read.
    broken: bool,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Ring")
            .field("registered", &self.registered)
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

fn is_transient(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(code) if code == errno::EINTR || code == errno::EAGAIN || code == errno::EBUSY)
}

/// The `errno` values this crate names, as the kernel of this architecture numbers them.
pub(crate) mod errno {
    use rustix::io::Errno;

    pub(crate) const EPERM: i32 = Errno::PERM.raw_os_error();
    pub(crate) const EINTR: i32 = Errno::INTR.raw_os_error();
    pub(crate) const EAGAIN: i32 = Errno::AGAIN.raw_os_error();
    pub(crate) const EBUSY: i32 = Errno::BUSY.raw_os_error();
    pub(crate) const EINVAL: i32 = Errno::INVAL.raw_os_error();
    pub(crate) const ENOSYS: i32 = Errno::NOSYS.raw_os_error();
    pub(crate) const ECANCELED: i32 = Errno::CANCELED.raw_os_error();
}

impl Ring {
    /// A new ring. Cooperative task running (fewer interrupts) is asked for where the kernel has it.
    pub(crate) fn new(counters: Arc<Counters>) -> io::Result<Ring> {
        let ring = match IoUring::builder().setup_coop_taskrun().build(RING_ENTRIES) {
            Ok(ring) => ring,
            Err(error) if error.raw_os_error() == Some(errno::EINVAL) => IoUring::new(RING_ENTRIES)?,
            Err(error) => return Err(error),
        };
        let has_file_table = ring.submitter().register_files_sparse(1).is_ok();
        Ok(Ring { ring, has_file_table, registered: None, counters, broken: false })
    }

    /// The kernel's list of supported operations.
    pub(crate) fn probe(&self) -> io::Result<io_uring::Probe> {
        let mut probe = io_uring::Probe::new();
        self.ring.submitter().register_probe(&mut probe)?;
        Ok(probe)
    }

    /// Whether the kernel refused this ring a submission; a broken ring is dropped, never reused.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// Puts `fd` in the file table so operations on it skip the kernel's descriptor lookup.
    /// The caller keeps `fd` open until [`Ring::release_file`].
    pub(crate) fn assign_file(&mut self, fd: RawFd) -> Target {
        if self.registered == Some(fd) {
            return Target::Registered;
        }
        if self.has_file_table && self.ring.submitter().register_files_update(0, &[fd]).is_ok() {
            self.registered = Some(fd);
            return Target::Registered;
        }
        Target::Plain(fd)
    }

    /// Empties the file table before the owning file closes its descriptor, so the ring holds
    /// no reference to a closed (perhaps removed) file. A ring that cannot be emptied is broken.
    pub(crate) fn release_file(&mut self) {
        if self.registered.take().is_some() && self.ring.submitter().register_files_update(0, &[-1]).is_err() {
            self.broken = true;
        }
    }

    /// Runs `operations` in one submission and returns each one's result (bytes moved, or a
    /// negated errno), in order. With `chained`, each operation starts only after the one
    /// before it succeeded (`IO_LINK`); after a failure the rest end with `-ECANCELED`.
    ///
    /// Returns only when every operation the kernel read has completed, whatever fails: the
    /// buffers are borrowed for exactly that long.
    #[allow(unsafe_code)]
    pub(crate) fn run(&mut self, operations: &mut [Operation<'_>], chained: bool) -> io::Result<Vec<i32>> {
        if self.broken {
            return Err(io::Error::other("the io_uring instance failed earlier"));
        }
        if operations.len() > RING_ENTRIES as usize {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "more operations than ring entries"));
        }
        let count = operations.len();
        let mut entries = Vec::with_capacity(count);
        for (index, operation) in operations.iter_mut().enumerate() {
            let link = chained && index + 1 < count;
            entries.push(entry(operation, index as u64, link)?);
        }
        // SAFETY: every entry points into a buffer of `operations`, which this function borrows
        // until it returns, and it returns only after `wait_all` has seen the completion of
        // every entry the kernel read (an entry it never read is never read later: the ring is
        // then marked broken and not entered again). The submission queue is empty here, since
        // every earlier `run` waited for all of its entries, so the push cannot overflow.
        let pushed = unsafe { self.ring.submission().push_multiple(&entries) };
        if pushed.is_err() {
            return Err(io::Error::other("the io_uring submission queue is full"));
        }
        self.counters.operations.fetch_add(count as u64, Ordering::Relaxed);
        self.wait_all(count)
    }

    /// Submits what is queued and collects `count` completions; see [`Ring::run`].
    fn wait_all(&mut self, count: usize) -> io::Result<Vec<i32>> {
        let mut results: Vec<Option<i32>> = vec![None; count];
        let mut collected = 0;
        let mut failure: Option<io::Error> = None;
        loop {
            for completion in self.ring.completion() {
                let slot = usize::try_from(completion.user_data()).ok().and_then(|index| results.get_mut(index));
                if let Some(slot @ None) = slot {
                    *slot = Some(completion.result());
                    collected += 1;
                }
            }
            if collected == count {
                break;
            }
            let unread = self.ring.submission().len();
            if failure.is_some() {
                if collected + unread >= count {
                    break; // What is left was never read by the kernel, and never will be.
                }
                // Operations are in flight and the ring refuses to wait: their completions
                // still arrive (task work runs on the way back from any system call).
                std::thread::sleep(STRANDED_WAIT);
                continue;
            }
            if unread > 0 {
                self.counters.submissions.fetch_add(1, Ordering::Relaxed);
            }
            match self.ring.submit_and_wait(count - collected) {
                Ok(_) => {}
                Err(error) if is_transient(&error) => {}
                Err(error) => failure = Some(error),
            }
        }
        if let Some(error) = failure {
            self.broken = true;
            return Err(error);
        }
        Ok(results.into_iter().map(|result| result.unwrap_or(-errno::ECANCELED)).collect())
    }
}

/// The submission entry of one operation, tagged with its index.
fn entry(operation: &mut Operation<'_>, index: u64, link: bool) -> io::Result<squeue::Entry> {
    let length = |bytes: usize| {
        u32::try_from(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "operation larger than 4 GiB"))
    };
    let entry = match operation {
        Operation::Write { target, offset, bytes } => {
            let length = length(bytes.len())?;
            match *target {
                Target::Plain(fd) => opcode::Write::new(types::Fd(fd), bytes.as_ptr(), length).offset(*offset).build(),
                Target::Registered => {
                    opcode::Write::new(types::Fixed(0), bytes.as_ptr(), length).offset(*offset).build()
                }
            }
        }
        Operation::Read { target, offset, buffer } => {
            let length = length(buffer.len())?;
            match *target {
                Target::Plain(fd) => {
                    opcode::Read::new(types::Fd(fd), buffer.as_mut_ptr(), length).offset(*offset).build()
                }
                Target::Registered => {
                    opcode::Read::new(types::Fixed(0), buffer.as_mut_ptr(), length).offset(*offset).build()
                }
            }
        }
        Operation::SyncData { target } => match *target {
            Target::Plain(fd) => opcode::Fsync::new(types::Fd(fd)).flags(types::FsyncFlags::DATASYNC).build(),
            Target::Registered => opcode::Fsync::new(types::Fixed(0)).flags(types::FsyncFlags::DATASYNC).build(),
        },
        Operation::SyncAll { target } => match *target {
            Target::Plain(fd) => opcode::Fsync::new(types::Fd(fd)).build(),
            Target::Registered => opcode::Fsync::new(types::Fixed(0)).build(),
        },
    };
    let flags = if link { squeue::Flags::IO_LINK } else { squeue::Flags::empty() };
    Ok(entry.flags(flags).user_data(index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_chained_write_and_sync_complete_in_one_submission() {
        let folder = tempfile::tempdir().unwrap();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(folder.path().join("f"))
            .unwrap();
        let counters = Arc::new(Counters::default());
        let mut ring = Ring::new(counters.clone()).unwrap();
        let target = ring.assign_file(file.as_raw_fd());
        let mut operations = [Operation::Write { target, offset: 2, bytes: b"hello" }, Operation::SyncData { target }];
        assert_eq!(ring.run(&mut operations, true).unwrap(), vec![5, 0]);
        assert_eq!(counters.submissions.load(Ordering::Relaxed), 1);
        assert_eq!(counters.operations.load(Ordering::Relaxed), 2);
        let mut back = [0u8; 7];
        file.read_exact_at(&mut back, 0).unwrap();
        assert_eq!(&back, b"\0\0hello");
        ring.release_file();
        assert!(!ring.is_broken());
    }

    #[test]
    fn a_failed_write_cancels_the_sync_linked_to_it() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("read-only");
        std::fs::write(&path, b"x").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut ring = Ring::new(Arc::default()).unwrap();
        let target = Target::Plain(file.as_raw_fd());
        let mut operations = [Operation::Write { target, offset: 0, bytes: b"no" }, Operation::SyncData { target }];
        let results = ring.run(&mut operations, true).unwrap();
        assert!(results[0] < 0, "writing to a read-only descriptor fails");
        assert_eq!(results[1], -errno::ECANCELED);
    }
}
