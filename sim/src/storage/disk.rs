//! The state of a simulated disk, without faults or clocks: files with a durable and a volatile
//! image, names with a durable and a volatile binding, and the unsynced changes between them.
//!
//! Files are inodes; names point at inodes. The volatile side is what a running program sees
//! (the page cache); the durable side is what survives a crash. Every change lands on the
//! volatile side at once and is queued as pending until a sync makes it durable; a crash applies
//! each pending change according to its [`Fate`].

use std::collections::{BTreeMap, BTreeSet};

pub(crate) use crate::paths::{base_name, parent_of as parent};
use crate::random::Random;

/// The sector size: garbling and sector-aligned tearing work in units of this many bytes.
pub const SECTOR_BYTES: u64 = 512;

/// What a name is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A file: the number of its inode.
    File(usize),
    /// A folder.
    Folder,
}

/// An unsynced change to a file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileChange {
    /// Bytes written at an offset.
    Write { offset: u64, bytes: Vec<u8> },
    /// The length set.
    SetLength { length: u64 },
}

/// An unsynced change to the names of one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NameChange {
    /// A file or folder created.
    Link { path: String, entry: Entry },
    /// A file or folder removed.
    Unlink { path: String },
    /// A file renamed over another name (atomically).
    Rename { from: String, to: String, inode: usize },
}

impl NameChange {
    /// The folder whose sync makes this change durable.
    pub(crate) fn folder(&self) -> &str {
        match self {
            NameChange::Link { path, .. } | NameChange::Unlink { path } => parent(path),
            NameChange::Rename { to, .. } => parent(to),
        }
    }

    fn apply(&self, names: &mut BTreeMap<String, Entry>) {
        match self {
            NameChange::Link { path, entry } => {
                names.insert(path.clone(), *entry);
            }
            NameChange::Unlink { path } => {
                names.remove(path);
            }
            NameChange::Rename { from, to, inode } => {
                if names.get(from) == Some(&Entry::File(*inode)) {
                    names.remove(from);
                }
                names.insert(to.clone(), Entry::File(*inode));
            }
        }
    }
}

/// What a crash (or a failed sync) does with one pending change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// The change never reached the disk.
    Drop,
    /// The change reached the disk whole.
    Keep,
    /// Only the first this many bytes of a write reached the disk (other changes: whole).
    Prefix(u64),
    /// A write reached the disk with some of the sectors it touches replaced by garbage drawn
    /// from this seed (other changes: whole).
    Garble(u64),
}

/// A pending change as the crash-state explorer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingChange {
    /// Bytes written to the file at `path` (its first name, or `#inode` if it has none).
    Write {
        /// The file.
        path: String,
        /// Where.
        offset: u64,
        /// How many bytes.
        length: u64,
    },
    /// A length set.
    SetLength {
        /// The file.
        path: String,
        /// The new length.
        length: u64,
    },
    /// A create, rename or remove; the text says which.
    Name {
        /// What changed.
        description: String,
    },
}

/// One file: its durable bytes, the bytes a program sees, and the changes in between.
#[derive(Debug, Clone, Default)]
pub(crate) struct Inode {
    pub(crate) durable: Vec<u8>,
    pub(crate) volatile: Vec<u8>,
    pub(crate) pending: Vec<FileChange>,
    /// Whether a lost write left the medium behind the cache in places a sync does not know
    /// of: a sync then applies only its pending changes, so the stale sector stays stale.
    pub(crate) stale: bool,
}

/// Whether `image` holds a byte other than zero in the `length` bytes from `offset`.
fn holds_data(image: &[u8], offset: u64, length: u64) -> bool {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(image.len());
    let end = usize::try_from(offset.saturating_add(length)).unwrap_or(usize::MAX).min(image.len());
    image.get(start..end).is_some_and(|bytes| bytes.iter().any(|byte| *byte != 0))
}

fn write_into(image: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let Ok(start) = usize::try_from(offset) else { return };
    let end = start.saturating_add(bytes.len());
    if image.len() < end {
        image.resize(end, 0);
    }
    if let Some(target) = image.get_mut(start..end) {
        target.copy_from_slice(bytes);
    }
}

fn set_length(image: &mut Vec<u8>, length: u64) {
    image.resize(usize::try_from(length).unwrap_or(usize::MAX), 0);
}

impl FileChange {
    fn apply(&self, image: &mut Vec<u8>, fate: Fate) {
        match (self, fate) {
            (_, Fate::Drop) => {}
            (FileChange::SetLength { length }, _) => set_length(image, *length),
            (FileChange::Write { offset, bytes }, Fate::Keep) => write_into(image, *offset, bytes),
            (FileChange::Write { offset, bytes }, Fate::Prefix(kept)) => {
                let kept = usize::try_from(kept).unwrap_or(usize::MAX).min(bytes.len());
                write_into(image, *offset, bytes.get(..kept).unwrap_or_default());
            }
            (FileChange::Write { offset, bytes }, Fate::Garble(seed)) => {
                write_into(image, *offset, &garbled(*offset, bytes, seed));
            }
        }
    }

    /// Whether the change writes the byte at `position`.
    fn covers(&self, position: u64) -> bool {
        match self {
            FileChange::Write { offset, bytes } => {
                (*offset..offset.saturating_add(bytes.len() as u64)).contains(&position)
            }
            FileChange::SetLength { .. } => false,
        }
    }
}

/// `bytes` (to be written at `offset`) with some whole sectors replaced by garbage: each sector
/// the write touches is garbled with even odds, and at least one is.
fn garbled(offset: u64, bytes: &[u8], seed: u64) -> Vec<u8> {
    let mut random = Random::seeded(seed);
    let mut out = bytes.to_vec();
    let end = offset + bytes.len() as u64;
    let first_sector = offset / SECTOR_BYTES;
    let last_sector = end.saturating_sub(1) / SECTOR_BYTES;
    let forced = random.between(first_sector, last_sector);
    for sector in first_sector..=last_sector {
        if sector != forced && random.chance(0.5) {
            continue;
        }
        let from = (sector * SECTOR_BYTES).max(offset) - offset;
        let to = ((sector + 1) * SECTOR_BYTES).min(end) - offset;
        if let Some(range) = out.get_mut(from as usize..to as usize) {
            random.fill(range);
        }
    }
    out
}

/// Files, names and unsynced changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Disk {
    pub(crate) inodes: Vec<Inode>,
    pub(crate) durable_names: BTreeMap<String, Entry>,
    pub(crate) volatile_names: BTreeMap<String, Entry>,
    pub(crate) pending_names: Vec<NameChange>,
}

impl Disk {
    /// What `path` is bound to now.
    pub(crate) fn lookup(&self, path: &str) -> Option<Entry> {
        if path.is_empty() {
            return Some(Entry::Folder);
        }
        self.volatile_names.get(path).copied()
    }

    /// Whether `folder` exists now (the root always does).
    pub(crate) fn folder_exists(&self, folder: &str) -> bool {
        self.lookup(folder) == Some(Entry::Folder)
    }

    /// The names directly inside `folder`, now.
    pub(crate) fn children(&self, folder: &str) -> Vec<String> {
        self.volatile_names
            .keys()
            .filter(|path| parent(path) == folder && !path.is_empty())
            .map(|path| base_name(path).to_string())
            .collect()
    }

    /// Makes a new empty file (no name yet).
    pub(crate) fn new_inode(&mut self) -> usize {
        self.inodes.push(Inode::default());
        self.inodes.len() - 1
    }

    /// Applies a name change now, and queues it until its folder is synced.
    pub(crate) fn change_name(&mut self, change: NameChange) {
        change.apply(&mut self.volatile_names);
        self.pending_names.push(change);
    }

    /// Writes bytes now; durable after a sync.
    pub(crate) fn write(&mut self, inode: usize, offset: u64, bytes: &[u8]) {
        if let Some(file) = self.inodes.get_mut(inode) {
            write_into(&mut file.volatile, offset, bytes);
            file.pending.push(FileChange::Write { offset, bytes: bytes.to_vec() });
        }
    }

    /// Sets the length now; durable after a sync.
    pub(crate) fn set_length(&mut self, inode: usize, length: u64) {
        if let Some(file) = self.inodes.get_mut(inode) {
            set_length(&mut file.volatile, length);
            file.pending.push(FileChange::SetLength { length });
        }
    }

    /// The bytes a program sees.
    pub(crate) fn volatile(&self, inode: usize) -> &[u8] {
        self.inodes.get(inode).map_or(&[], |file| &file.volatile)
    }

    /// Makes everything written to `inode` durable.
    pub(crate) fn sync_file(&mut self, inode: usize) {
        if let Some(file) = self.inodes.get_mut(inode) {
            if file.stale {
                for change in file.pending.drain(..) {
                    change.apply(&mut file.durable, Fate::Keep);
                }
            } else {
                file.durable.clone_from(&file.volatile);
                file.pending.clear();
            }
        }
    }

    /// The stretch a lost write would leave stale if `inode` were synced now: one sector of its
    /// `pick`-th pending write (as `pick` chooses among their count), with the bytes the medium
    /// holds there before the sync (zeros past its end). `None` if nothing is pending.
    pub(crate) fn sector_to_lose(&self, inode: usize, mut pick: impl FnMut(u64) -> u64) -> Option<(u64, Vec<u8>)> {
        let file = self.inodes.get(inode)?;
        let mut writes: Vec<(u64, u64)> = file
            .pending
            .iter()
            .filter_map(|change| match change {
                FileChange::Write { offset, bytes } if !bytes.is_empty() => Some((*offset, bytes.len() as u64)),
                _ => None,
            })
            .collect();
        // Where the medium held older data, a lost write brings it back: prefer those.
        if self.overwrites_in_place(inode) {
            writes.retain(|(offset, length)| holds_data(&file.durable, *offset, *length));
        }
        let (offset, length) = *writes.get(pick(writes.len() as u64) as usize)?;
        let first_sector = offset / SECTOR_BYTES;
        let last_sector = (offset + length - 1) / SECTOR_BYTES;
        let sector = first_sector + pick(last_sector - first_sector + 1);
        let start = (sector * SECTOR_BYTES).max(offset);
        let end = ((sector + 1) * SECTOR_BYTES).min(offset + length);
        let old = (start..end)
            .map(|position| {
                usize::try_from(position).ok().and_then(|index| file.durable.get(index)).copied().unwrap_or(0)
            })
            .collect();
        Some((start, old))
    }

    /// Whether a pending write of `inode` overwrites data already on the medium (rather than
    /// appending, or filling space set aside as zeros).
    pub(crate) fn overwrites_in_place(&self, inode: usize) -> bool {
        self.inodes.get(inode).is_some_and(|file| {
            file.pending.iter().any(|change| match change {
                FileChange::Write { offset, bytes } => holds_data(&file.durable, *offset, bytes.len() as u64),
                FileChange::SetLength { .. } => false,
            })
        })
    }

    /// Puts `old` back on the medium at `offset` of `inode` (within its durable length), leaving
    /// the cache as it is: the write there was lost.
    pub(crate) fn lose_write(&mut self, inode: usize, offset: u64, old: &[u8]) {
        let Some(file) = self.inodes.get_mut(inode) else { return };
        let length = file.durable.len();
        let Ok(start) = usize::try_from(offset) else { return };
        let end = start.saturating_add(old.len()).min(length);
        if let (Some(target), Some(source)) = (file.durable.get_mut(start..end), old.get(..end.saturating_sub(start))) {
            target.copy_from_slice(source);
        }
        file.stale = true;
    }

    /// A failed sync: each pending change may have reached the disk, as `fates` says; all stay
    /// pending, since nothing is known about them.
    pub(crate) fn sync_file_partly(&mut self, inode: usize, mut fate: impl FnMut() -> Fate) {
        if let Some(file) = self.inodes.get_mut(inode) {
            for change in &file.pending {
                change.apply(&mut file.durable, fate());
            }
        }
    }

    /// Makes every name change of `folder` durable.
    pub(crate) fn sync_folder(&mut self, folder: &str) {
        let (synced, rest): (Vec<NameChange>, Vec<NameChange>) =
            self.pending_names.drain(..).partition(|change| change.folder() == folder);
        self.pending_names = rest;
        for change in synced {
            change.apply(&mut self.durable_names);
        }
        prune_orphans(&mut self.durable_names);
    }

    /// A failed folder sync: some of the folder's changes reached the disk, the rest stay pending.
    pub(crate) fn sync_folder_partly(&mut self, folder: &str, mut keep: impl FnMut() -> bool) {
        let mut rest = Vec::new();
        for change in self.pending_names.drain(..) {
            if change.folder() == folder && keep() {
                change.apply(&mut self.durable_names);
            } else {
                rest.push(change);
            }
        }
        self.pending_names = rest;
        prune_orphans(&mut self.durable_names);
    }

    /// The name by which to describe `inode`: a durable or volatile name, or `#inode`.
    pub(crate) fn inode_name(&self, inode: usize) -> String {
        let named = |names: &BTreeMap<String, Entry>| {
            names.iter().find(|(_, entry)| **entry == Entry::File(inode)).map(|(path, _)| path.clone())
        };
        named(&self.volatile_names).or_else(|| named(&self.durable_names)).unwrap_or_else(|| format!("#{inode}"))
    }

    /// Every unsynced change, files first (by inode), then names, in the order `crash_with`
    /// expects fates for them.
    pub(crate) fn pending_changes(&self) -> Vec<PendingChange> {
        let mut out = Vec::new();
        for (inode, file) in self.inodes.iter().enumerate() {
            for change in &file.pending {
                let path = self.inode_name(inode);
                out.push(match change {
                    FileChange::Write { offset, bytes } => {
                        PendingChange::Write { path, offset: *offset, length: bytes.len() as u64 }
                    }
                    FileChange::SetLength { length } => PendingChange::SetLength { path, length: *length },
                });
            }
        }
        for change in &self.pending_names {
            out.push(PendingChange::Name { description: format!("{change:?}") });
        }
        out
    }

    /// The crash: each pending change meets its fate (in `pending_changes` order; missing fates
    /// drop), the durable state becomes the whole state, and nothing is pending any more.
    pub(crate) fn crash_with(&mut self, fates: &[Fate]) {
        let mut fates = fates.iter().copied();
        for file in &mut self.inodes {
            for change in file.pending.drain(..) {
                change.apply(&mut file.durable, fates.next().unwrap_or(Fate::Drop));
            }
            file.volatile.clone_from(&file.durable);
            file.stale = false;
        }
        for change in self.pending_names.drain(..) {
            if fates.next().is_some_and(|fate| fate != Fate::Drop) {
                change.apply(&mut self.durable_names);
            }
        }
        prune_orphans(&mut self.durable_names);
        self.volatile_names.clone_from(&self.durable_names);
    }

    /// Flips bit `bit` of the byte at `position` of `inode` on the medium, and in the cache
    /// unless an unsynced write covers that byte there.
    pub(crate) fn flip_bit(&mut self, inode: usize, position: u64, bit: u8) {
        let Some(file) = self.inodes.get_mut(inode) else { return };
        let mask = 1u8 << (bit % 8);
        let index = usize::try_from(position).unwrap_or(usize::MAX);
        if let Some(byte) = file.durable.get_mut(index) {
            *byte ^= mask;
        }
        if !file.pending.iter().any(|change| change.covers(position)) {
            if let Some(byte) = file.volatile.get_mut(index) {
                *byte ^= mask;
            }
        }
    }

    /// Every inode reachable by a durable or volatile name, once, with one of its names.
    pub(crate) fn reachable_files(&self) -> Vec<(String, usize)> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (path, entry) in self.volatile_names.iter().chain(self.durable_names.iter()) {
            if let Entry::File(inode) = entry {
                if seen.insert(*inode) {
                    out.push((path.clone(), *inode));
                }
            }
        }
        out
    }
}

/// Removes names whose folder does not exist: a folder whose creation never reached the disk (or
/// whose removal did) takes its files with it.
fn prune_orphans(names: &mut BTreeMap<String, Entry>) {
    let folders: BTreeSet<String> =
        names.iter().filter(|(_, entry)| **entry == Entry::Folder).map(|(path, _)| path.clone()).collect();
    names.retain(|path, _| {
        let folder = parent(path);
        folder.is_empty() || folders.contains(folder)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk_with_file(path: &str) -> (Disk, usize) {
        let mut disk = Disk::default();
        let inode = disk.new_inode();
        disk.change_name(NameChange::Link { path: path.to_string(), entry: Entry::File(inode) });
        (disk, inode)
    }

    #[test]
    fn a_crash_keeps_only_what_was_synced() {
        let (mut disk, inode) = disk_with_file("a");
        disk.sync_folder("");
        disk.write(inode, 0, b"hello");
        disk.sync_file(inode);
        disk.write(inode, 5, b" world");
        assert_eq!(disk.volatile(inode), b"hello world");
        disk.crash_with(&[Fate::Drop]);
        assert_eq!(disk.volatile(inode), b"hello");
        assert_eq!(disk.lookup("a"), Some(Entry::File(inode)));
    }

    #[test]
    fn an_unsynced_create_may_vanish_and_takes_the_file_with_it() {
        let (mut disk, inode) = disk_with_file("a");
        disk.write(inode, 0, b"data");
        disk.sync_file(inode);
        disk.crash_with(&[Fate::Drop]);
        assert_eq!(disk.lookup("a"), None);
    }

    #[test]
    fn a_torn_write_keeps_a_prefix_and_a_garbled_one_changes_bytes() {
        let (mut disk, inode) = disk_with_file("a");
        disk.sync_folder("");
        disk.write(inode, 0, &[7u8; 1000]);
        let mut torn = disk.clone();
        torn.crash_with(&[Fate::Prefix(300)]);
        assert_eq!(torn.volatile(inode), &[7u8; 300][..]);
        disk.crash_with(&[Fate::Garble(5)]);
        assert_eq!(disk.volatile(inode).len(), 1000);
        assert_ne!(disk.volatile(inode), &[7u8; 1000][..]);
    }

    #[test]
    fn a_rename_is_all_or_nothing_and_durable_after_the_folder_sync() {
        let (mut disk, old) = disk_with_file("f");
        disk.sync_folder("");
        let new = disk.new_inode();
        disk.change_name(NameChange::Link { path: "f.tmp".to_string(), entry: Entry::File(new) });
        disk.change_name(NameChange::Rename { from: "f.tmp".to_string(), to: "f".to_string(), inode: new });
        let mut dropped = disk.clone();
        dropped.crash_with(&[Fate::Keep, Fate::Drop]);
        assert_eq!(dropped.lookup("f"), Some(Entry::File(old)));
        assert_eq!(dropped.lookup("f.tmp"), Some(Entry::File(new)));
        disk.sync_folder("");
        disk.crash_with(&[]);
        assert_eq!(disk.lookup("f"), Some(Entry::File(new)));
        assert_eq!(disk.lookup("f.tmp"), None);
    }

    #[test]
    fn removing_a_folder_durably_removes_its_files() {
        let mut disk = Disk::default();
        disk.change_name(NameChange::Link { path: "d".to_string(), entry: Entry::Folder });
        let inode = disk.new_inode();
        disk.change_name(NameChange::Link { path: "d/x".to_string(), entry: Entry::File(inode) });
        disk.sync_folder("");
        disk.sync_folder("d");
        disk.change_name(NameChange::Unlink { path: "d/x".to_string() });
        disk.change_name(NameChange::Unlink { path: "d".to_string() });
        disk.sync_folder("");
        disk.crash_with(&[]);
        assert_eq!(disk.lookup("d"), None);
        assert_eq!(disk.lookup("d/x"), None);
    }

    #[test]
    fn a_bit_flip_reaches_the_cache_unless_a_newer_write_covers_it() {
        let (mut disk, inode) = disk_with_file("a");
        disk.write(inode, 0, &[0u8; 4]);
        disk.sync_file(inode);
        disk.flip_bit(inode, 1, 0);
        assert_eq!(disk.volatile(inode), &[0, 1, 0, 0]);
        disk.write(inode, 2, &[9]);
        disk.flip_bit(inode, 2, 1);
        assert_eq!(disk.volatile(inode), &[0, 1, 9, 0]);
    }
}
