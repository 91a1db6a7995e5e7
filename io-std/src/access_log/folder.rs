//! [`AccessFolder`]: the `access` folder inside the data folder, and the files in it, reached
//! without following a symbolic link.
//!
//! The data folder itself may be a link the user made; below it, every name is reached through
//! [`StoreFolder`], so a link planted where the access folder or a log file should be is refused,
//! never written through, exactly as inside a store.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::folder::StoreFolder;

pub(crate) use crate::folder::Access;

/// The folder inside the data folder that holds every agent's access log.
pub const ACCESS_FOLDER: &str = "access";

/// The access folder of one data folder.
#[derive(Debug)]
pub struct AccessFolder {
    data_folder: StoreFolder,
}

impl AccessFolder {
    /// Opens the access folder of `data_folder`, making it (mode 0700) when `create` is set.
    /// Without `create`, a missing folder is `Ok(None)`.
    ///
    /// # Errors
    /// The system's error when the data folder cannot be opened, or when something other than
    /// a folder (a link, a file) stands where the access folder should be.
    pub fn open(data_folder: &Path, create: bool) -> io::Result<Option<AccessFolder>> {
        let folder = AccessFolder { data_folder: StoreFolder::new(data_folder.to_path_buf()) };
        if create {
            folder.data_folder.create_folder(ACCESS_FOLDER)?;
        }
        match folder.data_folder.open_folder(ACCESS_FOLDER) {
            Ok(_) => Ok(Some(folder)),
            Err(error) if error.kind() == io::ErrorKind::NotFound && !create => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The names in the folder that are UTF-8 (no log file's name is anything else).
    ///
    /// # Errors
    /// The system's error when the folder cannot be read.
    pub fn names(&self) -> io::Result<Vec<String>> {
        self.data_folder.list(ACCESS_FOLDER)
    }

    /// Opens the file `name` in the folder, refusing a link or anything but a plain file.
    ///
    /// # Errors
    /// The system's error (`NotFound` for a missing file, `AlreadyExists` for
    /// [`Access::CreateNew`] on an existing name), or `InvalidData` for a link or a
    /// file that is not plain.
    pub(crate) fn open_file(&self, name: &str, access: Access) -> io::Result<File> {
        self.data_folder.open_file(&shown_path(name), access)
    }

    /// Removes the file `name` (the name itself, never what a link there points at).
    ///
    /// # Errors
    /// The system's error.
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        self.data_folder.remove_file(&shown_path(name))
    }

    /// Makes the folder's list of names durable, after a file was made or removed.
    ///
    /// # Errors
    /// The system's error.
    pub fn sync(&self) -> io::Result<()> {
        self.data_folder.open_folder(ACCESS_FOLDER)?.sync_all()
    }
}

/// The path of `name` as messages show it: relative to the data folder.
pub fn shown_path(name: &str) -> String {
    format!("{ACCESS_FOLDER}/{name}")
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
        for access in [Access::ReadOnly, Access::Append, Access::CreateNew] {
            assert!(folder.open_file("a.1.log", access).is_err(), "{access:?}");
        }
        assert!(folder.remove_file("a.1.log").is_ok(), "the link itself may be removed");
        assert_eq!(std::fs::read(place.path().join("outside")).unwrap(), b"keep");

        let linked = place.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        symlink(place.path(), linked.join(ACCESS_FOLDER)).unwrap();
        for create in [true, false] {
            let error = AccessFolder::open(&linked, create).unwrap_err();
            assert!(error.to_string().contains("symbolic link"), "{error}");
        }
    }

    #[test]
    fn a_missing_folder_is_made_only_when_asked() {
        let place = tempfile::tempdir().unwrap();
        assert!(AccessFolder::open(place.path(), false).unwrap().is_none());
        let folder = AccessFolder::open(place.path(), true).unwrap().unwrap();
        assert!(folder.names().unwrap().is_empty());
        folder.open_file("x.1.log", Access::CreateNew).unwrap();
        let error = folder.open_file("x.1.log", Access::CreateNew).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(folder.names().unwrap(), ["x.1.log"]);
        folder.sync().unwrap();
    }
}
