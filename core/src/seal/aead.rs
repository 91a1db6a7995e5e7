//! XChaCha20-Poly1305 over a buffer in place (RustCrypto's `chacha20poly1305`, which builds
//! without std): 192-bit random nonces leave no chance of a nonce repeating under one key.

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{Key, Tag, XChaCha20Poly1305, XNonce};

/// Bytes of a key.
pub const KEY_BYTES: usize = 32;
/// Bytes of a nonce.
pub const NONCE_BYTES: usize = 24;
/// Bytes of an authentication tag.
pub const TAG_BYTES: usize = 16;

// The cipher refuses buffers past 256 GiB; nothing sealed comes near (a record is at most
// 32 MiB), so sealing cannot fail.
const _: () = assert!(crate::codec::record::RECORD_MAX_BYTES < (1 << 38));

/// Sealed bytes did not open: the key, nonce or associated data differ from the sealing's, or a
/// byte changed since. Says nothing more, on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAuthentic;

/// Encrypts `buffer` in place under `key` and `nonce`, binding `associated`; returns the tag.
#[must_use]
pub fn seal_in_place(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; NONCE_BYTES],
    associated: &[u8],
    buffer: &mut [u8],
) -> [u8; TAG_BYTES] {
    let cipher = XChaCha20Poly1305::new(Key::from_slice(key));
    debug_assert!(buffer.len() <= crate::codec::record::RECORD_MAX_BYTES);
    cipher.encrypt_in_place_detached(XNonce::from_slice(nonce), associated, buffer).map_or([0; TAG_BYTES], Into::into)
}

/// Decrypts `buffer` in place, after checking `tag` against it and `associated`.
///
/// # Errors
///
/// `NotAuthentic` when the check fails; `buffer` is then left as it was given.
pub fn open_in_place(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; NONCE_BYTES],
    associated: &[u8],
    buffer: &mut [u8],
    tag: &[u8; TAG_BYTES],
) -> Result<(), NotAuthentic> {
    let cipher = XChaCha20Poly1305::new(Key::from_slice(key));
    cipher
        .decrypt_in_place_detached(XNonce::from_slice(nonce), associated, buffer, Tag::from_slice(tag))
        .map_err(|_| NotAuthentic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn sealed_bytes_open_back_and_a_changed_byte_is_refused() {
        let (key, nonce) = ([1u8; 32], [2u8; 24]);
        let mut buffer = vec![42u8; 100];
        let tag = seal_in_place(&key, &nonce, b"where", &mut buffer);
        assert_ne!(buffer, vec![42u8; 100]);
        let mut changed = buffer.clone();
        changed[99] ^= 0x80;
        assert_eq!(open_in_place(&key, &nonce, b"where", &mut changed, &tag), Err(NotAuthentic));
        assert_eq!(open_in_place(&key, &nonce, b"elsewhere", &mut buffer.clone(), &tag), Err(NotAuthentic));
        open_in_place(&key, &nonce, b"where", &mut buffer, &tag).unwrap();
        assert_eq!(buffer, vec![42u8; 100]);
    }

    #[test]
    fn the_first_test_vector_of_the_xchacha_draft_is_met() {
        // draft-irtf-cfrg-xchacha-03, section A.3.1 (the plaintext's first 16 bytes).
        let key: [u8; 32] = core::array::from_fn(|index| 0x80 + u8::try_from(index).unwrap());
        let nonce: [u8; 24] = core::array::from_fn(|index| 0x40 + u8::try_from(index).unwrap());
        let associated = [0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7];
        let mut buffer = *b"Ladies and Gentl";
        let _ = seal_in_place(&key, &nonce, &associated, &mut buffer);
        assert_eq!(
            buffer,
            [0xbd, 0x6d, 0x17, 0x9d, 0x3e, 0x83, 0xd4, 0x3b, 0x95, 0x76, 0x57, 0x94, 0x93, 0xc0, 0xe9, 0x39]
        );
    }
}
