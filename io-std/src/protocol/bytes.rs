//! Byte strings encoded as one length and the bytes, rather than as a list of numbers: serde
//! sees a `Vec<u8>` as a sequence, which postcard would decode one byte at a time.

use serde::de::{Deserializer, Error as _, Visitor};
use serde::Serializer;

/// Encodes `bytes` as a byte string.
pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_bytes(bytes)
}

/// Decodes a byte string.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    deserializer.deserialize_byte_buf(BytesVisitor)
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a byte string")
    }

    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
        Ok(bytes.to_vec())
    }

    fn visit_byte_buf<E: serde::de::Error>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(bytes)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _sequence: A) -> Result<Vec<u8>, A::Error> {
        Err(A::Error::custom("a byte string, not a sequence"))
    }
}

/// The same for an optional byte string.
pub(crate) mod optional {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Bytes(#[serde(with = "super")] Vec<u8>);

    /// Encodes `bytes`, if any, as a byte string.
    pub(crate) fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, serializer: S) -> Result<S::Ok, S::Error> {
        bytes.as_deref().map(|bytes| Bytes(bytes.to_vec())).serialize(serializer)
    }

    /// Decodes an optional byte string.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<u8>>, D::Error> {
        Ok(Option::<Bytes>::deserialize(deserializer)?.map(|bytes| bytes.0))
    }
}
