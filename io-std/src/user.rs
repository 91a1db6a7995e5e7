//! The users a process of cheesedb deals with: its own (the owner of every file and socket it
//! makes) and root. A client talks only to a server of one of them, and a server serves only
//! them, so a socket or a peer of another user can neither collect tokens nor reach an agent.

/// The effective user of this process, as the kernel reports it for a socket's peer.
pub(crate) fn this_user() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Whether `uid` is this process's user or root.
pub(crate) fn is_own_or_root(uid: u32) -> bool {
    uid == this_user() || uid == 0
}
