//! crc32c (Castagnoli). With the `crc32c-hardware` feature it runs on the CPU's crc32
//! instruction when present (found at run time, so one binary fits every CPU), several times
//! faster than any table; without the feature, or on a CPU without the instruction, a table
//! method computes the same values.

#[cfg(any(not(feature = "crc32c-hardware"), test))]
use crc::{Crc, Table, CRC_32_ISCSI};

/// Sixteen tables built at compile time: several times faster than the one-table default. A
/// `static`, so that a digest can borrow it for as long as pieces arrive.
#[cfg(any(not(feature = "crc32c-hardware"), test))]
static CRC32C_BY_TABLE: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISCSI);

/// The crc32c of `bytes`.
#[cfg(feature = "crc32c-hardware")]
#[must_use]
pub fn crc32c(bytes: &[u8]) -> u32 {
    // The crate checks the CPU once and falls back to its own tables without the instruction.
    crc32c::crc32c(bytes)
}

/// The crc32c of `bytes`.
#[cfg(not(feature = "crc32c-hardware"))]
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c_by_table(bytes)
}

/// The crc32c of `bytes` by the table method, the reference the hardware path must match.
#[cfg(any(not(feature = "crc32c-hardware"), test))]
fn crc32c_by_table(bytes: &[u8]) -> u32 {
    CRC32C_BY_TABLE.checksum(bytes)
}

/// A crc32c taken over bytes that arrive in pieces.
pub struct Crc32cDigest {
    #[cfg(feature = "crc32c-hardware")]
    crc: u32,
    #[cfg(not(feature = "crc32c-hardware"))]
    digest: crc::Digest<'static, u32, Table<16>>,
}

impl Crc32cDigest {
    /// A digest of no bytes yet.
    #[cfg(feature = "crc32c-hardware")]
    #[must_use]
    pub fn new() -> Crc32cDigest {
        Crc32cDigest { crc: 0 }
    }

    /// A digest of no bytes yet.
    #[cfg(not(feature = "crc32c-hardware"))]
    pub fn new() -> Crc32cDigest {
        Crc32cDigest { digest: CRC32C_BY_TABLE.digest() }
    }

    /// Adds the next piece.
    pub fn update(&mut self, bytes: &[u8]) {
        #[cfg(feature = "crc32c-hardware")]
        {
            self.crc = crc32c::crc32c_append(self.crc, bytes);
        }
        #[cfg(not(feature = "crc32c-hardware"))]
        self.digest.update(bytes);
    }

    /// The crc32c of every piece, in order.
    #[must_use]
    pub fn finish(self) -> u32 {
        #[cfg(feature = "crc32c-hardware")]
        return self.crc;
        #[cfg(not(feature = "crc32c-hardware"))]
        self.digest.finalize()
    }
}

impl Default for Crc32cDigest {
    fn default() -> Crc32cDigest {
        Crc32cDigest::new()
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn matches_the_published_check_value() {
        // The check value of CRC-32C for the ASCII digits 1 to 9.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c_by_table(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn every_length_and_alignment_matches_the_table_method() {
        // The instruction path works in 8-byte words and interleaved streams, with head and
        // tail bytes handled apart: every length and start offset up to a few words covers
        // each of those joins.
        let bytes: Vec<u8> =
            (0..4096u32).map(|index| u8::try_from((index.wrapping_mul(2_654_435_761) >> 13) & 0xFF).unwrap()).collect();
        for start in 0..16 {
            for length in 0..600 {
                let slice = &bytes[start..start + length];
                assert_eq!(crc32c(slice), crc32c_by_table(slice), "start {start}, length {length}");
            }
        }
        assert_eq!(crc32c(&bytes), crc32c_by_table(&bytes));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_match_the_table_method(bytes in proptest::collection::vec(any::<u8>(), 0..10_000)) {
            prop_assert_eq!(crc32c(&bytes), crc32c_by_table(&bytes));
        }
    }

    #[test]
    fn pieces_give_the_checksum_of_the_whole() {
        let mut digest = Crc32cDigest::new();
        digest.update(b"1234");
        digest.update(b"");
        digest.update(b"56789");
        assert_eq!(digest.finish(), 0xE306_9283);
    }
}
