//! The head object of an agent's or a space's replica in an object store: which one it is, how
//! far its shipped history reaches (the fingerprint), and the pieces (stretches of its files)
//! that hold it. It is the only object ever replaced; pieces are written once.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "CHEESEDB"
//!      8     1  format version (1)
//!      9     1  file kind (7 = replica head)
//!     10     1  flags: bit 0 = the agent is encrypted, bit 1 = a space's replica (never
//!                  encrypted, its token hash all zeros); other bits zero
//!     11     1  reserved, zero
//!     12     4  piece count
//!     16     8  head version (1 for the first head, one more for each replacement)
//!     24     8  agent number
//!     32     8  records in the shipped history
//!     40    32  chain hash after them
//!     72    32  SHA-256 of the agent's token, as the catalog keeps it
//!    104     2  name length
//!    106     …  name (UTF-8)
//!      …     …  pieces, each: file name length u8 | file name | start u64 | end u64 | run u64 |
//!               digest [32]
//!  end-4     4  crc32c of every byte before it
//! ```
//!
//! A piece holds the bytes `[start, end)` of one file of the agent's folder; the object that
//! holds it is named from its fields, so the head names every object it relies on. File names
//! are checked against the names the engine makes (segments, `keys`, `epochs`): a head can never
//! make a restore write anywhere else.

use alloc::string::String;
use alloc::vec::Vec;

use crate::checksum::crc32c;
use crate::codec::bytes::{Reader, Writer};
use crate::codec::segment_header::{FORMAT_VERSION, MAGIC};
use crate::corrupt_reason::CorruptReason;
use crate::digest::Hash;
use crate::fingerprint::Fingerprint;
use crate::limits::AGENT_NAME_MAX_BYTES;
use crate::log::names::{parse_segment_name, EPOCHS_NAME, KEY_TABLE_NAME};

/// The file kind byte of a replica head.
pub const FILE_KIND_REPLICA_HEAD: u8 = 7;
/// Bytes of the head before the name.
pub const REPLICA_HEAD_FIXED_BYTES: usize = 106;
/// Bytes of a piece after its file name.
pub const PIECE_FIXED_BYTES: usize = 8 + 8 + 8 + 32;
/// The most pieces one head lists.
pub const PIECES_PER_HEAD_MAX: usize = 1 << 20;
const FLAG_ENCRYPTED: u8 = 1;
const FLAG_SPACE: u8 = 2;
const CHECKSUM_BYTES: usize = 4;

const _: () = assert!(REPLICA_HEAD_FIXED_BYTES == 8 + 1 + 1 + 1 + 1 + 4 + 8 + 8 + 8 + 32 + 32 + 2);

/// One stretch of one file of the agent, held by one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The file's name inside the agent's folder (a segment, `keys` or `epochs`).
    pub file: String,
    /// The first byte of the file it holds.
    pub start: u64,
    /// Just after the last byte it holds.
    pub end: u64,
    /// The shipping run that wrote it: two runs never name an object alike.
    pub run: u64,
    /// [`crate::digest::replica_piece_digest`] of its bytes.
    pub digest: Hash,
}

impl Piece {
    /// How many bytes it holds.
    #[must_use]
    pub fn length(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// A decoded replica head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaHead {
    /// One for the first head of the agent, one more for each head that replaced it.
    pub version: u64,
    /// The agent's number: its records carry it, so a restore keeps it.
    pub agent: u64,
    /// The agent's name.
    pub name: String,
    /// The token hash the catalog keeps, so the agent's token opens a restored copy.
    pub token_hash: Hash,
    /// Whether the agent is encrypted.
    pub encrypted: bool,
    /// Whether this is a space's replica rather than an agent's: a space has no token, so its
    /// token hash is all zeros and grants nothing.
    pub space: bool,
    /// How far the shipped history reaches.
    pub fingerprint: Fingerprint,
    /// The pieces, grouped by file (segments in order, then `keys`, then `epochs`), each
    /// file's pieces in order of their bytes.
    pub pieces: Vec<Piece>,
}

/// Whether `name` is a file of an agent's folder that replication ships.
#[must_use]
pub fn is_shipped_file_name(name: &str) -> bool {
    parse_segment_name(name).is_some() || name == KEY_TABLE_NAME || name == EPOCHS_NAME
}

impl ReplicaHead {
    /// Whose replica this is.
    #[must_use]
    pub fn owner(&self) -> crate::replica::owner::Owner<'_> {
        crate::replica::owner::Owner { name: &self.name, space: self.space }
    }

    /// The head's bytes.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let piece_bytes: usize = self.pieces.iter().map(|piece| 1 + piece.file.len() + PIECE_FIXED_BYTES).sum();
        let mut out = Vec::with_capacity(REPLICA_HEAD_FIXED_BYTES + self.name.len() + piece_bytes + CHECKSUM_BYTES);
        debug_assert!(self.name.len() <= AGENT_NAME_MAX_BYTES && self.pieces.len() <= PIECES_PER_HEAD_MAX);
        out.put_bytes(&MAGIC);
        out.put_u8(FORMAT_VERSION);
        out.put_u8(FILE_KIND_REPLICA_HEAD);
        out.put_u8(if self.encrypted { FLAG_ENCRYPTED } else { 0 } | if self.space { FLAG_SPACE } else { 0 });
        out.put_u8(0);
        out.put_u32(crate::convert::field_length_u32(self.pieces.len()));
        out.put_u64(self.version);
        out.put_u64(self.agent);
        out.put_u64(self.fingerprint.records);
        out.put_bytes(&self.fingerprint.chain);
        out.put_bytes(&self.token_hash);
        out.put_u16(crate::convert::field_length_u16(self.name.len()));
        out.put_bytes(self.name.as_bytes());
        for piece in &self.pieces {
            debug_assert!(is_shipped_file_name(&piece.file) && piece.start < piece.end);
            out.put_u8(crate::convert::field_length_u8(piece.file.len()));
            out.put_bytes(piece.file.as_bytes());
            out.put_u64(piece.start);
            out.put_u64(piece.end);
            out.put_u64(piece.run);
            out.put_bytes(&piece.digest);
        }
        let checksum = crc32c(&out);
        out.put_u32(checksum);
        out
    }

    /// Decodes a head. Never panics, whatever the bytes.
    ///
    /// # Errors
    ///
    /// The check that failed: cut short, checksum, kind, reserved bits, limits, a piece that is
    /// empty or names no file of an agent.
    pub fn decode(bytes: &[u8]) -> Result<ReplicaHead, CorruptReason> {
        let missing = CorruptReason::ReplicaHeadCutShort;
        let checked_length = bytes.len().checked_sub(CHECKSUM_BYTES).ok_or(missing)?;
        let (checked, stored) = bytes.split_at(checked_length);
        let mut reader = Reader::new(checked);
        if reader.array::<8>() != Some(MAGIC) {
            return Err(CorruptReason::BadMagic);
        }
        if Reader::new(stored).u32() != Some(crc32c(checked)) {
            return Err(CorruptReason::ReplicaHeadChecksumMismatch);
        }
        if reader.u8() != Some(FORMAT_VERSION) || reader.u8() != Some(FILE_KIND_REPLICA_HEAD) {
            return Err(CorruptReason::NotAReplicaHead);
        }
        let flags = reader.u8().ok_or(missing)?;
        if flags & !(FLAG_ENCRYPTED | FLAG_SPACE) != 0 || flags == FLAG_ENCRYPTED | FLAG_SPACE || reader.u8() != Some(0)
        {
            return Err(CorruptReason::ReservedReplicaHeadBytesSet);
        }
        let count = reader.u32().ok_or(missing)? as usize;
        if count > PIECES_PER_HEAD_MAX {
            return Err(CorruptReason::ReplicaHeadListsTooManyPieces);
        }
        let version = reader.u64().ok_or(missing)?;
        let agent = reader.u64().ok_or(missing)?;
        let records = reader.u64().ok_or(missing)?;
        let chain = reader.array::<32>().ok_or(missing)?;
        let token_hash = reader.array::<32>().ok_or(missing)?;
        if flags & FLAG_SPACE != 0 && token_hash != [0; 32] {
            // A space's head grants no token: the field is reserved there.
            return Err(CorruptReason::ReservedReplicaHeadBytesSet);
        }
        let name_length = usize::from(reader.u16().ok_or(missing)?);
        if name_length == 0 || name_length > AGENT_NAME_MAX_BYTES {
            return Err(CorruptReason::ReplicaHeadNameOutOfRange);
        }
        let name = reader.take(name_length).ok_or(missing)?;
        let name = String::from(core::str::from_utf8(name).map_err(|_| CorruptReason::AgentNameNotUtf8)?);
        // The count comes from the object: allocate only what its bytes can hold.
        let mut pieces = Vec::with_capacity(count.min(reader.remaining() / (1 + PIECE_FIXED_BYTES)));
        for _ in 0..count {
            pieces.push(decode_piece(&mut reader)?);
        }
        if reader.remaining() != 0 {
            return Err(CorruptReason::BytesLeftOverAfterReplicaHead);
        }
        let fingerprint = Fingerprint { records, chain };
        Ok(ReplicaHead {
            version,
            agent,
            name,
            token_hash,
            encrypted: flags & FLAG_ENCRYPTED != 0,
            space: flags & FLAG_SPACE != 0,
            fingerprint,
            pieces,
        })
    }
}

fn decode_piece(reader: &mut Reader<'_>) -> Result<Piece, CorruptReason> {
    let missing = CorruptReason::ReplicaHeadCutShort;
    let name_length = usize::from(reader.u8().ok_or(missing)?);
    let file = core::str::from_utf8(reader.take(name_length).ok_or(missing)?)
        .ok()
        .filter(|name| is_shipped_file_name(name))
        .ok_or(CorruptReason::ReplicaPieceOfNoAgentFile)?;
    let start = reader.u64().ok_or(missing)?;
    let end = reader.u64().ok_or(missing)?;
    if start >= end {
        return Err(CorruptReason::ReplicaPieceEmptyOrBackwards);
    }
    let run = reader.u64().ok_or(missing)?;
    let digest = reader.array::<32>().ok_or(missing)?;
    Ok(Piece { file: String::from(file), start, end, run, digest })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    fn head() -> ReplicaHead {
        ReplicaHead {
            version: 3,
            agent: 2,
            name: String::from("al"),
            token_hash: [0x11; 32],
            encrypted: true,
            space: false,
            fingerprint: Fingerprint { records: 5, chain: [0x22; 32] },
            pieces: vec![Piece { file: String::from("keys"), start: 0, end: 144, run: 9, digest: [0x33; 32] }],
        }
    }

    #[test]
    fn golden_bytes() {
        let bytes = head().encode();
        let mut expected = vec![];
        expected.extend_from_slice(b"CHEESEDB");
        expected.extend_from_slice(&[1, 7, 1, 0]); // version, kind replica head, encrypted, reserved
        expected.extend_from_slice(&[1, 0, 0, 0]); // piece count
        expected.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]); // head version
        expected.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]); // agent number
        expected.extend_from_slice(&[5, 0, 0, 0, 0, 0, 0, 0]); // records
        expected.extend_from_slice(&[0x22; 32]); // chain
        expected.extend_from_slice(&[0x11; 32]); // token hash
        expected.extend_from_slice(&[2, 0, b'a', b'l']); // name
        expected.extend_from_slice(&[4, b'k', b'e', b'y', b's']); // file name
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // start
        expected.extend_from_slice(&[144, 0, 0, 0, 0, 0, 0, 0]); // end
        expected.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0]); // run
        expected.extend_from_slice(&[0x33; 32]); // digest
        expected.extend_from_slice(&crc32c(&expected).to_le_bytes());
        assert_eq!(bytes, expected);
        assert_eq!(ReplicaHead::decode(&bytes), Ok(head()));
    }

    #[test]
    fn every_flipped_byte_and_every_cut_is_refused() {
        let bytes = head().encode();
        for index in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[index] ^= 0x40;
            assert!(ReplicaHead::decode(&flipped).is_err(), "flip at {index}");
            assert!(ReplicaHead::decode(&bytes[..index]).is_err(), "cut at {index}");
        }
    }

    #[test]
    fn a_piece_naming_a_path_outside_the_agent_folder_is_refused() {
        for file in ["../catalog", "catalog", "snapshot", "segment-1.log", "/etc/passwd"] {
            let mut hostile = head();
            hostile.pieces[0].file = String::from(file);
            // Encode without the debug check, as a hostile writer would.
            let mut bytes = hostile.encode_unchecked_for_tests();
            let length = bytes.len();
            let checksum = crc32c(&bytes[..length - 4]);
            bytes[length - 4..].copy_from_slice(&checksum.to_le_bytes());
            assert_eq!(ReplicaHead::decode(&bytes), Err(CorruptReason::ReplicaPieceOfNoAgentFile), "{file}");
        }
    }

    impl ReplicaHead {
        fn encode_unchecked_for_tests(&self) -> Vec<u8> {
            let safe = ReplicaHead { pieces: vec![], ..self.clone() };
            let mut out = safe.encode();
            out.truncate(out.len() - 4);
            out[12..16].copy_from_slice(&u32::try_from(self.pieces.len()).unwrap().to_le_bytes());
            for piece in &self.pieces {
                out.push(u8::try_from(piece.file.len()).unwrap());
                out.extend_from_slice(piece.file.as_bytes());
                for value in [piece.start, piece.end, piece.run] {
                    out.extend_from_slice(&value.to_le_bytes());
                }
                out.extend_from_slice(&piece.digest);
            }
            out.extend_from_slice(&[0; 4]);
            out
        }
    }

    #[test]
    fn a_space_s_head_is_never_encrypted_and_grants_no_token() {
        let space = ReplicaHead { space: true, encrypted: false, token_hash: [0; 32], ..head() };
        assert_eq!(ReplicaHead::decode(&space.encode()).map(|found| found.space), Ok(true));
        for forged in [ReplicaHead { encrypted: true, ..space.clone() }, ReplicaHead { token_hash: [1; 32], ..space }] {
            assert_eq!(ReplicaHead::decode(&forged.encode()), Err(CorruptReason::ReservedReplicaHeadBytesSet));
        }
    }

    proptest! {
        #[test]
        fn decode_of_encode_is_identity(
            version in any::<u64>(),
            agent in any::<u64>(),
            records in any::<u64>(),
            encrypted in any::<bool>(),
            space in any::<bool>(),
            name in "[a-z]{1,40}",
            ranges in proptest::collection::vec((0u64..1 << 40, 1u64..1 << 20, any::<u64>()), 0..8),
        ) {
            let pieces = ranges
                .into_iter()
                .enumerate()
                .map(|(index, (start, length, run))| Piece {
                    file: if index % 2 == 0 { String::from("epochs") } else { String::from("segment-0000000000000001.log") },
                    start,
                    end: start + length,
                    run,
                    digest: [u8::try_from(index).unwrap(); 32],
                })
                .collect();
            let head = ReplicaHead {
                version, agent, name, token_hash: if space { [0; 32] } else { [7; 32] }, encrypted: encrypted && !space, space,
                fingerprint: Fingerprint { records, chain: [9; 32] }, pieces,
            };
            prop_assert_eq!(ReplicaHead::decode(&head.encode()), Ok(head));
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = ReplicaHead::decode(&bytes);
        }
    }
}
