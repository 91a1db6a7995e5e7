//! The benchmark's data folder: a temporary one unless `--dir` names one, with a fresh pair of
//! subfolders per run; and the sizes of the files in it.

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::failure::Failure;

/// Where the runs keep their data. A temporary folder is removed when this is dropped; a
/// folder given with `--dir` is kept, so its files can be looked at afterwards.
#[derive(Debug)]
pub struct BenchFolder {
    root: PathBuf,
    temporary: Option<TempDir>,
}

impl BenchFolder {
    /// `given`, created if needed, or a new temporary folder.
    pub fn new(given: Option<PathBuf>) -> Result<BenchFolder, Failure> {
        match given {
            Some(root) => {
                fs::create_dir_all(&root)
                    .map_err(|error| Failure::new(format!("cannot create {}: {error}", root.display())))?;
                Ok(BenchFolder { root, temporary: None })
            }
            None => {
                let temporary = tempfile::Builder::new()
                    .prefix("cheesedb-bench-")
                    .tempdir()
                    .map_err(|error| Failure::new(format!("cannot create a temporary folder: {error}")))?;
                Ok(BenchFolder { root: temporary.path().to_path_buf(), temporary: Some(temporary) })
            }
        }
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A new, empty folder for `engine` in run `run`; refuses to reuse one left by an earlier
    /// benchmark, since its data would skew every figure.
    pub fn fresh(&self, engine: &str, run: u32) -> Result<PathBuf, Failure> {
        let folder = self.root.join(format!("{engine}-run-{run}"));
        if folder.exists() {
            return Err(Failure::new(format!(
                "{} already exists: give --dir an empty folder, or leave it out for a temporary one",
                folder.display()
            )));
        }
        fs::create_dir_all(&folder)
            .map_err(|error| Failure::new(format!("cannot create {}: {error}", folder.display())))?;
        Ok(folder)
    }
}

impl BenchFolder {
    /// Frees the disk space of finished runs in a temporary folder; a folder given with `--dir`
    /// keeps them for a look afterwards.
    pub fn release_runs(&self) -> Result<(), Failure> {
        if self.temporary.is_none() {
            return Ok(());
        }
        let cannot = |error: std::io::Error| Failure::new(format!("cannot clear {}: {error}", self.root.display()));
        for entry in fs::read_dir(&self.root).map_err(cannot)? {
            fs::remove_dir_all(entry.map_err(cannot)?.path()).map_err(cannot)?;
        }
        Ok(())
    }
}

/// Whether `name` is a segment of an agent's log.
pub fn is_segment_file(name: &str) -> bool {
    name.starts_with("segment-") && name.ends_with(".log")
}

/// The total size of the files under `folder` whose names `wanted` accepts.
pub fn files_size_bytes(folder: &Path, wanted: impl Fn(&str) -> bool + Copy) -> Result<u64, Failure> {
    let cannot = |error: std::io::Error| Failure::new(format!("cannot read {}: {error}", folder.display()));
    let mut total = 0;
    for entry in fs::read_dir(folder).map_err(cannot)? {
        let entry = entry.map_err(cannot)?;
        let kind = entry.file_type().map_err(cannot)?;
        if kind.is_dir() {
            total += files_size_bytes(&entry.path(), wanted)?;
        } else if kind.is_file() && wanted(&entry.file_name().to_string_lossy()) {
            total += entry.metadata().map_err(cannot)?.len();
        }
    }
    Ok(total)
}

/// The type of the file system holding `folder` (ext4, tmpfs, ...), where the system tells it:
/// fsync on tmpfs costs nothing, so a reader must know where the figures come from.
pub fn file_system_type(folder: &Path) -> Option<String> {
    let folder = folder.canonicalize().ok()?;
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            let mount_point = fields.next()?.replace("\\040", " ");
            let kind = fields.next()?;
            folder.starts_with(&mount_point).then(|| (mount_point.len(), kind.to_owned()))
        })
        .max_by_key(|(length, _)| *length)
        .map(|(_, kind)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_add_up_through_subfolders() {
        let folder = BenchFolder::new(None).unwrap();
        let inner = folder.fresh("cheesedb", 1).unwrap();
        fs::write(inner.join("segment-0000000000000001.log"), [0u8; 10]).unwrap();
        fs::write(inner.join("catalog"), [0u8; 5]).unwrap();
        assert_eq!(files_size_bytes(folder.root(), is_segment_file).unwrap(), 10);
        assert_eq!(files_size_bytes(folder.root(), |_| true).unwrap(), 15);
    }

    #[test]
    fn a_used_run_folder_is_refused() {
        let folder = BenchFolder::new(None).unwrap();
        folder.fresh("sqlite", 1).unwrap();
        assert!(folder.fresh("sqlite", 1).is_err());
    }
}
