//! Reading an agent's access log back: every file in order, every entry verified, and every
//! join between files checked, so what is shown is exactly what the server wrote.

use std::io::{self, Read};
use std::path::Path;

use super::chain::ChainHash;
use super::damage::{DamageKind, LogDamage};
use super::entry::AccessEntry;
use super::file_name::{file_name, file_number, stem_of};
use super::folder::{shown_path, AccessFolder, FileAccess};
use super::scan::{scan, Scan, ScannedFile};
use super::Limits;

/// An entry that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedEntry {
    /// The file holding it, relative to the data folder.
    pub file: String,
    /// Its line in that file (the header is line 1).
    pub line: usize,
    /// Its number in the agent's whole log, from 1.
    pub number: u64,
    /// What it records.
    pub entry: AccessEntry,
    /// How many more ids the request involved than `entry.ids` lists.
    pub ids_left_out: u64,
    /// Its hash, 64 hex digits.
    pub hash: String,
}

/// An append that a crash cut short: the last line of the newest file, incomplete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornEntry {
    /// The file, relative to the data folder.
    pub file: String,
    /// The incomplete line (1 when not even the header was written in full).
    pub line: usize,
}

/// An agent's access log, verified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifiedLog {
    /// Every entry, oldest first.
    pub entries: Vec<VerifiedEntry>,
    /// An incomplete last entry, which the writer cuts off when it next opens the log.
    pub torn: Option<TornEntry>,
    /// The files read, oldest first, relative to the data folder.
    pub files: Vec<String>,
}

/// Why an access log could not be read back.
#[derive(Debug)]
pub enum ReadError {
    /// A file or the folder could not be read.
    Io {
        /// What was being read, relative to the data folder.
        file: String,
        /// The system's error.
        error: io::Error,
    },
    /// The log does not verify.
    Damaged(LogDamage),
}

impl From<LogDamage> for ReadError {
    fn from(damage: LogDamage) -> ReadError {
        ReadError::Damaged(damage)
    }
}

/// Reads and verifies `agent`'s access log in `data_folder`, whose files were written within
/// `limits`. No log at all is an empty one.
///
/// # Errors
/// [`ReadError::Damaged`] naming the file and entry where the chain breaks, or
/// [`ReadError::Io`].
pub fn read(data_folder: &Path, agent: &str, limits: &Limits) -> Result<VerifiedLog, ReadError> {
    let io_error = |file: String| move |error| ReadError::Io { file, error };
    let Some(folder) = AccessFolder::open(data_folder, false).map_err(io_error(shown_path("")))? else {
        return Ok(VerifiedLog::default());
    };
    let numbers = file_numbers(&folder, agent).map_err(io_error(shown_path("")))?;
    let mut log = VerifiedLog::default();
    let mut before: Option<(u64, Box<ScannedFile>)> = None;
    for (position, &number) in numbers.iter().enumerate() {
        let shown = shown_path(&file_name(&stem_of(agent), number));
        let newest = position + 1 == numbers.len();
        let bytes = read_file(&folder, &file_name(&stem_of(agent), number), &shown, limits)?;
        let scanned = match scan(&shown, &bytes, agent, number)? {
            Scan::TornHeader if newest => {
                log.torn = Some(TornEntry { file: shown, line: 1 });
                break;
            }
            Scan::TornHeader => {
                return Err(LogDamage::line(&shown, 1, None, DamageKind::Cut, "its header is incomplete").into());
            }
            Scan::File(scanned) => scanned,
        };
        match &before {
            Some((before_number, before_file)) => check_join(&shown, number, &scanned, *before_number, before_file)?,
            None => {
                // Files between the oldest and the newest that are missing are found at the join.
                let span = numbers.last().map_or(1, |newest| newest - number + 1);
                check_start(&shown, number, &scanned, span, limits)?;
            }
        }
        if let Some(line) = scanned.torn_line {
            if !newest {
                let detail = "its last entry is incomplete, yet a later file continues the log";
                return Err(LogDamage::line(&shown, line, None, DamageKind::Cut, detail).into());
            }
            log.torn = Some(TornEntry { file: shown.clone(), line });
        }
        log.entries.extend(scanned.entries.iter().map(|scanned_entry| VerifiedEntry {
            file: shown.clone(),
            line: scanned_entry.line,
            number: scanned_entry.record.number,
            entry: scanned_entry.record.entry(),
            ids_left_out: scanned_entry.record.ids_left_out,
            hash: scanned_entry.record.hash.clone(),
        }));
        log.files.push(shown);
        before = Some((number, scanned));
    }
    Ok(log)
}

/// The files of `agent`'s log in `data_folder`, oldest first, relative to the data folder.
///
/// # Errors
/// The system's error when the access folder cannot be listed.
pub fn log_files(data_folder: &Path, agent: &str) -> io::Result<Vec<String>> {
    let Some(folder) = AccessFolder::open(data_folder, false)? else { return Ok(Vec::new()) };
    let stem = stem_of(agent);
    Ok(file_numbers(&folder, agent)?.into_iter().map(|number| shown_path(&file_name(&stem, number))).collect())
}

/// The numbers of `agent`'s log files in `folder`, in order.
///
/// # Errors
/// The system's error when the folder cannot be listed.
pub fn file_numbers(folder: &AccessFolder, agent: &str) -> io::Result<Vec<u64>> {
    let stem = stem_of(agent);
    let mut numbers: Vec<u64> = folder.names()?.iter().filter_map(|name| file_number(&stem, name)).collect();
    numbers.sort_unstable();
    Ok(numbers)
}

/// The bytes of the file `name`, refusing one larger than the writer makes.
///
/// # Errors
/// [`ReadError::Io`], or [`DamageKind::Oversized`].
pub fn read_file(folder: &AccessFolder, name: &str, shown: &str, limits: &Limits) -> Result<Vec<u8>, ReadError> {
    let io_error = |error| ReadError::Io { file: shown.to_owned(), error };
    let file = folder.open_file(name, FileAccess::Read).map_err(io_error)?;
    let most = limits.file_max_bytes();
    let mut bytes = Vec::new();
    file.take(most.saturating_add(1)).read_to_end(&mut bytes).map_err(io_error)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > most {
        let detail = format!("it holds more than the {most} bytes a log file can reach");
        return Err(LogDamage::file(shown, DamageKind::Oversized, detail).into());
    }
    Ok(bytes)
}

/// Checks that file `number` continues the file before it, `before_number`.
fn check_join(
    shown: &str,
    number: u64,
    file: &ScannedFile,
    before_number: u64,
    before: &ScannedFile,
) -> Result<(), LogDamage> {
    let damage = |kind, detail: String| LogDamage::line(shown, 1, None, kind, detail);
    if number != before_number + 1 {
        let missing = if number - before_number == 2 {
            format!("file {} is missing before it", before_number + 1)
        } else {
            format!("files {} to {} are missing before it", before_number + 1, number - 1)
        };
        return Err(damage(DamageKind::Removed, missing));
    }
    if file.header.first_number > before.next_number {
        let detail = format!(
            "it starts at entry {} but the file before it ends before entry {}: entries were removed from that file's end",
            file.header.first_number, before.next_number
        );
        return Err(damage(DamageKind::Removed, detail));
    }
    if file.header.first_number != before.next_number || file.starts_after != before.end_hash {
        let detail = String::from("it does not start where the file before it ends: that file was changed at its end");
        return Err(damage(DamageKind::Edited, detail));
    }
    Ok(())
}

/// Checks the oldest file present: the start of the chain, or the oldest file rotation kept.
fn check_start(
    shown: &str,
    number: u64,
    file: &ScannedFile,
    files_spanned: u64,
    limits: &Limits,
) -> Result<(), LogDamage> {
    let damage = |kind, detail: String| LogDamage::line(shown, 1, None, kind, detail);
    if number == 1 {
        if file.starts_after != ChainHash::START || file.header.first_number != 1 {
            return Err(damage(DamageKind::Edited, String::from("the log's first file does not start the chain")));
        }
        return Ok(());
    }
    // Rotation removes a file only after making the next one, and keeps the newest
    // `old_files_kept + 1`: fewer files than that, with older ones gone, means some were removed.
    let kept = limits.old_files_kept.saturating_add(1);
    if files_spanned < kept {
        let detail = format!(
            "files before it are missing: rotation keeps {kept} files and removes only older ones, yet {files_spanned} are left"
        );
        return Err(damage(DamageKind::Removed, detail));
    }
    Ok(())
}
