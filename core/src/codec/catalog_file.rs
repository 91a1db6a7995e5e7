//! The catalog: the store's list of agents and spaces, rewritten whole (temporary file, sync, rename,
//! folder sync) on every change.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "CHEESEDB"
//!      8     1  format version (1)
//!      9     1  file kind (2 = catalog)
//!     10     2  entry layout: 0, or 1 when entries end with a flags byte
//!     12     4  agent count
//!     16     8  next agent number (never reused)
//!     24     …  agents, each: number u64, token hash [32], name length u16, name (UTF-8),
//!               with layout 1: flags u8 (bit 0 = encrypted, bit 1 = a space, other bits
//!               zero; a space is never encrypted, and its token hash is zeros: no token
//!               opens it)
//!    end-4   4  crc32c of every byte before it
//! ```
//!
//! Layout 1 is written only while some agent is encrypted or a space exists, so a store without one keeps the
//! bytes that builds before encryption read; such a build refuses a layout-1 catalog.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::bytes::{Reader, Writer};
use super::segment_header::{FORMAT_VERSION, MAGIC};
use crate::checksum::crc32c;
use crate::corrupt_reason::CorruptReason;
use crate::digest::Hash;
use crate::limits::{AGENTS_PER_STORE_MAX, AGENT_NAME_MAX_BYTES, SPACES_PER_STORE_MAX};

/// The file kind byte of a catalog.
pub const FILE_KIND_CATALOG: u8 = 2;

/// One agent as the catalog records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// The agent's number; its folder is named from this, never from the name.
    pub number: u64,
    /// The hash of its token.
    pub token_hash: Hash,
    /// Its name.
    pub name: String,
    /// Whether its contents are sealed under keys its token yields.
    pub encrypted: bool,
    /// Whether the entry is a space that members share, rather than an agent.
    pub space: bool,
}

/// The decoded catalog.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CatalogFile {
    /// The number the next agent gets.
    pub next_number: u64,
    /// The agents.
    pub entries: Vec<CatalogEntry>,
}

impl CatalogFile {
    /// The catalog's bytes.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.put_bytes(&MAGIC);
        out.put_u8(FORMAT_VERSION);
        out.put_u8(FILE_KIND_CATALOG);
        let flagged = self.entries.iter().any(|entry| entry.encrypted || entry.space);
        out.put_u16(u16::from(flagged));
        out.put_u32(crate::convert::field_length_u32(self.entries.len()));
        out.put_u64(self.next_number);
        for entry in &self.entries {
            debug_assert!(entry.name.len() <= AGENT_NAME_MAX_BYTES);
            out.put_u64(entry.number);
            out.put_bytes(&entry.token_hash);
            out.put_u16(crate::convert::field_length_u16(entry.name.len()));
            out.put_bytes(entry.name.as_bytes());
            if flagged {
                out.put_u8(u8::from(entry.encrypted) | (u8::from(entry.space) << 1));
            }
        }
        let checksum = crc32c(&out);
        out.put_u32(checksum);
        out
    }

    /// Decodes a catalog, or says which check failed.
    pub fn decode(bytes: &[u8]) -> Result<CatalogFile, CorruptReason> {
        let body_length = bytes.len().checked_sub(4).ok_or(CorruptReason::CatalogCutShort)?;
        let (body, checksum) = bytes.split_at(body_length);
        if Reader::new(checksum).u32() != Some(crc32c(body)) {
            return Err(CorruptReason::CatalogChecksumMismatch);
        }
        let missing = CorruptReason::CatalogCutShort;
        let mut reader = Reader::new(body);
        if reader.array::<8>() != Some(MAGIC) {
            return Err(CorruptReason::BadMagic);
        }
        if reader.u8() != Some(FORMAT_VERSION) {
            return Err(CorruptReason::UnsupportedFormatVersion);
        }
        if reader.u8() != Some(FILE_KIND_CATALOG) {
            return Err(CorruptReason::NotACatalogFile);
        }
        let flagged = match reader.u16() {
            Some(0) => false,
            Some(1) => true,
            _ => return Err(CorruptReason::NotACatalogFile),
        };
        let count = reader.u32().ok_or(missing)? as usize;
        if count > AGENTS_PER_STORE_MAX + SPACES_PER_STORE_MAX {
            return Err(CorruptReason::CatalogListsTooManyAgents);
        }
        let next_number = reader.u64().ok_or(missing)?;
        let mut entries = Vec::with_capacity(count);
        for _ in 0..count {
            let number = reader.u64().ok_or(missing)?;
            let token_hash = reader.array().ok_or(missing)?;
            let name_length = reader.u16().ok_or(missing)?;
            let name_bytes = reader.take(usize::from(name_length)).ok_or(missing)?;
            let name = core::str::from_utf8(name_bytes).map_err(|_| CorruptReason::AgentNameNotUtf8)?;
            if number == 0 || number >= next_number {
                return Err(CorruptReason::AgentNumberOutOfRange);
            }
            let (encrypted, space) = match flagged.then(|| reader.u8()) {
                None | Some(Some(0)) => (false, false),
                Some(Some(1)) => (true, false),
                Some(Some(2)) => (false, true),
                Some(Some(_)) => return Err(CorruptReason::ReservedBitsSet),
                Some(None) => return Err(missing),
            };
            entries.push(CatalogEntry { number, token_hash, name: name.to_string(), encrypted, space });
        }
        if reader.remaining() != 0 {
            return Err(CorruptReason::BytesLeftOverAfterCatalog);
        }
        Ok(CatalogFile { next_number, entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn golden_bytes_of_an_empty_catalog() {
        let bytes = CatalogFile { next_number: 1, entries: Vec::new() }.encode();
        assert_eq!(
            bytes.get(..24),
            Some(&b"CHEESEDB\x01\x02\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"[..])
        );
        assert_eq!(bytes.len(), 28);
    }

    #[test]
    fn every_flipped_byte_is_refused() {
        let catalog = CatalogFile {
            next_number: 3,
            entries: alloc::vec![CatalogEntry {
                number: 2,
                token_hash: [4; 32],
                name: "alice".into(),
                encrypted: false,
                space: false,
            }],
        };
        let bytes = catalog.encode();
        for index in 0..bytes.len() {
            let mut damaged = bytes.clone();
            if let Some(byte) = damaged.get_mut(index) {
                *byte ^= 0x40;
            }
            assert!(CatalogFile::decode(&damaged).is_err(), "flip at {index} passed");
        }
    }

    #[test]
    fn entries_carry_a_flags_byte_only_while_an_agent_is_encrypted() {
        let entry =
            |number, encrypted| CatalogEntry { number, token_hash: [4; 32], name: "a".into(), encrypted, space: false };
        let plain = CatalogFile { next_number: 3, entries: alloc::vec![entry(1, false), entry(2, false)] };
        let mixed = CatalogFile { next_number: 3, entries: alloc::vec![entry(1, false), entry(2, true)] };
        let (plain_bytes, mixed_bytes) = (plain.encode(), mixed.encode());
        assert_eq!(plain_bytes[10..12], [0, 0]);
        assert_eq!(mixed_bytes[10..12], [1, 0]);
        assert_eq!(mixed_bytes.len(), plain_bytes.len() + 2);
        assert_eq!(CatalogFile::decode(&mixed_bytes), Ok(mixed));
        let mut unknown_flag = mixed_bytes.clone();
        let last_flag = unknown_flag.len() - 5;
        unknown_flag[last_flag] = 3;
        let length = unknown_flag.len() - 4;
        let checksum = crc32c(&unknown_flag[..length]).to_le_bytes();
        unknown_flag[length..].copy_from_slice(&checksum);
        assert_eq!(CatalogFile::decode(&unknown_flag), Err(CorruptReason::ReservedBitsSet));
    }

    proptest! {
        #[test]
        fn decode_of_encode_is_identity(names in prop::collection::vec("\\PC{0,12}", 0..5), hash: [u8; 32]) {
            let entries: Vec<CatalogEntry> = names.iter().enumerate()
                .map(|(index, name)| CatalogEntry { number: index as u64 + 1, token_hash: hash, name: name.clone(), encrypted: index % 3 == 1, space: index % 3 == 2 })
                .collect();
            let catalog = CatalogFile { next_number: entries.len() as u64 + 1, entries };
            prop_assert_eq!(CatalogFile::decode(&catalog.encode()), Ok(catalog));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = CatalogFile::decode(&bytes);
        }
    }
}
