//! [`AgentLog`]: appending to one agent's access log, rotating its files at a fixed size.
//!
//! Each entry is one line appended with one write and no sync, so a busy server does not wait
//! for the disk on every request; the file is synced when it is rotated and when the log is
//! closed. A crash (of the machine, not of the server process, whose writes the kernel keeps)
//! can therefore cost the last entries written before it, and can leave the last one cut short.
//! Opening the log again cuts such a torn entry off and goes on from the last whole one, so the
//! chain stays unbroken.
//!
//! A newest file that does not verify (a line appended or changed by someone else), or whose
//! size changed under the writer, does not stop the logging: the writer leaves it as it is and
//! starts the next file, whose header records the break (the damaged file, its first line that
//! did not verify, the kind) and chains on from the last entry that did verify. `cheesedb log`
//! then reports the break, so a damaged log never silences the entries after it, and never
//! passes for an intact one.

use std::fs::File;
use std::io::{self, Write};

use super::chain::ChainHash;
use super::damage::{DamageKind, LogDamage};
use super::entry::AccessEntry;
use super::file_name::{file_name, stem_of};
use super::folder::{shown_path, Access, AccessFolder};
use super::reader::{file_numbers, read_file, ReadError};
use super::record::{to_line, DamageNote, EntryRecord, HeaderRecord};
use super::scan::{scan_prefix, Scan, ScannedFile};
use super::Limits;

/// Why an append failed.
#[derive(Debug)]
pub enum WriteError {
    /// A file could not be written, read or made.
    Io {
        /// The file or folder, relative to the data folder.
        file: String,
        /// What was being done.
        doing: &'static str,
        /// The system's error.
        error: io::Error,
    },
    /// The newest file does not verify, so nothing is appended to it.
    Damaged(LogDamage),
}

impl From<ReadError> for WriteError {
    fn from(error: ReadError) -> WriteError {
        match error {
            ReadError::Io { file, error } => WriteError::Io { file, doing: "reading", error },
            ReadError::Damaged(damage) => WriteError::Damaged(damage),
        }
    }
}

/// One agent's log, open for appending to its newest file.
#[derive(Debug)]
pub struct AgentLog {
    agent: String,
    limits: Limits,
    file: File,
    file_number: u64,
    /// Bytes in the newest file.
    size_bytes: u64,
    /// Bytes of its header alone: a file no bigger holds no entry yet.
    header_bytes: u64,
    last_hash: ChainHash,
    next_number: u64,
}

impl AgentLog {
    /// Opens `agent`'s log in `folder`, making its first file if it has none, and cutting off a
    /// torn last entry (or a torn new file) a crash left. A newest file that does not verify is
    /// left as it is, and the log goes on in a new file that records the break.
    ///
    /// # Errors
    /// [`WriteError::Io`].
    pub fn open(folder: &AccessFolder, agent: &str, limits: Limits) -> Result<AgentLog, WriteError> {
        let stem = stem_of(agent);
        let mut numbers = file_numbers(folder, agent).map_err(io_error(&shown_path(""), "listing"))?;
        while let Some(&number) = numbers.last() {
            let name = file_name(&stem, number);
            let shown = shown_path(&name);
            let bytes = match read_file(folder, &name, &shown, &limits) {
                Ok(bytes) => bytes,
                Err(ReadError::Damaged(damage)) => {
                    return AgentLog::start_after_damage(folder, agent, limits, number, None, &damage)
                }
                Err(error) => return Err(error.into()),
            };
            let scanned = match scan_prefix(&shown, &bytes, agent, number) {
                Err(damage) => return AgentLog::start_after_damage(folder, agent, limits, number, None, &damage),
                Ok((Scan::File(scanned), Some(damage))) => {
                    return AgentLog::start_after_damage(folder, agent, limits, number, Some(&scanned), &damage)
                }
                Ok((Scan::File(scanned), None)) => scanned,
                Ok((Scan::TornHeader, _)) => {
                    // A rotation cut short: the file before it is whole and synced, so the
                    // log goes on there.
                    folder.remove_file(&name).map_err(io_error(&shown, "removing a torn file"))?;
                    folder.sync().map_err(io_error(&shown_path(""), "syncing"))?;
                    numbers.pop();
                    continue;
                }
            };
            let file = folder.open_file(&name, Access::Append).map_err(io_error(&shown, "opening"))?;
            if scanned.torn_line.is_some() {
                file.set_len(scanned.complete_bytes).map_err(io_error(&shown, "cutting off a torn entry"))?;
                file.sync_all().map_err(io_error(&shown, "syncing"))?;
            }
            let header_bytes = u64::try_from(to_line(&scanned.header).len()).unwrap_or(u64::MAX);
            return Ok(AgentLog {
                agent: agent.to_owned(),
                limits,
                file,
                file_number: number,
                size_bytes: scanned.complete_bytes,
                header_bytes,
                last_hash: scanned.end_hash,
                next_number: scanned.next_number,
            });
        }
        let (file, header_bytes, header_hash) = start_file(folder, agent, 1, 1, ChainHash::START, None)?;
        Ok(AgentLog {
            agent: agent.to_owned(),
            limits,
            file,
            file_number: 1,
            size_bytes: header_bytes,
            header_bytes,
            last_hash: header_hash,
            next_number: 1,
        })
    }

    /// Leaves file `number`, which holds `damage` (after what verified of it, `verified`, if its
    /// header did), and goes on in the next file, whose header records the break and chains on
    /// from the last entry that verified.
    fn start_after_damage(
        folder: &AccessFolder,
        agent: &str,
        limits: Limits,
        number: u64,
        verified: Option<&ScannedFile>,
        damage: &LogDamage,
    ) -> Result<AgentLog, WriteError> {
        let note = DamageNote {
            file_number: number,
            line: damage.line.and_then(|line| u64::try_from(line).ok()),
            kind: damage.kind.as_str().to_owned(),
        };
        let (first_number, starts_after) =
            verified.map_or((1, ChainHash::START), |verified| (verified.next_number, verified.end_hash));
        let file_number = number.saturating_add(1);
        let (file, header_bytes, header_hash) =
            start_file(folder, agent, file_number, first_number, starts_after, Some(note))?;
        let log = AgentLog {
            agent: agent.to_owned(),
            limits,
            file,
            file_number,
            size_bytes: header_bytes,
            header_bytes,
            last_hash: header_hash,
            next_number: first_number,
        };
        log.remove_old_files(folder)?;
        Ok(log)
    }

    /// Whether the newest file still holds exactly what this writer wrote: another writer's
    /// line, or a cut, changes its size.
    fn file_unchanged(&self) -> Result<bool, WriteError> {
        let shown = shown_path(&file_name(&stem_of(&self.agent), self.file_number));
        let size_bytes = self.file.metadata().map_err(io_error(&shown, "looking at"))?.len();
        Ok(size_bytes == self.size_bytes)
    }

    /// Appends `entry`, first rotating to a new file when it would pass the size limit. When
    /// the newest file changed under the writer, the log goes on in a new file that records
    /// the break (see [`AgentLog::open`]).
    ///
    /// # Errors
    /// [`WriteError::Io`]; the caller should open the log again before the next append, which
    /// cuts off whatever part of the entry reached the file.
    pub fn append(&mut self, folder: &AccessFolder, entry: &AccessEntry) -> Result<(), WriteError> {
        if !self.file_unchanged()? {
            *self = self.reopen_after_change(folder)?;
        }
        let mut record = EntryRecord::new(entry, self.next_number, self.last_hash);
        let mut line = to_line(&record);
        let line_bytes = u64::try_from(line.len()).unwrap_or(u64::MAX);
        if self.size_bytes > self.header_bytes
            && self.size_bytes.saturating_add(line_bytes) > self.limits.rotate_at_bytes
        {
            self.rotate(folder)?;
            // The entry now follows the new file's header.
            record = EntryRecord::new(entry, self.next_number, self.last_hash);
            line = to_line(&record);
        }
        let shown = shown_path(&file_name(&stem_of(&self.agent), self.file_number));
        self.file.write_all(line.as_bytes()).map_err(io_error(&shown, "appending to"))?;
        self.size_bytes = self.size_bytes.saturating_add(line_bytes);
        self.last_hash = ChainHash::from_hex(&record.hash).unwrap_or(ChainHash::START);
        self.next_number = self.next_number.saturating_add(1);
        Ok(())
    }

    /// The log after its newest file changed under the writer: the file is scanned again, and
    /// the log goes on in a new file that records the break, chained on from the last entry
    /// that verified (even when all of it does: a cut at a line's end verifies, yet lost entries).
    fn reopen_after_change(&self, folder: &AccessFolder) -> Result<AgentLog, WriteError> {
        let name = file_name(&stem_of(&self.agent), self.file_number);
        let shown = shown_path(&name);
        let changed = || LogDamage::file(&shown, DamageKind::Edited, "its size changed under the server");
        let bytes = match read_file(folder, &name, &shown, &self.limits) {
            Ok(bytes) => bytes,
            Err(ReadError::Damaged(damage)) => {
                return AgentLog::start_after_damage(folder, &self.agent, self.limits, self.file_number, None, &damage)
            }
            Err(error) => return Err(error.into()),
        };
        let (verified, damage) = match scan_prefix(&shown, &bytes, &self.agent, self.file_number) {
            Ok((Scan::File(verified), damage)) => (Some(verified), damage.unwrap_or_else(changed)),
            Ok((Scan::TornHeader, _)) => (None, changed()),
            Err(damage) => (None, damage),
        };
        AgentLog::start_after_damage(folder, &self.agent, self.limits, self.file_number, verified.as_deref(), &damage)
    }

    /// Makes every entry appended so far durable.
    ///
    /// # Errors
    /// [`WriteError::Io`].
    pub fn sync(&self) -> Result<(), WriteError> {
        let shown = shown_path(&file_name(&stem_of(&self.agent), self.file_number));
        self.file.sync_data().map_err(io_error(&shown, "syncing"))
    }

    /// Syncs the newest file, starts the next one after it, and removes files past the number
    /// kept. The new file is durable before any old one goes, so a crash in between leaves one
    /// file too many, never a gap.
    fn rotate(&mut self, folder: &AccessFolder) -> Result<(), WriteError> {
        self.sync()?;
        let number = self.file_number.saturating_add(1);
        let (file, header_bytes, header_hash) =
            start_file(folder, &self.agent, number, self.next_number, self.last_hash, None)?;
        self.file = file;
        self.file_number = number;
        self.size_bytes = header_bytes;
        self.header_bytes = header_bytes;
        self.last_hash = header_hash;
        self.remove_old_files(folder)
    }

    /// Removes the files older than the number kept before the newest one.
    fn remove_old_files(&self, folder: &AccessFolder) -> Result<(), WriteError> {
        let number = self.file_number;
        let oldest_kept = number.saturating_sub(self.limits.old_files_kept);
        let stem = stem_of(&self.agent);
        let mut removed = false;
        for old in file_numbers(folder, &self.agent).map_err(io_error(&shown_path(""), "listing"))? {
            if old < oldest_kept {
                let name = file_name(&stem, old);
                folder.remove_file(&name).map_err(io_error(&shown_path(&name), "removing an old file"))?;
                removed = true;
            }
        }
        if removed {
            folder.sync().map_err(io_error(&shown_path(""), "syncing"))?;
        }
        Ok(())
    }
}

impl Drop for AgentLog {
    fn drop(&mut self) {
        // Closing makes the entries durable; a failure here has no one left to tell.
        let _ = self.file.sync_data();
    }
}

/// Makes file `number` of `agent`'s log holding only its header, durable with its name.
/// Returns the file, the header's size and its hash (the chain's next link).
fn start_file(
    folder: &AccessFolder,
    agent: &str,
    number: u64,
    first_number: u64,
    starts_after: ChainHash,
    after_damage: Option<DamageNote>,
) -> Result<(File, u64, ChainHash), WriteError> {
    let name = file_name(&stem_of(agent), number);
    let shown = shown_path(&name);
    let mut file = folder.open_file(&name, Access::CreateNew).map_err(io_error(&shown, "making"))?;
    let header = HeaderRecord::after(agent, number, first_number, starts_after, after_damage);
    let hash = ChainHash::from_hex(&header.hash).unwrap_or(ChainHash::START);
    let header = to_line(&header);
    file.write_all(header.as_bytes()).map_err(io_error(&shown, "writing the header of"))?;
    file.sync_all().map_err(io_error(&shown, "syncing"))?;
    folder.sync().map_err(io_error(&shown_path(""), "syncing"))?;
    Ok((file, u64::try_from(header.len()).unwrap_or(u64::MAX), hash))
}

fn io_error<'file>(file: &'file str, doing: &'static str) -> impl FnOnce(io::Error) -> WriteError + 'file {
    move |error| WriteError::Io { file: file.to_owned(), doing, error }
}
