//! crc32c (Castagnoli) with a sixteen-table implementation built at compile time, which runs
//! several times faster than the one-table default.

use crc::{Crc, Table, CRC_32_ISCSI};

const CRC32C: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISCSI);

/// The crc32c of `bytes`.
pub fn crc32c(bytes: &[u8]) -> u32 {
    CRC32C.checksum(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_check_value() {
        // The check value of CRC-32C for the ASCII digits 1 to 9.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }
}
