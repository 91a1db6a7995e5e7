//! [`AccessFolder`]: the `access` folder inside the data folder, and the files in it, reached
//! without following a symbolic link.
//!
//! The data folder itself may be a link the user made; below it, the `access` folder is opened
//! with `O_DIRECTORY|O_NOFOLLOW` and every file with `O_NOFOLLOW` relative to that folder's
//! descriptor, so a link planted where a log file should be is refused, never written through.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

/// The folder inside the data folder that holds every agent's access log.
pub const ACCESS_FOLDER: &str = "access";

/// The access folder, open.
#[derive(Debug)]
pub struct AccessFolder {
    descriptor: OwnedFd,
}

/// How a log file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAccess {
    /// For reading only.
    Read,
    /// For reading and appending; the file must exist.
    Append,
    /// Made (mode 0600) for reading and appending; an existing name is an error.
    CreateNew,
}

impl AccessFolder {
    /// Opens the access folder of `data_folder`, making it (mode 0700) when `create` is set.
    /// Without `create`, a missing folder is `Ok(None)`.
    ///
    /// # Errors
    /// The system's error when the data folder cannot be opened, or when something other than
    /// a folder (a link, a file) stands where the access folder should be.
    pub fn open(data_folder: &Path, create: bool) -> io::Result<Option<AccessFolder>> {
        let root = rustix::fs::open(data_folder, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        if create {
            match rustix::fs::mkdirat(&root, ACCESS_FOLDER, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(errno) => return Err(errno.into()),
            }
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&root, ACCESS_FOLDER, flags, Mode::empty()) {
            Ok(descriptor) => Ok(Some(AccessFolder { descriptor })),
            Err(rustix::io::Errno::NOENT) if !create => Ok(None),
            Err(errno) => Err(refusal(&root, ACCESS_FOLDER, "a folder", errno)),
        }
    }

    /// The names in the folder that are UTF-8 (no log file's name is anything else).
    ///
    /// # Errors
    /// The system's error when the folder cannot be read.
    pub fn names(&self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in Dir::read_from(&self.descriptor)? {
            if let Ok(name) = std::str::from_utf8(entry?.file_name().to_bytes()) {
                if name != "." && name != ".." {
                    names.push(name.to_owned());
                }
            }
        }
        Ok(names)
    }

    /// Opens the file `name` in the folder, refusing a link or anything but a plain file.
    ///
    /// # Errors
    /// The system's error (`NotFound` for a missing file, `AlreadyExists` for
    /// [`FileAccess::CreateNew`] on an existing name), or `InvalidData` for a link or a
    /// file that is not plain.
    pub fn open_file(&self, name: &str, access: FileAccess) -> io::Result<File> {
        // NONBLOCK: a named pipe planted here must not hang the open; it changes nothing for a
        // plain file.
        let mut flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        flags |= match access {
            FileAccess::Read => OFlags::RDONLY,
            FileAccess::Append => OFlags::RDWR | OFlags::APPEND,
            FileAccess::CreateNew => OFlags::RDWR | OFlags::APPEND | OFlags::CREATE | OFlags::EXCL,
        };
        let opened = rustix::fs::openat(&self.descriptor, name, flags, Mode::from_raw_mode(0o600))
            .map_err(|errno| refusal(&self.descriptor, name, "a plain file", errno))?;
        if FileType::from_raw_mode(rustix::fs::fstat(&opened)?.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{name} is not a plain file")));
        }
        Ok(File::from(opened))
    }

    /// Removes the file `name` (the name itself, never what a link there points at).
    ///
    /// # Errors
    /// The system's error.
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        rustix::fs::unlinkat(&self.descriptor, name, AtFlags::empty()).map_err(io::Error::from)
    }

    /// Makes the folder's list of names durable, after a file was made or removed.
    ///
    /// # Errors
    /// The system's error.
    pub fn sync(&self) -> io::Result<()> {
        rustix::fs::fsync(&self.descriptor).map_err(io::Error::from)
    }
}

/// The path of `name` as messages show it: relative to the data folder.
pub fn shown_path(name: &str) -> String {
    format!("{ACCESS_FOLDER}/{name}")
}

/// Says why opening `name` failed when what stands there is a link.
fn refusal(parent: &OwnedFd, name: &str, wanted: &str, errno: rustix::io::Errno) -> io::Error {
    match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{name} is a symbolic link, not {wanted}: cheesedb does not follow links there and left it untouched"
            ),
        ),
        _ => errno.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_are_refused_and_left_alone() {
        let place = tempfile::tempdir().unwrap();
        let data = place.path().join("data");
        std::fs::create_dir_all(data.join(ACCESS_FOLDER)).unwrap();
        std::fs::write(place.path().join("outside"), b"keep").unwrap();
        symlink(place.path().join("outside"), data.join(ACCESS_FOLDER).join("a.1.log")).unwrap();
        let folder = AccessFolder::open(&data, true).unwrap().unwrap();
        for access in [FileAccess::Read, FileAccess::Append, FileAccess::CreateNew] {
            assert!(folder.open_file("a.1.log", access).is_err(), "{access:?}");
        }
        assert_eq!(std::fs::read(place.path().join("outside")).unwrap(), b"keep");

        let linked = place.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        symlink(place.path(), linked.join(ACCESS_FOLDER)).unwrap();
        let error = AccessFolder::open(&linked, true).unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
    }

    #[test]
    fn a_missing_folder_is_made_only_when_asked() {
        let place = tempfile::tempdir().unwrap();
        assert!(AccessFolder::open(place.path(), false).unwrap().is_none());
        let folder = AccessFolder::open(place.path(), true).unwrap().unwrap();
        assert!(folder.names().unwrap().is_empty());
        folder.open_file("x.1.log", FileAccess::CreateNew).unwrap();
        assert!(folder.open_file("x.1.log", FileAccess::CreateNew).is_err());
        assert_eq!(folder.names().unwrap(), ["x.1.log"]);
    }
}
