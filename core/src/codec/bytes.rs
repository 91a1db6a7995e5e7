//! Little-endian reading and writing of fixed-width fields. Reading past the end is a `None`,
//! never a panic.

use alloc::vec::Vec;

/// A cursor over bytes that refuses to read past their end.
pub struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, position: 0 }
    }

    /// How many bytes were read.
    #[must_use]
    pub fn position(&self) -> usize {
        self.position
    }

    /// How many bytes are left.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.position)
    }

    /// The bytes not read yet, without consuming them.
    #[must_use]
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.position..).unwrap_or_default()
    }

    /// The next `count` bytes.
    pub fn take(&mut self, count: usize) -> Option<&'a [u8]> {
        let end = self.position.checked_add(count)?;
        let taken = self.bytes.get(self.position..end)?;
        self.position = end;
        Some(taken)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// The next byte.
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }

    /// The next little-endian `u16`.
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.array()?))
    }

    /// The next little-endian `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }

    /// The next little-endian `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
}

/// Appends little-endian fields to a byte vector.
pub trait Writer {
    /// Appends one byte.
    fn put_u8(&mut self, value: u8);
    /// Appends a little-endian `u16`.
    fn put_u16(&mut self, value: u16);
    /// Appends a little-endian `u32`.
    fn put_u32(&mut self, value: u32);
    /// Appends a little-endian `u64`.
    fn put_u64(&mut self, value: u64);
    /// Appends raw bytes.
    fn put_bytes(&mut self, value: &[u8]);
}

impl Writer for Vec<u8> {
    fn put_u8(&mut self, value: u8) {
        self.push(value);
    }
    fn put_u16(&mut self, value: u16) {
        self.extend_from_slice(&value.to_le_bytes());
    }
    fn put_u32(&mut self, value: u32) {
        self.extend_from_slice(&value.to_le_bytes());
    }
    fn put_u64(&mut self, value: u64) {
        self.extend_from_slice(&value.to_le_bytes());
    }
    fn put_bytes(&mut self, value: &[u8]) {
        self.extend_from_slice(value);
    }
}

/// Reads a little-endian `u32` at `offset` of `bytes`, if it is there.
#[must_use]
pub fn u32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    let field = bytes.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_le_bytes(field.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_was_written() {
        let mut bytes = Vec::new();
        bytes.put_u8(1);
        bytes.put_u16(0x0203);
        bytes.put_u32(0x0405_0607);
        bytes.put_u64(0x0809_0a0b_0c0d_0e0f);
        assert_eq!(bytes, [1, 3, 2, 7, 6, 5, 4, 15, 14, 13, 12, 11, 10, 9, 8]);
        let mut reader = Reader::new(&bytes);
        assert_eq!(reader.u8(), Some(1));
        assert_eq!(reader.u16(), Some(0x0203));
        assert_eq!(reader.u32(), Some(0x0405_0607));
        assert_eq!(reader.u64(), Some(0x0809_0a0b_0c0d_0e0f));
        assert_eq!(reader.u8(), None);
    }

    #[test]
    fn short_input_is_none_not_a_panic() {
        let mut reader = Reader::new(&[1, 2]);
        assert_eq!(reader.u32(), None);
        assert_eq!(reader.take(usize::MAX), None);
        assert_eq!(u32_at(&[1, 2, 3], 0), None);
    }
}
