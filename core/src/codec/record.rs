//! Log records: lots, memories, recalls, vectors, and the commit and seal markers that frame them.
//!
//! ```text
//! offset  size  field
//!      0     4  crc32c of bytes [4, length)
//!      4     4  length of the whole record, this header included
//!      8     1  kind: 1 lot, 2 memory, 3 recall, 4 commit, 5 seal, 6 vector, 7 member,
//!                  8 shared, 9 recall of several
//!      9     1  flags: bit 0 = content erased (salt and content are absent),
//!                  bit 1 = a memory's tracked parents follow its legs, bit 2 = content sealed,
//!                  bit 3 = authored (a space's record: its author follows the identity)
//!     10     2  reserved, zero
//!     12     8  agent number          } the record's identity, inside the checksum, so a
//!     20     8  segment number        } block copied to another file, place or agent fails
//!     28     8  sequence              }
//!     36     8  with the authored flag only: the number of the member agent that wrote it
//!      …     …  body, by kind (below)
//! ```
//!
//! Bodies (all integers little-endian):
//! - lot: id u64, label length u16, label, content block
//! - memory: id u64, leg count u16, legs (each: parent count u16, parents u64…), then, with the
//!   tracked flag, tracked parent count u16 and tracked parents u64… (ascending, at least one, each
//!   a parent in every leg), then the content block
//! - recall: id u64, mode u8 (0 fair, 1 strict), removal u8 (0 untrusted, 1 erase)
//! - recall of several: mode u8, removal u8, id count u32, the ids (`recalled_ids`)
//! - commit: batch start u64, batch crc32c u32, record count u32, chain hash \[32\]
//! - seal: next segment number u64
//! - vector: id u64, content block whose content is the vector's numbers (f32, little-endian)
//! - member (a space's log only): agent u64, role u8 (0 none: revoked, 1 read, 2 write, 3 admin)
//!
//! The authored flag may be set on every chained record and must be set on a member record: a
//! space's log names the member behind each change. The chain commits to the author after the
//! sequence, so an agent's log, which never sets it, keeps the chained fields it always had.
//!
//! Flags bit 2 (lots, memories, vectors) says the content is sealed: an encrypted agent's
//! record, whose content bytes are an envelope (`seal::envelope`); a sealed lot's label field is
//! empty, its label being inside the envelope.
//!
//! The content block is the salted digest \[32\], then, unless erased: salt \[16\], content length
//! u32, content. An erased content block is the digest followed by zeros up to the record's
//! length: none after a rewrite, or as many as the salt, length and content took when the record
//! was redacted in place (so its length, and every offset after it, stayed the same).

use alloc::vec::Vec;

use super::bytes::{u32_at, Reader, Writer};
use super::recalled_ids::{RecalledIds, DISTANCE_MAX_BYTES, RECALLED_IDS_MAX};
use crate::checksum::crc32c;
use crate::corrupt_reason::CorruptReason;
use crate::digest::Hash;
use crate::id::{Mode, Removal};
use crate::limits::PARENTS_PER_LEG_MAX;
use crate::role::Role;

/// Bytes of the header common to every record.
pub const HEADER_BYTES: usize = 36;
/// Bytes of a content salt.
pub const SALT_BYTES: usize = 16;
/// Bytes of a commit marker (header and body).
pub const COMMIT_BYTES: usize = HEADER_BYTES + 8 + 4 + 4 + 32;
/// The largest record the decoder accepts, so a damaged length cannot ask for gigabytes.
pub const RECORD_MAX_BYTES: usize = 32 * 1024 * 1024;

const OFFSET_LENGTH: usize = 4;
const OFFSET_KIND: usize = 8;
const FLAG_ERASED: u8 = 1;
/// A memory's record holds the list of its parents that came from read tracking.
const FLAG_TRACKED: u8 = 2;
/// The content block of a lot, memory or vector is sealed: an encrypted agent's record.
const FLAG_SEALED: u8 = 4;
/// The record names the member agent that wrote it (a space's record).
const FLAG_AUTHORED: u8 = 8;

const KIND_LOT: u8 = 1;
const KIND_MEMORY: u8 = 2;
const KIND_RECALL: u8 = 3;
const KIND_COMMIT: u8 = 4;
const KIND_SEAL: u8 = 5;
const KIND_VECTOR: u8 = 6;
const KIND_MEMBER: u8 = 7;
const KIND_SHARED: u8 = 8;
const KIND_RECALL_ALL: u8 = 9;

const _: () = assert!(COMMIT_BYTES == 84);
// A tracked list is checked with one bit per id.
const _: () = assert!(PARENTS_PER_LEG_MAX <= 64 && PARENTS_PER_LEG_MAX >= 1);
const _: () = assert!(crate::limits::CONTENT_MAX_BYTES + 64 * 1024 < RECORD_MAX_BYTES);
// A recall of the most ids, each at its longest, stays far below a record's limit.
const _: () = assert!(RECALLED_IDS_MAX * DISTANCE_MAX_BYTES + 64 < RECORD_MAX_BYTES);

/// Where a record was found, and which record it must be there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The agent the log belongs to.
    pub agent: u64,
    /// The segment file the record is in.
    pub segment: u64,
    /// The record's sequence number in the agent's log (framing records repeat the last one).
    pub sequence: u64,
}

/// The salted digest of a content, with the salt and content unless they were erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentBlock<'a> {
    /// `content_digest(salt, content)`; the chain commits to this.
    pub digest: Hash,
    /// The salt and the content, absent once erased.
    pub present: Option<(&'a [u8; SALT_BYTES], &'a [u8])>,
    /// Zero bytes after the digest of an erased content: where the salt, length and content were
    /// before the record was redacted in place. Always 0 while the content is present.
    pub erased_padding_bytes: u32,
    /// The content is sealed (an encrypted agent's record): its bytes are an envelope (see
    /// `seal::envelope`), and a lot keeps its label inside it, its label field empty.
    pub sealed: bool,
}

impl ContentBlock<'_> {
    /// Bytes the salt, the length field and the content take (0 once erased).
    #[must_use]
    pub fn present_bytes(&self) -> usize {
        self.present.map_or(0, |(_, bytes)| SALT_BYTES + 4 + bytes.len())
    }
}

/// The legs of a memory in their encoded form, checked when decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegsView<'a> {
    count: u16,
    raw: &'a [u8],
}

impl<'a> LegsView<'a> {
    /// Encodes legs given as slices of parent ids.
    pub fn encode<L: AsRef<[u64]>>(legs: &[L], out: &mut Vec<u8>) {
        for leg in legs {
            let parents = leg.as_ref();
            debug_assert!(parents.len() <= usize::from(u16::MAX));
            out.put_u16(crate::convert::field_length_u16(parents.len()));
            for parent in parents {
                out.put_u64(*parent);
            }
        }
    }

    /// A view of `count` encoded legs in `raw`; `None` unless `raw` holds exactly that.
    #[must_use]
    pub fn parse(count: u16, raw: &'a [u8]) -> Option<LegsView<'a>> {
        let mut reader = Reader::new(raw);
        for _ in 0..count {
            let parents = reader.u16()?;
            reader.take(usize::from(parents).checked_mul(8)?)?;
        }
        (reader.remaining() == 0).then_some(LegsView { count, raw })
    }

    /// How many legs.
    #[must_use]
    pub fn count(&self) -> u16 {
        self.count
    }

    /// The encoded bytes.
    #[must_use]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// Each leg as an iterator of parent ids.
    pub fn iter(&self) -> impl Iterator<Item = impl Iterator<Item = u64> + 'a> + 'a {
        let mut reader = Reader::new(self.raw);
        (0..self.count).map_while(move |_| {
            let parents = reader.u16()?;
            let bytes = reader.take(usize::from(parents) * 8)?;
            Some(bytes.chunks_exact(8).map(|chunk| {
                let mut field = [0u8; 8];
                field.copy_from_slice(chunk);
                u64::from_le_bytes(field)
            }))
        })
    }
}

/// The parents a memory got from read tracking, in their encoded form: ascending ids, each also
/// a parent in every leg. Empty for a memory written without tracking, whose record has no list
/// (and no tracked flag), so records written before tracking existed decode unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrackedView<'a> {
    count: u16,
    raw: &'a [u8],
}

impl<'a> TrackedView<'a> {
    /// The view of a memory without tracked parents.
    pub const NONE: TrackedView<'static> = TrackedView { count: 0, raw: &[] };

    /// Encodes tracked parent ids (without their count).
    pub fn encode(ids: &[u64], out: &mut Vec<u8>) {
        for id in ids {
            out.put_u64(*id);
        }
    }

    /// A view of `count` encoded ids in `raw`; `None` unless `raw` holds exactly that.
    #[must_use]
    pub fn parse(count: u16, raw: &'a [u8]) -> Option<TrackedView<'a>> {
        (usize::from(count).checked_mul(8)? == raw.len()).then_some(TrackedView { count, raw })
    }

    /// How many ids.
    #[must_use]
    pub fn count(&self) -> u16 {
        self.count
    }

    /// Whether the memory has no tracked parent (its record has no list).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded ids.
    #[must_use]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The ids, in their stored order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        self.raw.chunks_exact(8).map(|chunk| {
            let mut field = [0u8; 8];
            field.copy_from_slice(chunk);
            u64::from_le_bytes(field)
        })
    }
}

/// What a record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body<'a> {
    /// A source was added.
    Lot {
        /// Its id.
        id: u64,
        /// Its label (UTF-8, checked when decoded).
        label: &'a str,
        /// Its content.
        content: ContentBlock<'a>,
    },
    /// A memory was added.
    Memory {
        /// Its id.
        id: u64,
        /// Its legs.
        legs: LegsView<'a>,
        /// Which of its parents came from read tracking (each is a parent in every leg).
        tracked: TrackedView<'a>,
        /// Its content.
        content: ContentBlock<'a>,
    },
    /// A lot or memory was recalled.
    Recall {
        /// The recalled id.
        id: u64,
        /// Fair or Strict.
        mode: Mode,
        /// Untrusted or Erase.
        removal: Removal,
    },
    /// Several lots and memories were recalled at once, with one mode and removal: the same as
    /// a recall record for each, but planned together (a member applying a space's recall to
    /// all its shared nodes writes one).
    RecallAll {
        /// The recalled ids, ascending.
        ids: RecalledIds<'a>,
        /// Fair or Strict.
        mode: Mode,
        /// Untrusted or Erase.
        removal: Removal,
    },
    /// A vector was attached to a lot or memory (replacing any earlier one). Its numbers are a
    /// content block, so an Erase removes them as it removes text, and the chain commits only to
    /// their salted digest.
    Vector {
        /// The lot or memory.
        id: u64,
        /// The numbers, as little-endian f32.
        content: ContentBlock<'a>,
    },
    /// Closes a durable write: every record from `batch_start` up to this marker.
    Commit {
        /// File offset of the first record of the write.
        batch_start: u64,
        /// crc32c of the bytes from `batch_start` up to this marker.
        batch_crc: u32,
        /// How many records the write holds.
        record_count: u32,
        /// The chain hash after the write's last record.
        chain: Hash,
    },
    /// The segment is full; the log goes on in `next_segment`.
    Seal {
        /// The number of the next segment.
        next_segment: u64,
    },
    /// A node of an agent that stands for a lot or memory of a space, so the agent's memories
    /// can name it as a parent (and die when the space recalls it).
    Shared {
        /// Its id, in the agent's sequence.
        id: u64,
        /// The space's number in the store.
        space: u64,
        /// The node's id in the space.
        space_id: u64,
    },
    /// A space's member was granted a role, or revoked ([`Role::None`]).
    Member {
        /// The member agent's number in the store.
        agent: u64,
        /// What it may do in the space from this record on.
        role: Role,
    },
}

/// One decoded record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Where the record belongs.
    pub identity: Identity,
    /// What it says.
    pub body: Body<'a>,
    /// The member agent that wrote it, for a space's record; `None` in an agent's own log.
    pub author: Option<u64>,
}

impl<'a> Record<'a> {
    /// Whether the record is a lot, memory, recall or vector (the records the hash chain covers).
    #[must_use]
    pub fn is_chained(&self) -> bool {
        matches!(
            self.body,
            Body::Lot { .. }
                | Body::Memory { .. }
                | Body::Recall { .. }
                | Body::RecallAll { .. }
                | Body::Vector { .. }
                | Body::Member { .. }
                | Body::Shared { .. }
        )
    }

    /// The same record with its content's salt and bytes removed (the digest stays), and no
    /// padding: shorter than the original, for a rewrite that moves records.
    #[must_use]
    pub fn redacted(&self) -> Record<'a> {
        self.with_content(|content| ContentBlock {
            digest: content.digest,
            present: None,
            erased_padding_bytes: 0,
            sealed: content.sealed,
        })
    }

    /// The same record with its content's salt and bytes replaced by as many zeros, so that it
    /// keeps its length and can overwrite the original where it lies. An erased record stays
    /// as it is.
    #[must_use]
    pub fn redacted_in_place(&self) -> Record<'a> {
        self.with_content(|content| match content.present {
            Some(_) => ContentBlock {
                digest: content.digest,
                present: None,
                erased_padding_bytes: crate::convert::field_length_u32(content.present_bytes()),
                sealed: content.sealed,
            },
            None => content,
        })
    }

    /// Whether the record recalls `id` with Erase (alone or among several).
    #[must_use]
    pub fn erases(&self, id: u64) -> bool {
        match self.body {
            Body::Recall { id: recalled, removal: Removal::Erase, .. } => recalled == id,
            Body::RecallAll { ids, removal: Removal::Erase, .. } => ids.contains(id),
            _ => false,
        }
    }

    /// The content of a lot or memory, or the numbers of a vector, if the record is one.
    #[must_use]
    pub fn content(&self) -> Option<ContentBlock<'a>> {
        match self.body {
            Body::Lot { content, .. } | Body::Memory { content, .. } | Body::Vector { content, .. } => Some(content),
            Body::Recall { .. }
            | Body::RecallAll { .. }
            | Body::Commit { .. }
            | Body::Seal { .. }
            | Body::Member { .. }
            | Body::Shared { .. } => None,
        }
    }

    fn with_content(&self, change: impl FnOnce(ContentBlock<'a>) -> ContentBlock<'a>) -> Record<'a> {
        let body = match self.body {
            Body::Lot { id, label, content } => Body::Lot { id, label, content: change(content) },
            Body::Memory { id, legs, tracked, content } => Body::Memory { id, legs, tracked, content: change(content) },
            Body::Vector { id, content } => Body::Vector { id, content: change(content) },
            other => other,
        };
        Record { identity: self.identity, body, author: self.author }
    }

    /// Appends the record's encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u32(0); // the checksum, filled in below
        out.put_u32(0); // the length, filled in below
        let (kind, flags) = self.kind_and_flags();
        out.put_u8(kind);
        out.put_u8(flags);
        out.put_u16(0);
        out.put_u64(self.identity.agent);
        out.put_u64(self.identity.segment);
        out.put_u64(self.identity.sequence);
        if let Some(author) = self.author {
            out.put_u64(author);
        }
        self.encode_body(out);
        let length = out.len() - start;
        debug_assert!(length <= RECORD_MAX_BYTES);
        let length_field = crate::convert::field_length_u32(length).to_le_bytes();
        let tail = out.split_at_mut(start).1;
        tail.get_mut(OFFSET_LENGTH..OFFSET_LENGTH + 4)
            .into_iter()
            .for_each(|field| field.copy_from_slice(&length_field));
        let checksum = crc32c(tail.get(4..).unwrap_or_default()).to_le_bytes();
        tail.get_mut(0..4).into_iter().for_each(|field| field.copy_from_slice(&checksum));
    }

    fn kind_and_flags(&self) -> (u8, u8) {
        let (kind, flags) = self.kind_and_content_flags();
        (kind, flags | if self.author.is_some() { FLAG_AUTHORED } else { 0 })
    }

    fn kind_and_content_flags(&self) -> (u8, u8) {
        let erased = |content: &ContentBlock<'_>| {
            let erased = if content.present.is_none() { FLAG_ERASED } else { 0 };
            erased | if content.sealed { FLAG_SEALED } else { 0 }
        };
        match &self.body {
            Body::Lot { content, .. } => (KIND_LOT, erased(content)),
            Body::Memory { content, tracked, .. } => {
                let tracked_flag = if tracked.is_empty() { 0 } else { FLAG_TRACKED };
                (KIND_MEMORY, erased(content) | tracked_flag)
            }
            Body::Vector { content, .. } => (KIND_VECTOR, erased(content)),
            Body::Recall { .. } => (KIND_RECALL, 0),
            Body::RecallAll { .. } => (KIND_RECALL_ALL, 0),
            Body::Commit { .. } => (KIND_COMMIT, 0),
            Body::Seal { .. } => (KIND_SEAL, 0),
            Body::Member { .. } => (KIND_MEMBER, 0),
            Body::Shared { .. } => (KIND_SHARED, 0),
        }
    }

    fn encode_body(&self, out: &mut Vec<u8>) {
        match &self.body {
            Body::Lot { id, label, content } => {
                out.put_u64(*id);
                out.put_u16(crate::convert::field_length_u16(label.len()));
                out.put_bytes(label.as_bytes());
                encode_content(content, out);
            }
            Body::Memory { id, legs, tracked, content } => {
                out.put_u64(*id);
                out.put_u16(legs.count);
                out.put_bytes(legs.raw);
                encode_tracked(tracked, out);
                encode_content(content, out);
            }
            Body::Recall { id, mode, removal } => {
                out.put_u64(*id);
                encode_mode_and_removal(*mode, *removal, out);
            }
            Body::RecallAll { ids, mode, removal } => {
                encode_mode_and_removal(*mode, *removal, out);
                out.put_u32(ids.count());
                out.put_bytes(ids.raw());
            }
            Body::Commit { batch_start, batch_crc, record_count, chain } => {
                out.put_u64(*batch_start);
                out.put_u32(*batch_crc);
                out.put_u32(*record_count);
                out.put_bytes(chain);
            }
            Body::Seal { next_segment } => out.put_u64(*next_segment),
            Body::Member { agent, role } => {
                out.put_u64(*agent);
                out.put_u8(role.code());
            }
            Body::Shared { id, space, space_id } => {
                out.put_u64(*id);
                out.put_u64(*space);
                out.put_u64(*space_id);
            }
            Body::Vector { id, content } => {
                out.put_u64(*id);
                encode_content(content, out);
            }
        }
    }

    /// Appends the fields the hash chain commits to: everything but the checksum, the length,
    /// the placement (segment) and the salt and content, which erasure may remove.
    pub fn encode_chained_fields(&self, out: &mut Vec<u8>) {
        out.clear();
        let (kind, _) = self.kind_and_flags();
        out.put_u8(kind);
        out.put_u64(self.identity.agent);
        out.put_u64(self.identity.sequence);
        if let Some(author) = self.author {
            out.put_u64(author);
        }
        match &self.body {
            Body::Lot { id, label, content } => {
                out.put_u64(*id);
                out.put_u16(crate::convert::field_length_u16(label.len()));
                out.put_bytes(label.as_bytes());
                out.put_bytes(&content.digest);
            }
            Body::Memory { id, legs, tracked, content } => {
                out.put_u64(*id);
                out.put_u16(legs.count);
                out.put_bytes(legs.raw);
                // Present only with the tracked flag, as in the record: the chained fields of a
                // memory written without tracking are those they always were.
                encode_tracked(tracked, out);
                out.put_bytes(&content.digest);
            }
            Body::Vector { id, content } => {
                out.put_u64(*id);
                out.put_bytes(&content.digest);
            }
            Body::Recall { .. }
            | Body::RecallAll { .. }
            | Body::Commit { .. }
            | Body::Seal { .. }
            | Body::Member { .. }
            | Body::Shared { .. } => {
                self.encode_body(out);
            }
        }
    }
}

/// A recall's mode (0 Fair, 1 Strict) and removal (0 Untrusted, 1 Erase), a byte each.
fn encode_mode_and_removal(mode: Mode, removal: Removal, out: &mut Vec<u8>) {
    out.put_u8(match mode {
        Mode::Fair => 0,
        Mode::Strict => 1,
    });
    out.put_u8(match removal {
        Removal::Untrusted => 0,
        Removal::Erase => 1,
    });
}

/// Reads what [`encode_mode_and_removal`] wrote.
fn decode_mode_and_removal(reader: &mut Reader<'_>, missing: CorruptReason) -> Result<(Mode, Removal), CorruptReason> {
    let mode = match reader.u8().ok_or(missing)? {
        0 => Mode::Fair,
        1 => Mode::Strict,
        _ => return Err(CorruptReason::UnknownRecallMode),
    };
    let removal = match reader.u8().ok_or(missing)? {
        0 => Removal::Untrusted,
        1 => Removal::Erase,
        _ => return Err(CorruptReason::UnknownRemoval),
    };
    Ok((mode, removal))
}

/// The tracked parent list, if the memory has one: its count, then its ids.
fn encode_tracked(tracked: &TrackedView<'_>, out: &mut Vec<u8>) {
    if !tracked.is_empty() {
        out.put_u16(tracked.count);
        out.put_bytes(tracked.raw);
    }
}

fn encode_content(content: &ContentBlock<'_>, out: &mut Vec<u8>) {
    out.put_bytes(&content.digest);
    match content.present {
        Some((salt, bytes)) => {
            debug_assert_eq!(content.erased_padding_bytes, 0, "padding only follows an erased content");
            out.put_bytes(salt);
            out.put_u32(crate::convert::field_length_u32(bytes.len()));
            out.put_bytes(bytes);
        }
        None => out.resize(out.len() + content.erased_padding_bytes as usize, 0),
    }
}

/// The length a record at the start of `bytes` claims, if its header is there.
#[must_use]
pub fn claimed_length(bytes: &[u8]) -> Option<u32> {
    u32_at(bytes, OFFSET_LENGTH)
}

/// Whether `bytes` starts with something shaped like a commit marker (its kind and length),
/// to find candidates quickly before checking them in full.
#[must_use]
pub fn looks_like_commit(bytes: &[u8]) -> bool {
    claimed_length(bytes).and_then(|length| usize::try_from(length).ok()) == Some(COMMIT_BYTES)
        && bytes.get(OFFSET_KIND) == Some(&KIND_COMMIT)
}

/// Decodes the record at the start of `bytes`; returns it and its length in bytes.
pub fn decode(bytes: &[u8]) -> Result<(Record<'_>, usize), CorruptReason> {
    decode_framed(bytes, true)
}

/// Like [`decode`], without comparing the record's checksum: only for bytes whose checksums
/// another pass checks (verification rebuilds the graph apart from checking the records, and
/// uses nothing that pass has not found sound). Every other check stays, and it never panics.
pub fn decode_without_checksum(bytes: &[u8]) -> Result<(Record<'_>, usize), CorruptReason> {
    decode_framed(bytes, false)
}

fn decode_framed(bytes: &[u8], compare_checksum: bool) -> Result<(Record<'_>, usize), CorruptReason> {
    let length = claimed_length(bytes).ok_or(CorruptReason::RecordCutShort)? as usize;
    if !(HEADER_BYTES..=RECORD_MAX_BYTES).contains(&length) {
        return Err(CorruptReason::ImpossibleRecordLength);
    }
    let record_bytes = bytes.get(..length).ok_or(CorruptReason::RecordCutShort)?;
    let stored_checksum = u32_at(record_bytes, 0).ok_or(CorruptReason::RecordCutShort)?;
    if compare_checksum && crc32c(record_bytes.get(4..).unwrap_or_default()) != stored_checksum {
        return Err(CorruptReason::RecordChecksumMismatch);
    }
    let mut reader = Reader::new(record_bytes);
    reader.take(8).ok_or(CorruptReason::RecordCutShort)?;
    let record = decode_checked(&mut reader)?;
    if reader.remaining() != 0 {
        return Err(CorruptReason::BytesLeftOverAfterRecordBody);
    }
    Ok((record, length))
}

fn decode_checked<'a>(reader: &mut Reader<'a>) -> Result<Record<'a>, CorruptReason> {
    let missing = CorruptReason::RecordBodyCutShort;
    let kind = reader.u8().ok_or(missing)?;
    let flags = reader.u8().ok_or(missing)?;
    let known_flags = match kind {
        KIND_MEMORY => FLAG_ERASED | FLAG_TRACKED | FLAG_SEALED | FLAG_AUTHORED,
        KIND_LOT | KIND_VECTOR => FLAG_ERASED | FLAG_SEALED | FLAG_AUTHORED,
        KIND_RECALL | KIND_RECALL_ALL | KIND_MEMBER => FLAG_ERASED | FLAG_AUTHORED,
        _ => FLAG_ERASED,
    };
    if reader.u16().ok_or(missing)? != 0 || flags & !known_flags != 0 {
        return Err(CorruptReason::ReservedBitsSet);
    }
    let identity = Identity {
        agent: reader.u64().ok_or(missing)?,
        segment: reader.u64().ok_or(missing)?,
        sequence: reader.u64().ok_or(missing)?,
    };
    let author = if flags & FLAG_AUTHORED != 0 { Some(reader.u64().ok_or(missing)?) } else { None };
    if kind == KIND_MEMBER && author.is_none() {
        return Err(CorruptReason::MemberRecordWithoutAuthor);
    }
    let erased = flags & FLAG_ERASED != 0;
    let sealed = flags & FLAG_SEALED != 0;
    if erased && !matches!(kind, KIND_LOT | KIND_MEMORY | KIND_VECTOR) {
        return Err(CorruptReason::ErasedFlagOnRecordWithoutContent);
    }
    let body = match kind {
        KIND_LOT => {
            let id = reader.u64().ok_or(missing)?;
            let label_length = reader.u16().ok_or(missing)?;
            let label_bytes = reader.take(usize::from(label_length)).ok_or(missing)?;
            let label = core::str::from_utf8(label_bytes).map_err(|_| CorruptReason::LabelNotUtf8)?;
            if sealed && !label.is_empty() {
                return Err(CorruptReason::SealedLotWithLabelInTheClear);
            }
            Body::Lot { id, label, content: decode_content(reader, erased, sealed)? }
        }
        KIND_MEMORY => {
            let id = reader.u64().ok_or(missing)?;
            let count = reader.u16().ok_or(missing)?;
            let legs = decode_legs(reader, count)?;
            let tracked = if flags & FLAG_TRACKED != 0 { decode_tracked(reader, &legs)? } else { TrackedView::NONE };
            Body::Memory { id, legs, tracked, content: decode_content(reader, erased, sealed)? }
        }
        KIND_RECALL => {
            let id = reader.u64().ok_or(missing)?;
            let (mode, removal) = decode_mode_and_removal(reader, missing)?;
            Body::Recall { id, mode, removal }
        }
        KIND_RECALL_ALL => {
            let (mode, removal) = decode_mode_and_removal(reader, missing)?;
            let count = reader.u32().ok_or(missing)?;
            let raw = reader.take(reader.remaining()).ok_or(missing)?;
            let ids = RecalledIds::parse(count, raw).ok_or(CorruptReason::RecalledIdsMalformed)?;
            Body::RecallAll { ids, mode, removal }
        }
        KIND_COMMIT => Body::Commit {
            batch_start: reader.u64().ok_or(missing)?,
            batch_crc: reader.u32().ok_or(missing)?,
            record_count: reader.u32().ok_or(missing)?,
            chain: reader.array().ok_or(missing)?,
        },
        KIND_SEAL => Body::Seal { next_segment: reader.u64().ok_or(missing)? },
        KIND_VECTOR => {
            let id = reader.u64().ok_or(missing)?;
            Body::Vector { id, content: decode_content(reader, erased, sealed)? }
        }
        KIND_MEMBER => {
            let agent = reader.u64().ok_or(missing)?;
            let role = Role::from_code(reader.u8().ok_or(missing)?).ok_or(CorruptReason::UnknownRole)?;
            Body::Member { agent, role }
        }
        KIND_SHARED => Body::Shared {
            id: reader.u64().ok_or(missing)?,
            space: reader.u64().ok_or(missing)?,
            space_id: reader.u64().ok_or(missing)?,
        },
        _ => return Err(CorruptReason::UnknownRecordKind),
    };
    Ok(Record { identity, body, author })
}

fn decode_legs<'a>(reader: &mut Reader<'a>, count: u16) -> Result<LegsView<'a>, CorruptReason> {
    let missing = CorruptReason::LegsCutShort;
    let mut measure = Reader::new(reader.rest());
    for _ in 0..count {
        let parents = measure.u16().ok_or(missing)?;
        measure.take(usize::from(parents) * 8).ok_or(missing)?;
    }
    let raw = reader.take(measure.position()).ok_or(missing)?;
    Ok(LegsView { count, raw })
}

/// Reads a tracked parent list and checks it: at least one id and no more than a leg may hold,
/// strictly ascending, and each id a parent in every leg (tracking adds a read id to each leg,
/// so a list that says otherwise was not written by the engine).
fn decode_tracked<'a>(reader: &mut Reader<'a>, legs: &LegsView<'_>) -> Result<TrackedView<'a>, CorruptReason> {
    let missing = CorruptReason::LegsCutShort;
    let count = reader.u16().ok_or(missing)?;
    let raw = reader.take(usize::from(count) * 8).ok_or(missing)?;
    let tracked = TrackedView { count, raw };
    let mut ids = [0u64; PARENTS_PER_LEG_MAX];
    let mut stored = 0usize;
    for id in tracked.iter() {
        let previous = stored.checked_sub(1).and_then(|last| ids.get(last)).copied();
        let slot = ids.get_mut(stored).ok_or(CorruptReason::TrackedParentsMalformed)?;
        if previous.is_some_and(|previous| previous >= id) {
            return Err(CorruptReason::TrackedParentsMalformed);
        }
        *slot = id;
        stored += 1;
    }
    let ids = ids.get(..stored).unwrap_or_default();
    if ids.is_empty() {
        return Err(CorruptReason::TrackedParentsMalformed);
    }
    // One bit per tracked id, set when the leg names it: every leg must set them all.
    let all_found = u64::MAX >> (64 - stored);
    for leg in legs.iter() {
        let found = leg.fold(0u64, |found, parent| match ids.binary_search(&parent) {
            Ok(index) => found | (1u64 << index),
            Err(_) => found,
        });
        if found != all_found {
            return Err(CorruptReason::TrackedParentNotInEveryLeg);
        }
    }
    Ok(tracked)
}

fn decode_content<'a>(reader: &mut Reader<'a>, erased: bool, sealed: bool) -> Result<ContentBlock<'a>, CorruptReason> {
    let missing = CorruptReason::ContentCutShort;
    let digest = reader.array().ok_or(missing)?;
    if erased {
        // The content block ends the body: whatever follows the digest is the padding of a
        // redaction in place, and must be zeros, or text could hide behind the erased flag.
        let padding = reader.take(reader.remaining()).unwrap_or_default();
        if padding.iter().any(|byte| *byte != 0) {
            return Err(CorruptReason::ErasedContentPaddingNotZero);
        }
        let erased_padding_bytes = u32::try_from(padding.len()).map_err(|_| CorruptReason::ImpossibleRecordLength)?;
        return Ok(ContentBlock { digest, present: None, erased_padding_bytes, sealed });
    }
    let salt: &[u8; SALT_BYTES] = reader.take(SALT_BYTES).ok_or(missing)?.try_into().map_err(|_| missing)?;
    let length = reader.u32().ok_or(missing)?;
    let bytes = reader.take(length as usize).ok_or(missing)?;
    Ok(ContentBlock { digest, present: Some((salt, bytes)), erased_padding_bytes: 0, sealed })
}

/// The commit marker that closes `batch`, the bytes from `batch_start` up to the marker.
#[must_use]
pub fn commit_marker(
    identity: Identity,
    batch_start: u64,
    batch: &[u8],
    record_count: u32,
    chain: Hash,
) -> Record<'static> {
    let body = Body::Commit { batch_start, batch_crc: crc32c(batch), record_count, chain };
    Record { identity, body, author: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    fn identity() -> Identity {
        Identity { agent: 1, segment: 2, sequence: 3 }
    }

    #[test]
    fn an_authored_member_record_names_its_author_and_the_chain_commits_to_it() {
        let body = Body::Member { agent: 5, role: Role::Write };
        let record = Record { identity: identity(), body, author: Some(4) };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        assert_eq!(bytes.get(8..10), Some(&[7u8, 8][..]), "kind member, authored flag");
        assert_eq!(bytes.get(36..44), Some(&4u64.to_le_bytes()[..]));
        assert_eq!(decode(&bytes), Ok((record, bytes.len())));
        let (mut chained, mut unsigned) = (Vec::new(), Vec::new());
        record.encode_chained_fields(&mut chained);
        Record { author: Some(6), ..record }.encode_chained_fields(&mut unsigned);
        assert_ne!(chained, unsigned, "another author is another history");
        // Without its author a member record is refused, whatever its checksum says.
        let mut bare = Vec::new();
        Record { author: None, ..record }.encode(&mut bare);
        assert_eq!(decode(&bare), Err(CorruptReason::MemberRecordWithoutAuthor));
        let mut unknown_role = bytes.clone();
        let last = unknown_role.len() - 1;
        unknown_role[last] = 9;
        let checksum = crc32c(&unknown_role[4..]).to_le_bytes();
        unknown_role[..4].copy_from_slice(&checksum);
        assert_eq!(decode(&unknown_role), Err(CorruptReason::UnknownRole));
    }

    #[test]
    fn golden_bytes_of_a_recall() {
        let record = Record {
            identity: identity(),
            body: Body::Recall { id: 9, mode: Mode::Strict, removal: Removal::Erase },
            author: None,
        };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        let expected_tail: [u8; 42] = [
            46, 0, 0, 0, // length
            3, 0, 0, 0, // kind recall, no flags, reserved
            1, 0, 0, 0, 0, 0, 0, 0, // agent
            2, 0, 0, 0, 0, 0, 0, 0, // segment
            3, 0, 0, 0, 0, 0, 0, 0, // sequence
            9, 0, 0, 0, 0, 0, 0, 0, // id
            1, 1, // strict, erase
        ];
        assert_eq!(bytes.get(4..), Some(&expected_tail[..]));
        assert_eq!(u32_at(&bytes, 0), Some(crc32c(&expected_tail)));
        assert_eq!(decode(&bytes), Ok((record, 46)));
    }

    #[test]
    fn golden_bytes_of_a_recall_of_several() {
        let raw = RecalledIds::encode(&[4, 5, 200]).unwrap();
        let ids = RecalledIds::parse(3, &raw).unwrap();
        let record = Record {
            identity: identity(),
            body: Body::RecallAll { ids, mode: Mode::Fair, removal: Removal::Erase },
            author: None,
        };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        let expected_tail: [u8; 42] = [
            46, 0, 0, 0, // length
            9, 0, 0, 0, // kind recall of several, no flags, reserved
            1, 0, 0, 0, 0, 0, 0, 0, // agent
            2, 0, 0, 0, 0, 0, 0, 0, // segment
            3, 0, 0, 0, 0, 0, 0, 0, // sequence
            0, 1, // fair, erase
            3, 0, 0, 0, // three ids
            4, 1, 0xc3, 0x01, // 4, then 1 more, then 195 more
        ];
        assert_eq!(bytes.get(4..), Some(&expected_tail[..]));
        assert_eq!(decode(&bytes), Ok((record, 46)));
        // A count that the distances do not match is damage.
        bytes[38] = 4;
        let checksum = crc32c(&bytes[4..]).to_le_bytes();
        bytes[..4].copy_from_slice(&checksum);
        assert_eq!(decode(&bytes), Err(CorruptReason::RecalledIdsMalformed));
    }

    #[test]
    fn golden_bytes_of_a_lot_and_its_redaction() {
        let salt = [7u8; SALT_BYTES];
        let content =
            ContentBlock { digest: [5u8; 32], present: Some((&salt, b"rain")), erased_padding_bytes: 0, sealed: false };
        let record = Record { identity: identity(), body: Body::Lot { id: 4, label: "tool", content }, author: None };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        assert_eq!(bytes.len(), HEADER_BYTES + 8 + 2 + 4 + 32 + 16 + 4 + 4);
        assert_eq!(bytes.get(8), Some(&KIND_LOT));
        assert_eq!(bytes.get(46..50), Some(&b"tool"[..]));
        assert_eq!(bytes.get(bytes.len() - 4..), Some(&b"rain"[..]));

        let mut redacted = Vec::new();
        record.redacted().encode(&mut redacted);
        assert_eq!(redacted.len(), HEADER_BYTES + 8 + 2 + 4 + 32);
        assert_eq!(redacted.get(9), Some(&FLAG_ERASED));
        assert!(!redacted.windows(4).any(|window| window == b"rain"));
        assert!(!redacted.windows(SALT_BYTES).any(|window| window == salt));

        let mut chained = Vec::new();
        let mut chained_redacted = Vec::new();
        record.encode_chained_fields(&mut chained);
        record.redacted().encode_chained_fields(&mut chained_redacted);
        assert_eq!(chained, chained_redacted, "erasure must not change what the chain covers");
    }

    #[test]
    fn golden_bytes_of_a_redaction_in_place() {
        let salt = [7u8; SALT_BYTES];
        let content =
            ContentBlock { digest: [5u8; 32], present: Some((&salt, b"rain")), erased_padding_bytes: 0, sealed: false };
        let record = Record { identity: identity(), body: Body::Lot { id: 4, label: "tool", content }, author: None };
        let mut original = Vec::new();
        record.encode(&mut original);
        let redacted = record.redacted_in_place();
        let mut bytes = Vec::new();
        redacted.encode(&mut bytes);
        let expected_tail: [u8; 102] = [
            106, 0, 0, 0, // length: unchanged
            1, 1, 0, 0, // kind lot, erased, reserved
            1, 0, 0, 0, 0, 0, 0, 0, // agent
            2, 0, 0, 0, 0, 0, 0, 0, // segment
            3, 0, 0, 0, 0, 0, 0, 0, // sequence
            4, 0, 0, 0, 0, 0, 0, 0, // id
            4, 0, b't', b'o', b'o', b'l', // label
            5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, // digest
            5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, //
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // where the salt was
            0, 0, 0, 0, 0, 0, 0, 0, // where the length and the content were
        ];
        assert_eq!(bytes.get(4..), Some(&expected_tail[..]));
        assert_eq!(u32_at(&bytes, 0), Some(crc32c(&expected_tail)));
        assert_eq!(bytes.len(), original.len(), "a redaction in place keeps the record's length");
        assert_eq!(bytes.get(12..82), original.get(12..82), "only the frame, the salt and the content change");
        assert_eq!(decode(&bytes), Ok((redacted, 106)));
        let Some(ContentBlock { erased_padding_bytes, present: None, .. }) = redacted.content() else {
            panic!("the redacted record has no erased content")
        };
        assert_eq!(erased_padding_bytes, 24);
        assert_eq!(redacted.redacted_in_place(), redacted, "a second redaction changes nothing");
        let mut compact = Vec::new();
        redacted.redacted().encode(&mut compact);
        assert_eq!(compact.len(), 106 - 24, "a rewrite drops the padding");

        let mut chained = Vec::new();
        let mut chained_redacted = Vec::new();
        record.encode_chained_fields(&mut chained);
        redacted.encode_chained_fields(&mut chained_redacted);
        assert_eq!(chained, chained_redacted, "erasure in place must not change what the chain covers");
    }

    #[test]
    fn golden_bytes_of_a_vector_and_its_redaction_in_place() {
        let salt = [7u8; SALT_BYTES];
        let numbers: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|number| number.to_le_bytes()).collect();
        let content = ContentBlock {
            digest: [5u8; 32],
            present: Some((&salt, &numbers)),
            erased_padding_bytes: 0,
            sealed: false,
        };
        let record = Record { identity: identity(), body: Body::Vector { id: 4, content }, author: None };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        assert_eq!(bytes.len(), HEADER_BYTES + 8 + 32 + 16 + 4 + 8);
        assert_eq!(bytes.get(8), Some(&KIND_VECTOR));
        assert_eq!(bytes.get(36..44), Some(&4u64.to_le_bytes()[..]));
        assert_eq!(bytes.get(bytes.len() - 8..), Some(&numbers[..]));
        assert_eq!(decode(&bytes), Ok((record, bytes.len())));
        assert!(record.is_chained());

        let redacted = record.redacted_in_place();
        let mut erased = Vec::new();
        redacted.encode(&mut erased);
        assert_eq!(erased.len(), bytes.len(), "a redaction in place keeps the record's length");
        assert_eq!(erased.get(9), Some(&FLAG_ERASED));
        assert!(erased.get(76..).is_some_and(|tail| tail.iter().all(|byte| *byte == 0)), "salt and numbers are zeros");
        assert_eq!(decode(&erased), Ok((redacted, erased.len())));

        let mut chained = Vec::new();
        let mut chained_redacted = Vec::new();
        record.encode_chained_fields(&mut chained);
        redacted.encode_chained_fields(&mut chained_redacted);
        assert_eq!(chained, chained_redacted, "erasure must not change what the chain covers");
    }

    #[test]
    fn an_erased_record_padded_with_anything_but_zeros_is_refused() {
        let content = ContentBlock { digest: [5u8; 32], present: None, erased_padding_bytes: 8, sealed: false };
        let record = Record { identity: identity(), body: Body::Lot { id: 4, label: "tool", content }, author: None };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        assert_eq!(decode(&bytes), Ok((record, bytes.len())));
        for index in bytes.len() - 8..bytes.len() {
            // A correct checksum over the hidden byte: only the padding check can refuse it.
            let mut forged = bytes.clone();
            forged[index] = b'x';
            let checksum = crc32c(&forged[4..]).to_le_bytes();
            forged[..4].copy_from_slice(&checksum);
            assert_eq!(decode(&forged), Err(CorruptReason::ErasedContentPaddingNotZero), "byte at {index}");
        }
    }

    #[test]
    fn a_flipped_bit_is_a_checksum_error() {
        let record = Record { identity: identity(), body: Body::Seal { next_segment: 3 }, author: None };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        for index in 0..bytes.len() {
            let mut damaged = bytes.clone();
            if let Some(byte) = damaged.get_mut(index) {
                *byte ^= 0x10;
            }
            assert!(decode(&damaged).is_err(), "flip at {index} passed");
        }
    }

    fn arbitrary_legs() -> impl Strategy<Value = Vec<Vec<u64>>> {
        prop::collection::vec(prop::collection::vec(any::<u64>(), 0..4), 0..4)
    }

    /// Tracked parents: none most of the time, else a few ascending ids.
    fn arbitrary_tracked() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            Just(Vec::new()),
            prop::collection::btree_set(any::<u64>(), 1..6).prop_map(|ids| ids.into_iter().collect())
        ]
    }

    /// `legs` with every tracked id added to each, as read tracking writes them.
    fn with_tracked(legs: Vec<Vec<u64>>, tracked: &[u64]) -> Vec<Vec<u64>> {
        legs.into_iter().map(|leg| leg.into_iter().chain(tracked.iter().copied()).collect()).collect()
    }

    /// A memory record with `legs` and `tracked`, its encoding and the chained fields.
    fn memory_bytes(legs: &[Vec<u64>], tracked: &[u64]) -> Vec<u8> {
        let mut legs_raw = Vec::new();
        LegsView::encode(legs, &mut legs_raw);
        let mut tracked_raw = Vec::new();
        TrackedView::encode(tracked, &mut tracked_raw);
        let legs = LegsView::parse(u16::try_from(legs.len()).unwrap(), &legs_raw).unwrap();
        let tracked = TrackedView::parse(u16::try_from(tracked.len()).unwrap(), &tracked_raw).unwrap();
        let content = ContentBlock {
            digest: [5u8; 32],
            present: Some((&[7u8; SALT_BYTES], b"rain")),
            erased_padding_bytes: 0,
            sealed: false,
        };
        let mut bytes = Vec::new();
        Record { identity: identity(), body: Body::Memory { id: 9, legs, tracked, content }, author: None }
            .encode(&mut bytes);
        bytes
    }

    /// `bytes` with the byte at `index` replaced and the checksum made right again, so only the
    /// checks after the checksum can refuse it.
    fn forged(bytes: &[u8], index: usize, value: u8) -> Vec<u8> {
        let mut forged = bytes.to_vec();
        forged[index] = value;
        let checksum = crc32c(&forged[4..]).to_le_bytes();
        forged[..4].copy_from_slice(&checksum);
        forged
    }

    #[test]
    fn golden_bytes_of_a_tracked_memory_and_its_redaction_in_place() {
        let bytes = memory_bytes(&[vec![1, 4], vec![2, 4]], &[4]);
        let expected_body: [u8; 56] = [
            9, 0, 0, 0, 0, 0, 0, 0, // id
            2, 0, // two legs
            2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, // leg {1, 4}
            2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, // leg {2, 4}
            1, 0, 4, 0, 0, 0, 0, 0, 0, 0, // one tracked parent: 4
        ];
        assert_eq!(bytes.get(8..10), Some(&[KIND_MEMORY, FLAG_TRACKED][..]));
        assert_eq!(bytes.get(HEADER_BYTES..HEADER_BYTES + 56), Some(&expected_body[..]));
        let (record, length) = decode(&bytes).unwrap();
        assert_eq!(length, bytes.len());
        let Body::Memory { tracked, .. } = record.body else { panic!("not a memory") };
        assert_eq!(tracked.iter().collect::<Vec<_>>(), vec![4]);

        let redacted = record.redacted_in_place();
        let mut erased = Vec::new();
        redacted.encode(&mut erased);
        assert_eq!(erased.len(), bytes.len());
        assert_eq!(erased.get(9), Some(&(FLAG_TRACKED | FLAG_ERASED)), "the erasure keeps the tracked flag");
        assert_eq!(erased.get(12..HEADER_BYTES + 56 + 32), bytes.get(12..HEADER_BYTES + 56 + 32));
        assert_eq!(decode(&erased), Ok((redacted, erased.len())));
        let mut moved = Vec::new();
        record.redacted().encode(&mut moved);
        let (compacted, _) = decode(&moved).unwrap();
        assert_eq!(compacted, record.redacted(), "a rewrite keeps the tracked parents too");
        let Body::Memory { tracked: kept, .. } = compacted.body else { panic!("not a memory") };
        assert_eq!(kept, tracked);

        let (mut chained, mut chained_erased) = (Vec::new(), Vec::new());
        record.encode_chained_fields(&mut chained);
        redacted.encode_chained_fields(&mut chained_erased);
        assert_eq!(chained, chained_erased, "erasure must not change what the chain covers");
        let mut untracked = Vec::new();
        decode(&memory_bytes(&[vec![1, 4], vec![2, 4]], &[])).unwrap().0.encode_chained_fields(&mut untracked);
        assert_ne!(chained, untracked, "the chain covers the tracked parents");
    }

    #[test]
    fn a_memory_without_tracked_parents_is_encoded_as_before() {
        let bytes = memory_bytes(&[vec![1]], &[]);
        assert_eq!(bytes.get(9), Some(&0), "no flag");
        assert_eq!(bytes.len(), HEADER_BYTES + 8 + 2 + 2 + 8 + 32 + 16 + 4 + 4, "and no list");
    }

    #[test]
    fn tracked_parents_that_break_their_rules_are_refused() {
        let list = HEADER_BYTES + 8 + 2 + 2 * (2 + 16);
        let bytes = memory_bytes(&[vec![1, 4], vec![2, 4]], &[4]);
        // A tracked id that one leg lacks.
        assert_eq!(decode(&forged(&bytes, list + 2, 1)), Err(CorruptReason::TrackedParentNotInEveryLeg));
        // An empty list.
        let empty = memory_bytes(&[vec![1, 4], vec![2, 4]], &[]);
        let mut with_empty_list = forged(&empty, 9, FLAG_TRACKED);
        with_empty_list.splice(list..list, [0u8, 0]);
        let length = u32::try_from(with_empty_list.len()).unwrap().to_le_bytes();
        with_empty_list[4..8].copy_from_slice(&length);
        let with_empty_list = forged(&with_empty_list, 9, FLAG_TRACKED);
        assert_eq!(decode(&with_empty_list), Err(CorruptReason::TrackedParentsMalformed));
        // Repeated or descending ids.
        let two = memory_bytes(&[vec![4, 6]], &[4, 6]);
        assert_eq!(decode(&two).map(|(_, length)| length), Ok(two.len()));
        let at_second = HEADER_BYTES + 8 + 2 + 2 + 16 + 2 + 8;
        assert_eq!(decode(&forged(&two, at_second, 4)), Err(CorruptReason::TrackedParentsMalformed));
        assert_eq!(decode(&forged(&two, at_second, 3)), Err(CorruptReason::TrackedParentsMalformed));
        assert_eq!(decode(&forged(&two, at_second, 5)), Err(CorruptReason::TrackedParentNotInEveryLeg));
        // The flag on a record that is not a memory is a reserved bit.
        let mut lot = Vec::new();
        let content = ContentBlock { digest: [5u8; 32], present: None, erased_padding_bytes: 0, sealed: false };
        Record { identity: identity(), body: Body::Lot { id: 1, label: "tool", content }, author: None }
            .encode(&mut lot);
        assert_eq!(decode(&forged(&lot, 9, FLAG_TRACKED | FLAG_ERASED)), Err(CorruptReason::ReservedBitsSet));
    }

    #[test]
    fn more_tracked_parents_than_a_leg_may_hold_are_refused() {
        let tracked: Vec<u64> = (1..=65).collect();
        let bytes = memory_bytes(core::slice::from_ref(&tracked), &tracked);
        assert_eq!(decode(&bytes), Err(CorruptReason::TrackedParentsMalformed));
        let bytes = memory_bytes(&[tracked[..64].to_vec()], &tracked[..64]);
        assert!(decode(&bytes).is_ok(), "64 is the limit, and fits");
    }

    #[derive(Debug, Clone)]
    enum Owned {
        Lot(u64, alloc::string::String, [u8; 32], OwnedContent),
        /// Id, legs, tracked parents (each also added to every leg), digest, content.
        Memory(u64, Vec<Vec<u64>>, Vec<u64>, [u8; 32], OwnedContent),
        Recall(u64, bool, bool),
        /// Strictly ascending ids, strict, erase.
        RecallAll(Vec<u64>, bool, bool),
        Commit(u64, u32, u32, [u8; 32]),
        Seal(u64),
    }

    /// A content: present (salt and bytes), or erased with this many bytes of zero padding.
    type OwnedContent = Result<([u8; 16], Vec<u8>), u16>;

    fn arbitrary_owned() -> impl Strategy<Value = Owned> {
        let content = prop_oneof![
            (any::<[u8; 16]>(), prop::collection::vec(any::<u8>(), 0..64)).prop_map(Ok),
            (0u16..300).prop_map(Err),
        ];
        prop_oneof![
            (any::<u64>(), "[a-z_]{0,20}", any::<[u8; 32]>(), content.clone())
                .prop_map(|(id, label, digest, content)| Owned::Lot(id, label, digest, content)),
            (any::<u64>(), arbitrary_legs(), arbitrary_tracked(), any::<[u8; 32]>(), content).prop_map(
                |(id, legs, tracked, digest, content)| Owned::Memory(
                    id,
                    with_tracked(legs, &tracked),
                    tracked,
                    digest,
                    content
                )
            ),
            (any::<u64>(), any::<bool>(), any::<bool>())
                .prop_map(|(id, strict, erase)| Owned::Recall(id, strict, erase)),
            (prop::collection::btree_set(1u64.., 1..40), any::<bool>(), any::<bool>())
                .prop_map(|(ids, strict, erase)| Owned::RecallAll(ids.into_iter().collect(), strict, erase)),
            (any::<u64>(), any::<u32>(), any::<u32>(), any::<[u8; 32]>())
                .prop_map(|(start, crc, count, chain)| Owned::Commit(start, crc, count, chain)),
            any::<u64>().prop_map(Owned::Seal),
        ]
    }

    fn block(digest: [u8; 32], content: &OwnedContent) -> ContentBlock<'_> {
        match content {
            Ok((salt, bytes)) => {
                ContentBlock { digest, present: Some((salt, &bytes[..])), erased_padding_bytes: 0, sealed: false }
            }
            Err(padding) => {
                ContentBlock { digest, present: None, erased_padding_bytes: u32::from(*padding), sealed: false }
            }
        }
    }

    #[test]
    fn only_the_checksum_is_left_unchecked_without_it() {
        let record = Record {
            identity: Identity { agent: 1, segment: 2, sequence: 3 },
            body: Body::Seal { next_segment: 3 },
            author: None,
        };
        let mut bytes = Vec::new();
        record.encode(&mut bytes);
        bytes[0] ^= 1;
        assert_eq!(decode(&bytes), Err(CorruptReason::RecordChecksumMismatch));
        assert_eq!(decode_without_checksum(&bytes), Ok((record, bytes.len())));
        bytes[8] = 99; // an unknown kind
        assert_eq!(decode_without_checksum(&bytes), Err(CorruptReason::UnknownRecordKind));
    }

    proptest! {
        #[test]
        fn decode_of_encode_is_identity(owned in arbitrary_owned(), agent: u64, segment: u64, sequence: u64) {
            let identity = Identity { agent, segment, sequence };
            let mut legs_raw = Vec::new();
            let mut tracked_raw = Vec::new();
            let body = match &owned {
                Owned::Lot(id, label, digest, content) => Body::Lot { id: *id, label, content: block(*digest, content) },
                Owned::Memory(id, legs, tracked, digest, content) => {
                    LegsView::encode(legs, &mut legs_raw);
                    let view = LegsView::parse(u16::try_from(legs.len()).unwrap(), &legs_raw).ok_or_else(|| TestCaseError::fail("legs"))?;
                    let decoded: Vec<Vec<u64>> = view.iter().map(|leg| leg.collect()).collect();
                    prop_assert_eq!(&decoded, legs);
                    TrackedView::encode(tracked, &mut tracked_raw);
                    let tracked_view = TrackedView::parse(u16::try_from(tracked.len()).unwrap(), &tracked_raw).ok_or_else(|| TestCaseError::fail("tracked"))?;
                    prop_assert_eq!(&tracked_view.iter().collect::<Vec<_>>(), tracked);
                    Body::Memory { id: *id, legs: view, tracked: tracked_view, content: block(*digest, content) }
                }
                Owned::Recall(id, strict, erase) => Body::Recall {
                    id: *id,
                    mode: if *strict { Mode::Strict } else { Mode::Fair },
                    removal: if *erase { Removal::Erase } else { Removal::Untrusted },
                },
                Owned::RecallAll(ids, strict, erase) => {
                    legs_raw = RecalledIds::encode(ids).ok_or_else(|| TestCaseError::fail("ids"))?;
                    let ids = RecalledIds::parse(u32::try_from(ids.len()).unwrap(), &legs_raw).ok_or_else(|| TestCaseError::fail("ids"))?;
                    Body::RecallAll {
                        ids,
                        mode: if *strict { Mode::Strict } else { Mode::Fair },
                        removal: if *erase { Removal::Erase } else { Removal::Untrusted },
                    }
                }
                Owned::Commit(batch_start, batch_crc, record_count, chain) =>
                    Body::Commit { batch_start: *batch_start, batch_crc: *batch_crc, record_count: *record_count, chain: *chain },
                Owned::Seal(next) => Body::Seal { next_segment: *next },
            };
            let record = Record { identity, body, author: None };
            let mut bytes = Vec::new();
            record.encode(&mut bytes);
            bytes.extend_from_slice(b"trailing bytes belong to the next record");
            let (decoded, length) = decode(&bytes).map_err(|error| TestCaseError::fail(error.describe()))?;
            prop_assert_eq!(decoded, record);
            prop_assert_eq!(length, bytes.len() - 40);
            prop_assert_eq!(decode_without_checksum(&bytes), Ok((decoded, length)));
        }

        #[test]
        fn a_redaction_in_place_keeps_the_length_and_chain_and_decodes_back(
            label in "[a-z_]{0,20}",
            digest in any::<[u8; 32]>(),
            salt in any::<[u8; 16]>(),
            text in prop::collection::vec(any::<u8>(), 0..200),
            sequence: u64,
        ) {
            let content = ContentBlock { digest, present: Some((&salt, &text[..])), erased_padding_bytes: 0, sealed: false };
            let record = Record { identity: Identity { agent: 1, segment: 1, sequence }, body: Body::Lot { id: 7, label: &label, content }, author: None };
            let mut original = Vec::new();
            record.encode(&mut original);
            let redacted = record.redacted_in_place();
            let mut bytes = Vec::new();
            redacted.encode(&mut bytes);
            prop_assert_eq!(bytes.len(), original.len());
            let body_end = bytes.len() - content.present_bytes();
            prop_assert_eq!(bytes.get(12..body_end), original.get(12..body_end));
            prop_assert!(bytes[body_end..].iter().all(|byte| *byte == 0));
            prop_assert_eq!(decode(&bytes), Ok((redacted, bytes.len())));
            let (mut chained, mut chained_redacted) = (Vec::new(), Vec::new());
            record.encode_chained_fields(&mut chained);
            redacted.encode_chained_fields(&mut chained_redacted);
            prop_assert_eq!(chained, chained_redacted);
        }

        #[test]
        fn arbitrary_bytes_never_panic_the_decoder(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode(&bytes);
            if let Ok((_, used)) = decode_without_checksum(&bytes) {
                prop_assert!(used <= bytes.len());
            }
            let _ = looks_like_commit(&bytes);
        }

        #[test]
        fn any_valid_checksum_over_garbage_is_still_checked(body in prop::collection::vec(any::<u8>(), 32..200)) {
            // Forge a record with a correct checksum over random fields: decoding must refuse or
            // accept it without panicking, and never read past its length.
            let mut bytes = vec![0u8; 8];
            bytes.extend_from_slice(&body);
            let length = u32::try_from(bytes.len()).unwrap().to_le_bytes();
            bytes.get_mut(4..8).into_iter().for_each(|field| field.copy_from_slice(&length));
            let checksum = crc32c(bytes.get(4..).unwrap_or_default()).to_le_bytes();
            bytes.get_mut(0..4).into_iter().for_each(|field| field.copy_from_slice(&checksum));
            if let Ok((_, used)) = decode(&bytes) {
                prop_assert_eq!(used, bytes.len());
            }
        }
    }
}
