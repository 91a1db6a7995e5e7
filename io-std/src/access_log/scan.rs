//! Checking one log file on its own: its header, every entry's hash, and the links between
//! them. Joining files into one chain is the reader's part ([`super::reader`]).

use super::chain::ChainHash;
use super::damage::{DamageKind, LogDamage};
use super::record::{EntryRecord, HeaderRecord, BREAK_FORMAT_VERSION, FORMAT_NAME, FORMAT_VERSION};

/// One entry that verified, and where it stands.
#[derive(Debug, Clone)]
pub struct ScannedEntry {
    /// Its line in the file (the header is line 1).
    pub line: usize,
    /// What it says.
    pub record: EntryRecord,
}

/// A file whose header and entries all verified.
#[derive(Debug, Clone)]
pub struct ScannedFile {
    /// Its header.
    pub header: HeaderRecord,
    /// The hash the header says the file starts after.
    pub starts_after: ChainHash,
    /// Its entries, in order.
    pub entries: Vec<ScannedEntry>,
    /// The hash of its last entry, or of its header when it has none.
    pub end_hash: ChainHash,
    /// The number the next entry gets.
    pub next_number: u64,
    /// Bytes up to the end of its last complete line.
    pub complete_bytes: u64,
    /// The line number of an incomplete last line: an append cut short by a crash.
    pub torn_line: Option<usize>,
}

/// What a file turned out to hold.
#[derive(Debug, Clone)]
pub enum Scan {
    /// Not even a complete header: the file was made and a crash came before its first line was
    /// written in full.
    TornHeader,
    /// A verified header and entries.
    File(Box<ScannedFile>),
}

/// Checks the bytes of the file shown as `shown`, which should be file `file_number` of
/// `agent`'s log. Damage after a header that verified still gives what verified before it: the
/// file as far as its last entry that verified, and the damage (the first line that does not
/// verify).
///
/// # Errors
/// [`LogDamage`] when the header itself does not verify.
pub fn scan_prefix(
    shown: &str,
    bytes: &[u8],
    agent: &str,
    file_number: u64,
) -> Result<(Scan, Option<LogDamage>), LogDamage> {
    // A line is complete once its line feed is written: the writer appends each line, line feed
    // included, in one write, so only the last line can be cut short.
    let complete_bytes = bytes.iter().rposition(|&byte| byte == b'\n').map_or(0, |end| end + 1);
    let complete = bytes.get(..complete_bytes).unwrap_or_default();
    let mut lines = complete.split(|&byte| byte == b'\n');
    let Some(header_line) = lines.next().filter(|_| complete_bytes > 0) else {
        return Ok((Scan::TornHeader, None));
    };
    let header = check_header(shown, header_line, agent, file_number)?;
    let starts_after = ChainHash::from_hex(&header.starts_after).unwrap_or(ChainHash::START);
    let mut end_hash = ChainHash::from_hex(&header.hash).unwrap_or(ChainHash::START);
    let mut next_number = header.first_number;
    let entry_lines: Vec<&[u8]> = lines.collect();
    // `split` yields an empty piece after the last line feed; it is not a line.
    let entry_lines = entry_lines.get(..entry_lines.len().saturating_sub(1)).unwrap_or_default();
    let mut entries = Vec::with_capacity(entry_lines.len());
    let mut verified_bytes = header_line.len() + 1;
    let mut damage = None;
    for (index, text) in entry_lines.iter().enumerate() {
        let line = index + 2;
        let record = match check_entry(shown, line, text, end_hash, next_number, entry_lines.get(index + 1..)) {
            Ok(record) => record,
            Err(found) => {
                damage = Some(found);
                break;
            }
        };
        end_hash = ChainHash::from_hex(&record.hash).unwrap_or(ChainHash::START);
        next_number = record.number.saturating_add(1);
        verified_bytes += text.len() + 1;
        entries.push(ScannedEntry { line, record });
    }
    // After damage, what follows it is not this file's: it has no torn end of its own.
    let torn_line = (damage.is_none() && complete_bytes < bytes.len()).then_some(entry_lines.len() + 2);
    let complete_bytes = if damage.is_some() { verified_bytes } else { complete_bytes };
    let scanned = ScannedFile {
        header,
        starts_after,
        entries,
        end_hash,
        next_number,
        complete_bytes: u64::try_from(complete_bytes).unwrap_or(u64::MAX),
        torn_line,
    };
    Ok((Scan::File(Box::new(scanned)), damage))
}

fn check_header(shown: &str, text: &[u8], agent: &str, file_number: u64) -> Result<HeaderRecord, LogDamage> {
    let damage = |kind, detail: String| LogDamage::line(shown, 1, None, kind, detail);
    let header: HeaderRecord = serde_json::from_slice(text)
        .map_err(|_| damage(DamageKind::Unreadable, String::from("it is not the header of an access log")))?;
    let known_version = match header.after_damage {
        None => header.version == FORMAT_VERSION,
        Some(_) => header.version == BREAK_FORMAT_VERSION,
    };
    if header.format != FORMAT_NAME || !known_version {
        let detail = format!("format {:?} version {} is not one this cheesedb reads", header.format, header.version);
        return Err(damage(DamageKind::Unreadable, detail));
    }
    let Some(computed) = header.computed_hash() else {
        return Err(damage(DamageKind::Edited, String::from("the hash it starts after is not a hash")));
    };
    if Some(computed) != ChainHash::from_hex(&header.hash) {
        return Err(damage(DamageKind::Edited, String::from("its fields do not match its hash")));
    }
    if header.agent != agent {
        return Err(damage(DamageKind::Misplaced, format!("it belongs to agent {:?}", header.agent)));
    }
    if header.file_number != file_number {
        let detail = format!("it says it is file {} of the log: the file was renamed", header.file_number);
        return Err(damage(DamageKind::Misplaced, detail));
    }
    if header.first_number == 0 {
        return Err(damage(DamageKind::Edited, String::from("its first entry number is 0")));
    }
    Ok(header)
}

/// Checks the entry on `line`, which must follow `previous` as entry `expected`. `later` are the
/// lines after it, searched only to tell a moved entry from a removed one.
fn check_entry(
    shown: &str,
    line: usize,
    text: &[u8],
    previous: ChainHash,
    expected: u64,
    later: Option<&[&[u8]]>,
) -> Result<EntryRecord, LogDamage> {
    let unreadable = |detail: &str| LogDamage::line(shown, line, None, DamageKind::Unreadable, detail);
    let record: EntryRecord =
        serde_json::from_slice(text).map_err(|_| unreadable("it is not an entry of an access log"))?;
    let damage = |kind, detail: String| LogDamage::line(shown, line, Some(record.number), kind, detail);
    let (Some(its_previous), Some(its_hash)) =
        (ChainHash::from_hex(&record.previous), ChainHash::from_hex(&record.hash))
    else {
        return Err(damage(DamageKind::Edited, String::from("its hashes are not hashes")));
    };
    if record.computed_hash(its_previous) != its_hash {
        return Err(damage(DamageKind::Edited, String::from("its fields do not match its hash")));
    }
    if its_previous != previous {
        return Err(broken_link(&record, expected, later, damage));
    }
    if record.number != expected {
        let detail = format!("it is numbered {} where {expected} is due", record.number);
        return Err(damage(DamageKind::Edited, detail));
    }
    Ok(record)
}

/// Why an entry does not follow the one before it, from the numbers around it.
fn broken_link(
    record: &EntryRecord,
    expected: u64,
    later: Option<&[&[u8]]>,
    damage: impl Fn(DamageKind, String) -> LogDamage,
) -> LogDamage {
    if record.number < expected {
        let detail = format!("it comes after entry {}: entries were moved", expected - 1);
        return damage(DamageKind::Reordered, detail);
    }
    if record.number == expected {
        let detail =
            String::from("it does not follow the line before it: one of the two was rewritten and its hash recomputed");
        return damage(DamageKind::Edited, detail);
    }
    let moved_here = later.unwrap_or_default().iter().any(|text| {
        serde_json::from_slice::<EntryRecord>(text).is_ok_and(|later_record| later_record.number == expected)
    });
    if moved_here {
        return damage(DamageKind::Reordered, format!("it stands where entry {expected} should, which comes later"));
    }
    let missing = if record.number - expected == 1 {
        format!("entry {expected} is missing before it")
    } else {
        format!("entries {expected} to {} are missing before it", record.number - 1)
    };
    damage(DamageKind::Removed, missing)
}
