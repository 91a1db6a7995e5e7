//! Byte search of every file below a folder: what `cheesedb find` and the demo use to show
//! whether a text is still on disk. It reads raw bytes, so it sees whatever the files hold,
//! whatever the engine thinks is alive.

use std::fs::{self, File};
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use memchr::memmem::Finder;

use crate::failure::Failure;

/// How much of a file is read at a time.
const READ_CHUNK_BYTES: usize = 1024 * 1024;

/// One file that holds the searched bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatch {
    /// The file, relative to the searched folder.
    pub path: PathBuf,
    /// How many times the bytes occur in it (overlapping occurrences counted).
    pub occurrences: u64,
}

/// What a search covered: the files holding the bytes, and what it could not search.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Findings {
    /// The files holding the bytes, sorted by path.
    pub matches: Vec<FileMatch>,
    /// Entries that are neither a regular file nor a folder (symbolic links above all), relative
    /// to the searched folder, sorted. They are never followed: a link could lead out of the
    /// folder, or to the same file twice. The store refuses to work through them, so their
    /// presence is worth a look, and a search that found nothing cannot vouch for them.
    pub not_searched: Vec<PathBuf>,
}

/// What a folder holds below it.
#[derive(Debug, Default)]
pub struct FolderEntries {
    /// Every regular file, with its size, sorted by path.
    pub files: Vec<(PathBuf, u64)>,
    /// Every entry that is neither a file nor a folder (links, sockets, devices), sorted.
    pub others: Vec<PathBuf>,
}

/// Every regular file below `folder`, and every entry that is neither a file nor a folder
/// (links, sockets, devices), which is not followed.
pub fn files_below(folder: &Path) -> Result<FolderEntries, Failure> {
    let mut found = Vec::new();
    let mut not_searched = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries = fs::read_dir(&current)
            .map_err(|error| Failure::new(format!("cannot list {}: {error}", current.display())))?;
        for entry in entries {
            let entry = entry.map_err(|error| Failure::new(format!("cannot list {}: {error}", current.display())))?;
            let kind = entry
                .file_type()
                .map_err(|error| Failure::new(format!("cannot inspect {}: {error}", entry.path().display())))?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                let size = entry.metadata().map(|metadata| metadata.len()).unwrap_or(0);
                found.push((entry.path(), size));
            } else {
                not_searched.push(entry.path());
            }
        }
    }
    found.sort();
    not_searched.sort();
    Ok(FolderEntries { files: found, others: not_searched })
}

/// Searches every file below `folder` for `needle`; returns the files that hold it, and what
/// was not searched.
pub fn find_in_folder(folder: &Path, needle: &[u8], progress: &ProgressBar) -> Result<Findings, Failure> {
    if needle.is_empty() {
        return Err(Failure::new("the text to find is empty"));
    }
    if !folder.is_dir() {
        return Err(Failure::new(format!("{} is not a folder", folder.display())));
    }
    let FolderEntries { files, others: not_searched } = files_below(folder)?;
    let relative = |path: PathBuf| path.strip_prefix(folder).map(Path::to_path_buf).unwrap_or(path);
    progress.set_length(files.iter().map(|(_, size)| size).sum());
    let finder = Finder::new(needle);
    let mut matches = Vec::new();
    for (path, _) in files {
        let occurrences = match count_in_file(&path, &finder, progress) {
            Ok(count) => count,
            // A file removed while we searched (a compaction, say) holds nothing any more.
            Err(error) if error.kind() == ErrorKind::NotFound => 0,
            Err(error) => return Err(Failure::new(format!("cannot read {}: {error}", path.display()))),
        };
        if occurrences > 0 {
            matches.push(FileMatch { path: relative(path), occurrences });
        }
    }
    progress.finish_and_clear();
    Ok(Findings { matches, not_searched: not_searched.into_iter().map(relative).collect() })
}

/// Counts `finder`'s needle in the file at `path`, reading it in chunks. The last
/// `needle length - 1` bytes of each chunk are kept in front of the next one, so an occurrence
/// that straddles two chunks is found once: it cannot have been complete in the earlier one.
fn count_in_file(path: &Path, finder: &Finder<'_>, progress: &ProgressBar) -> std::io::Result<u64> {
    let mut file = File::open(path)?;
    let carry_bytes = finder.needle().len() - 1;
    let mut window: Vec<u8> = Vec::with_capacity(READ_CHUNK_BYTES + carry_bytes);
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    let mut occurrences = 0u64;
    loop {
        let read = match file.read(&mut chunk) {
            Ok(0) => return Ok(occurrences),
            Ok(read) => read,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        progress.inc(read as u64);
        window.extend_from_slice(&chunk[..read]);
        occurrences += finder.find_iter(&window).count() as u64;
        let keep_from = window.len().saturating_sub(carry_bytes);
        window.drain(..keep_from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(folder: &Path, needle: &[u8]) -> Vec<FileMatch> {
        find_in_folder(folder, needle, &ProgressBar::hidden()).unwrap().matches
    }

    #[test]
    fn finds_and_counts_bytes_in_nested_files() {
        let folder = tempfile::tempdir().unwrap();
        fs::create_dir(folder.path().join("inner")).unwrap();
        fs::write(folder.path().join("inner/a.log"), b"rain, rain and more rain").unwrap();
        fs::write(folder.path().join("b"), b"sunny").unwrap();
        let found = search(folder.path(), b"rain");
        assert_eq!(found, vec![FileMatch { path: PathBuf::from("inner/a.log"), occurrences: 3 }]);
        assert!(search(folder.path(), b"snow").is_empty());
    }

    #[test]
    fn an_occurrence_across_two_chunks_is_counted_once() {
        let folder = tempfile::tempdir().unwrap();
        let mut bytes = vec![b'.'; READ_CHUNK_BYTES - 2];
        bytes.extend_from_slice(b"rain");
        bytes.extend(vec![b'.'; READ_CHUNK_BYTES]);
        bytes.extend_from_slice(b"rain");
        fs::write(folder.path().join("big"), &bytes).unwrap();
        assert_eq!(search(folder.path(), b"rain")[0].occurrences, 2);
    }

    #[test]
    fn a_link_is_reported_and_not_followed() {
        let folder = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), b"rain").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), folder.path().join("segment")).unwrap();
        std::os::unix::fs::symlink(outside.path(), folder.path().join("agent")).unwrap();
        let searched = find_in_folder(folder.path(), b"rain", &ProgressBar::hidden()).unwrap();
        assert!(searched.matches.is_empty());
        assert_eq!(searched.not_searched, vec![PathBuf::from("agent"), PathBuf::from("segment")]);
    }

    #[test]
    fn an_empty_needle_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        assert!(find_in_folder(folder.path(), b"", &ProgressBar::hidden()).is_err());
    }
}
