//! A store folder must be private to its user: one that others may write to, or that another
//! user owns, could have had its files replaced by someone else. Like ssh with a loose key
//! file, the open refuses it and says how to fix it, unless the caller allows it.

use std::os::fd::BorrowedFd;
use std::path::Path;

use cheesedb_core::{Error, StorageOperation};
use rustix::fs::Mode;

/// Refuses the open folder `root` (at `path`) if another user owns it or its group or others
/// may write to it.
pub(crate) fn check_private(root: BorrowedFd<'_>, path: &Path) -> Result<(), Error> {
    let shown = path.display().to_string();
    let status = rustix::fs::fstat(root).map_err(|errno| {
        Error::from_storage(StorageOperation::CheckingPermissions, &shown, std::io::Error::from(errno))
    })?;
    let user = crate::user::this_user();
    let mode = Mode::from_raw_mode(status.st_mode);
    if status.st_uid != user || mode.intersects(Mode::WGRP | Mode::WOTH) {
        // The raw mode is 16 bits wide on macOS and 32 on Linux.
        #[allow(clippy::useless_conversion)]
        let mode = u32::from(mode.bits() & 0o7777);
        return Err(Error::FolderNotPrivate { path: shown, mode, owner: status.st_uid, user });
    }
    Ok(())
}
