//! [`StoreFolder`]: every name inside a store folder, reached without following a symbolic link.
//!
//! The root folder is opened once (it may itself be a link the user made). Everything below it
//! is reached relative to an open folder descriptor: sub-folders with `O_DIRECTORY|O_NOFOLLOW`,
//! files with `O_NOFOLLOW`, and renames, removes, creates and listings with the `*at` calls on
//! the folder that holds the name. A link, or anything that is not a plain file or folder,
//! where a name of the store should be is refused and left exactly as it is: a replaced segment
//! or agent folder must never send a read, a write or a removal to a file outside the store.
//!
//! Both [`Io`](crate::Io) choices use this module for names; io_uring gets its file descriptors
//! from here.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cheesedb_core::NameKind;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, Stat};

/// How a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// For reading and writing; with `create`, made (0600) if it does not exist.
    ReadWrite {
        /// Whether a missing file is made.
        create: bool,
    },
    /// For reading only: nothing can be written through the descriptor.
    ReadOnly,
    /// For reading and appending to a file that must exist; every write lands at the end.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    Append,
    /// Made (0600) for reading and appending; a name that exists already is an error.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    CreateNew,
}

/// A store's root folder, opened once, and the names below it.
#[derive(Debug)]
pub(crate) struct StoreFolder {
    root: PathBuf,
    descriptor: OnceLock<OwnedFd>,
}

/// The folder holding a name: the root itself or a sub-folder opened for the purpose.
enum Parent<'root> {
    Root(BorrowedFd<'root>),
    Sub(OwnedFd),
}

impl Parent<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Parent::Root(descriptor) => *descriptor,
            Parent::Sub(descriptor) => descriptor.as_fd(),
        }
    }
}

impl StoreFolder {
    /// The folder at `root`; opened at first use.
    pub(crate) fn new(root: PathBuf) -> StoreFolder {
        StoreFolder { root, descriptor: OnceLock::new() }
    }

    /// The root folder's path as the user gave it.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The root folder, opened (following a link there, which the user chose) on first use.
    pub(crate) fn root_descriptor(&self) -> io::Result<BorrowedFd<'_>> {
        if self.descriptor.get().is_none() {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let opened = rustix::fs::open(self.root.as_path(), flags, Mode::empty())?;
            // Another thread may have won the race; either descriptor names the same folder.
            let _ = self.descriptor.set(opened);
        }
        match self.descriptor.get() {
            Some(descriptor) => Ok(descriptor.as_fd()),
            None => Err(io::Error::other("the store folder could not be opened")),
        }
    }

    /// The folder holding the last component of `path`, and that component. Every folder on
    /// the way is opened without following a link.
    fn parent_of<'path>(&self, path: &'path str) -> io::Result<(Parent<'_>, &'path str)> {
        let (folders, name) = match path.rsplit_once('/') {
            Some((folders, name)) => (Some(folders), name),
            None => (None, path),
        };
        check_component(name)?;
        let root = self.root_descriptor()?;
        let Some(folders) = folders else { return Ok((Parent::Root(root), name)) };
        let mut parent = Parent::Root(root);
        for component in folders.split('/') {
            check_component(component)?;
            parent = Parent::Sub(open_sub_folder(parent.as_fd(), component)?);
        }
        Ok((parent, name))
    }

    /// Opens the file at `path` (relative to the root) without following a link anywhere on the
    /// way; refuses anything that is not a plain file.
    pub(crate) fn open_file(&self, path: &str, access: Access) -> io::Result<File> {
        let (parent, name) = self.parent_of(path)?;
        // NONBLOCK: a named pipe planted where a file should be must not hang the open; it has
        // no effect on a plain file.
        let mut flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        flags |= match access {
            Access::ReadWrite { create: true } => OFlags::RDWR | OFlags::CREATE,
            Access::ReadWrite { create: false } => OFlags::RDWR,
            Access::ReadOnly => OFlags::RDONLY,
            Access::Append => OFlags::RDWR | OFlags::APPEND,
            Access::CreateNew => OFlags::RDWR | OFlags::APPEND | OFlags::CREATE | OFlags::EXCL,
        };
        let opened = rustix::fs::openat(parent.as_fd(), name, flags, Mode::from_raw_mode(0o600))
            .map_err(|errno| explain(parent.as_fd(), name, errno.into()))?;
        let file_type = FileType::from_raw_mode(rustix::fs::fstat(&opened)?.st_mode);
        if file_type != FileType::RegularFile {
            return Err(not_ours(name, "is not a plain file"));
        }
        Ok(File::from(opened))
    }

    /// Opens the folder at `path` (`""` is the root) for listing or syncing, without following
    /// a link below the root.
    pub(crate) fn open_folder(&self, path: &str) -> io::Result<File> {
        if path.is_empty() {
            return Ok(File::from(self.root_descriptor()?.try_clone_to_owned()?));
        }
        let (parent, name) = self.parent_of(path)?;
        Ok(File::from(open_sub_folder(parent.as_fd(), name)?))
    }

    /// Whether a name exists at `path`. A link counts as existing (it is not followed): opening
    /// it then fails with an error that says why.
    pub(crate) fn exists(&self, path: &str) -> io::Result<bool> {
        if path.is_empty() {
            return self.root_descriptor().map(|_| true);
        }
        let (parent, name) = match self.parent_of(path) {
            Ok(found) => found,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        match status(parent.as_fd(), name) {
            Ok(_) => Ok(true),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Whether a `kind` stands at `path` itself (a link to one does not count).
    pub(crate) fn holds(&self, path: &str, kind: NameKind) -> io::Result<bool> {
        let (parent, name) = match self.parent_of(path) {
            Ok(found) => found,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        let wanted = match kind {
            NameKind::File => FileType::RegularFile,
            NameKind::Folder => FileType::Directory,
        };
        match status(parent.as_fd(), name) {
            Ok(stat) => Ok(FileType::from_raw_mode(stat.st_mode) == wanted),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(errno) => Err(errno.into()),
        }
    }

    /// The names directly inside the folder at `path`. Names that are not UTF-8 are not
    /// cheesedb's and are left out.
    pub(crate) fn list(&self, path: &str) -> io::Result<Vec<String>> {
        let folder = self.open_folder(path)?;
        let mut names = Vec::new();
        for entry in Dir::read_from(&folder)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if let Ok(name) = std::str::from_utf8(name) {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    /// Makes the folder `path` with mode 0700. An existing folder is fine; a link or a file
    /// there is refused.
    pub(crate) fn create_folder(&self, path: &str) -> io::Result<()> {
        let (parent, name) = self.parent_of(path)?;
        match rustix::fs::mkdirat(parent.as_fd(), name, Mode::from_raw_mode(0o700)) {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::EXIST) => open_sub_folder(parent.as_fd(), name).map(drop),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Removes the empty folder `path`. A link there is refused, not removed.
    pub(crate) fn remove_folder(&self, path: &str) -> io::Result<()> {
        let (parent, name) = self.parent_of(path)?;
        rustix::fs::unlinkat(parent.as_fd(), name, AtFlags::REMOVEDIR)
            .map_err(|errno| explain(parent.as_fd(), name, errno.into()))
    }

    /// Renames `from` to `to`, both in the same folder. The names themselves are never followed.
    pub(crate) fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (parent, from_name) = self.parent_of(from)?;
        let (_, to_name) = split_name(to);
        if split_name(from).0 != split_name(to).0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a rename must stay in one folder"));
        }
        check_component(to_name)?;
        rustix::fs::renameat(parent.as_fd(), from_name, parent.as_fd(), to_name).map_err(io::Error::from)
    }

    /// Removes the file `path`: the name itself, never what a link there points at.
    pub(crate) fn remove_file(&self, path: &str) -> io::Result<()> {
        let (parent, name) = self.parent_of(path)?;
        rustix::fs::unlinkat(parent.as_fd(), name, AtFlags::empty()).map_err(io::Error::from)
    }
}

/// The folder part and the last component of a path.
fn split_name(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// Refuses components that would leave the folder or name nothing. The engine never makes
/// them; this keeps a mistake from reaching outside.
fn check_component(component: &str) -> io::Result<()> {
    if component.is_empty() || component == "." || component == ".." || component.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{component:?} is not a name inside the store"),
        ));
    }
    Ok(())
}

/// Opens the sub-folder `name` of `parent`, refusing a link.
fn open_sub_folder(parent: BorrowedFd<'_>, name: &str) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(parent, name, flags, Mode::empty()).map_err(|errno| explain(parent, name, errno.into()))
}

/// The status of `name` in `parent`, of the name itself (a link is not followed).
fn status(parent: BorrowedFd<'_>, name: &str) -> rustix::io::Result<Stat> {
    rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
}

/// Turns a failure to open `name` into one that says why, when what stands there is a link or
/// otherwise not what the store put there.
fn explain(parent: BorrowedFd<'_>, name: &str, error: io::Error) -> io::Error {
    match status(parent, name) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => not_ours(
            name,
            "is a symbolic link: cheesedb does not follow links inside its store folder, and left it untouched",
        ),
        _ => error,
    }
}

/// An error about a name that holds something the store did not put there.
fn not_ours(name: &str, what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{name} {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_os = "linux")]
    use rustix::fs::CWD;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_anywhere_below_the_root_are_refused_and_left_alone() {
        let place = tempfile::tempdir().unwrap();
        let outside = place.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("data"), b"keep").unwrap();
        let root = place.path().join("root");
        std::fs::create_dir(&root).unwrap();
        symlink(outside.join("data"), root.join("file")).unwrap();
        symlink(&outside, root.join("folder")).unwrap();
        let folder = StoreFolder::new(root.clone());
        for path in ["file", "folder/data"] {
            let error = folder.open_file(path, Access::ReadWrite { create: true }).unwrap_err();
            assert!(error.to_string().contains("symbolic link"), "{path}: {error}");
            assert!(folder.open_file(path, Access::ReadOnly).is_err(), "{path}");
        }
        assert!(folder.list("folder").unwrap_err().to_string().contains("symbolic link"));
        assert!(folder.create_folder("folder").unwrap_err().to_string().contains("symbolic link"));
        assert!(folder.remove_folder("folder").unwrap_err().to_string().contains("symbolic link"));
        assert!(folder.open_folder("folder").is_err());
        assert!(folder.remove_file("folder/data").is_err());
        assert!(folder.rename("folder/data", "folder/other").is_err());
        assert!(folder.exists("file").unwrap(), "a link is a name that exists");
        assert_eq!(std::fs::read(outside.join("data")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    }

    // rustix offers `mknodat` on Linux only.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_named_pipe_is_refused_without_hanging() {
        let place = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(CWD, place.path().join("pipe"), FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let folder = StoreFolder::new(place.path().to_path_buf());
        let error = folder.open_file("pipe", Access::ReadOnly).unwrap_err();
        assert!(error.to_string().contains("not a plain file"), "{error}");
    }

    #[test]
    fn names_that_leave_the_folder_are_refused() {
        let place = tempfile::tempdir().unwrap();
        let folder = StoreFolder::new(place.path().to_path_buf());
        for path in ["..", "../x", "a//b", "./x", "/x"] {
            assert!(folder.open_file(path, Access::ReadWrite { create: true }).is_err(), "{path}");
        }
    }
}
