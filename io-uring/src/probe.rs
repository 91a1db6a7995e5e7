//! The runtime probe: can this process use io_uring, with every operation the backend needs?
//! Where it cannot (an old kernel, io_uring compiled out or switched off, a seccomp filter), the
//! answer is an error that says why, never a silent fallback to another backend.

use std::fmt;
use std::io;
use std::sync::Arc;

use io_uring::opcode;

use crate::ring::{errno, Counters, Ring};

/// io_uring cannot be used here; the message says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    reason: String,
}

impl Unavailable {
    /// Why io_uring cannot be used.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Explains a failure to create an io_uring instance.
    pub(crate) fn from_setup_error(error: &io::Error) -> Unavailable {
        let reason = match error.raw_os_error() {
            Some(errno::ENOSYS) => String::from(
                "the kernel has no io_uring system calls (ENOSYS): it is older than Linux 5.1 or was built without io_uring",
            ),
            Some(errno::EPERM) => permission_reason(read_disabled_setting()),
            _ => format!("creating an io_uring instance failed: {error}"),
        };
        Unavailable { reason }
    }

    fn missing_operation(name: &str) -> Unavailable {
        Unavailable {
            reason: format!("the kernel's io_uring lacks the {name} operation (it needs Linux 5.6 or later)"),
        }
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "io_uring is unavailable: {}; use the std files backend instead", self.reason)
    }
}

impl std::error::Error for Unavailable {}

impl From<Unavailable> for io::Error {
    fn from(unavailable: Unavailable) -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, unavailable)
    }
}

/// The value of the `kernel.io_uring_disabled` setting, where the kernel has it.
fn read_disabled_setting() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok()?.trim().parse().ok()
}

/// Why the kernel said EPERM, from what `kernel.io_uring_disabled` holds.
fn permission_reason(disabled: Option<u8>) -> String {
    match disabled {
        Some(2) => String::from("it is switched off for every process by the sysctl kernel.io_uring_disabled = 2 (EPERM)"),
        Some(1) => String::from(
            "the sysctl kernel.io_uring_disabled = 1 allows it only to the group in kernel.io_uring_group, and this process is not in it (EPERM)",
        ),
        _ => String::from("a seccomp filter or security policy forbids the io_uring system calls (EPERM)"),
    }
}

/// Creates a first ring and checks that the kernel supports every operation the backend
/// submits; the ring is kept for use.
pub(crate) fn probe(counters: Arc<Counters>) -> Result<Ring, Unavailable> {
    let ring = Ring::new(counters).map_err(|error| Unavailable::from_setup_error(&error))?;
    let supported = ring.probe().map_err(|error| Unavailable {
        reason: format!("the kernel cannot list its io_uring operations (it needs Linux 5.6 or later): {error}"),
    })?;
    let needed = [("read", opcode::Read::CODE), ("write", opcode::Write::CODE), ("fsync", opcode::Fsync::CODE)];
    for (name, code) in needed {
        if !supported.is_supported(code) {
            return Err(Unavailable::missing_operation(name));
        }
    }
    Ok(ring)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_io_uring_is_named_as_the_reason() {
        let unavailable = Unavailable::from_setup_error(&io::Error::from_raw_os_error(errno::ENOSYS));
        let message = unavailable.to_string();
        assert!(message.starts_with("io_uring is unavailable: the kernel has no io_uring system calls (ENOSYS)"));
        assert!(message.ends_with("use the std files backend instead"));
    }

    #[test]
    fn a_refusal_names_the_setting_or_the_filter_behind_it() {
        assert!(permission_reason(Some(2)).contains("kernel.io_uring_disabled = 2"));
        assert!(permission_reason(Some(1)).contains("kernel.io_uring_group"));
        assert!(permission_reason(Some(0)).contains("seccomp"));
        assert!(permission_reason(None).contains("EPERM"));
    }

    #[test]
    fn this_kernel_passes_the_probe() {
        probe(Arc::default()).unwrap();
    }
}
