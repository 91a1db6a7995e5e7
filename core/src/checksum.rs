//! crc32c (Castagnoli) with a sixteen-table implementation built at compile time, which runs
//! several times faster than the one-table default.

use crc::{Crc, Digest, Table, CRC_32_ISCSI};

static CRC32C: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISCSI);

/// The crc32c of `bytes`.
pub fn crc32c(bytes: &[u8]) -> u32 {
    CRC32C.checksum(bytes)
}

/// A crc32c taken over bytes that arrive in pieces.
pub struct Crc32cDigest(Digest<'static, u32, Table<16>>);

impl Crc32cDigest {
    /// A digest of no bytes yet.
    pub fn new() -> Crc32cDigest {
        Crc32cDigest(CRC32C.digest())
    }

    /// Adds the next piece.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The crc32c of every piece, in order.
    pub fn finish(self) -> u32 {
        self.0.finalize()
    }
}

impl Default for Crc32cDigest {
    fn default() -> Crc32cDigest {
        Crc32cDigest::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_check_value() {
        // The check value of CRC-32C for the ASCII digits 1 to 9.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
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
