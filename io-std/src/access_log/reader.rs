//! Reading an agent's access log back: every file in order, every entry verified, and every
//! join between files checked, so what is shown is exactly what the server wrote.
//!
//! A file the writer found damaged is followed by one whose header records the break: the
//! reader then shows the entries of the damaged file that verify, reports the break with the
//! damage it finds there, and goes on with the next file. Damage without such a file after it
//! stops the reading.

use std::io::{self, Read};
use std::path::Path;

use super::chain::ChainHash;
use super::damage::{DamageKind, LogDamage};
use super::entry::AccessEntry;
use super::file_name::{file_name, file_number, stem_of};
use super::folder::{shown_path, Access, AccessFolder};
use super::record::DamageNote;
use super::scan::{scan_prefix, Scan, ScannedFile};
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

/// A place where the log does not verify and the writer went on in a new file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogBreak {
    /// The file the writer started after the damage, relative to the data folder.
    pub file: String,
    /// What its header says the writer found.
    pub noted: DamageNote,
    /// The damage the reader finds in the file before it, if that file is still there and
    /// still does not verify.
    pub found: Option<LogDamage>,
}

/// An agent's access log, verified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifiedLog {
    /// Every entry that verified, oldest first.
    pub entries: Vec<VerifiedEntry>,
    /// An incomplete last entry, which the writer cuts off when it next opens the log.
    pub torn: Option<TornEntry>,
    /// The files read, oldest first, relative to the data folder.
    pub files: Vec<String>,
    /// Where the log breaks: a log with any does not verify, though every entry shown does.
    pub breaks: Vec<LogBreak>,
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
    let mut files = Vec::with_capacity(numbers.len());
    for &number in &numbers {
        let name = file_name(&stem_of(agent), number);
        let shown = shown_path(&name);
        // A file too large to be the writer's is damage like any other; a failed read is not.
        let bytes = match read_file(&folder, &name, &shown, limits) {
            Ok(bytes) => Ok(bytes),
            Err(ReadError::Damaged(damage)) => Err(damage),
            Err(error) => return Err(error),
        };
        files.push((number, shown, bytes));
    }
    let mut log = VerifiedLog::default();
    // The file before, with what verified of it; and the damage it holds, which only a break
    // in this file's header excuses.
    let mut before: Option<(u64, Option<Box<ScannedFile>>)> = None;
    let mut damage_before: Option<LogDamage> = None;
    for (position, (number, shown, bytes)) in files.iter().enumerate() {
        let (number, newest) = (*number, position + 1 == files.len());
        let next_breaks = files.get(position + 1).is_some_and(|(next_number, _, next_bytes)| {
            next_bytes.as_ref().is_ok_and(|next_bytes| starts_after_damage(next_bytes, agent, *next_number, number))
        });
        let (scan, damage) = match bytes {
            Ok(bytes) => match scan_prefix(shown, bytes, agent, number) {
                Ok((scan, damage)) => (Some(scan), damage),
                Err(damage) => (None, Some(damage)),
            },
            Err(damage) => (None, Some(damage.clone())),
        };
        if let Some(damage) = &damage {
            if !next_breaks {
                return Err(damage.clone().into());
            }
        }
        let scanned = match scan {
            Some(Scan::TornHeader) if newest => {
                log.torn = Some(TornEntry { file: shown.clone(), line: 1 });
                break;
            }
            Some(Scan::TornHeader) if !next_breaks => {
                return Err(LogDamage::line(shown, 1, None, DamageKind::Cut, "its header is incomplete").into());
            }
            Some(Scan::TornHeader) | None => None,
            Some(Scan::File(scanned)) => Some(scanned),
        };
        if let Some(scanned) = &scanned {
            check_place(shown, number, scanned, before.as_ref(), numbers.last().copied(), limits)?;
            if let Some(noted) = &scanned.header.after_damage {
                log.breaks.push(LogBreak { file: shown.clone(), noted: noted.clone(), found: damage_before.take() });
            }
            if let Some(line) = scanned.torn_line {
                if !newest {
                    let detail = "its last entry is incomplete, yet a later file continues the log";
                    return Err(LogDamage::line(shown, line, None, DamageKind::Cut, detail).into());
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
        }
        log.files.push(shown.clone());
        damage_before = damage;
        before = Some((number, scanned));
    }
    Ok(log)
}

/// Whether `bytes` are file `number` of `agent`'s log with a header that records a break after
/// file `before_number`.
fn starts_after_damage(bytes: &[u8], agent: &str, number: u64, before_number: u64) -> bool {
    let shown = String::new();
    match scan_prefix(&shown, bytes, agent, number) {
        Ok((Scan::File(scanned), _)) => {
            scanned.header.after_damage.as_ref().is_some_and(|noted| noted.file_number == before_number)
        }
        _ => false,
    }
}

/// Checks where file `number` stands: after the file before it (`before`), or as the oldest
/// file present when there is none. A file that starts after damage is not joined to the
/// damaged file (its header records the break, which the reader reports); it must still
/// follow it by number.
fn check_place(
    shown: &str,
    number: u64,
    scanned: &ScannedFile,
    before: Option<&(u64, Option<Box<ScannedFile>>)>,
    newest_number: Option<u64>,
    limits: &Limits,
) -> Result<(), LogDamage> {
    match before {
        Some((before_number, before_file)) => {
            check_consecutive(shown, number, *before_number)?;
            match (scanned.header.after_damage.is_some(), before_file) {
                (true, _) => Ok(()),
                (false, Some(before_file)) => check_join(shown, scanned, before_file),
                (false, None) => {
                    let detail = "the file before it does not verify, yet this one does not record the break";
                    Err(LogDamage::line(shown, 1, None, DamageKind::Edited, detail))
                }
            }
        }
        None => {
            // Files between the oldest and the newest that are missing are found at the join.
            let span = newest_number.map_or(1, |newest| newest - number + 1);
            check_start(shown, number, scanned, span, limits)
        }
    }
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
    let file = folder.open_file(name, Access::ReadOnly).map_err(io_error)?;
    let most = limits.file_max_bytes();
    let mut bytes = Vec::new();
    file.take(most.saturating_add(1)).read_to_end(&mut bytes).map_err(io_error)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > most {
        let detail = format!("it holds more than the {most} bytes a log file can reach");
        return Err(LogDamage::file(shown, DamageKind::Oversized, detail).into());
    }
    Ok(bytes)
}

/// Checks that file `number` comes right after file `before_number`.
fn check_consecutive(shown: &str, number: u64, before_number: u64) -> Result<(), LogDamage> {
    if number == before_number + 1 {
        return Ok(());
    }
    let missing = if number - before_number == 2 {
        format!("file {} is missing before it", before_number + 1)
    } else {
        format!("files {} to {} are missing before it", before_number + 1, number - 1)
    };
    Err(LogDamage::line(shown, 1, None, DamageKind::Removed, missing))
}

/// Checks that `file` continues `before`, the file before it, where that one ends.
fn check_join(shown: &str, file: &ScannedFile, before: &ScannedFile) -> Result<(), LogDamage> {
    let damage = |kind, detail: String| LogDamage::line(shown, 1, None, kind, detail);
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
