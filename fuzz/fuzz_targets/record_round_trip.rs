//! Any bytes: decoding never panics, and a record that decodes encodes back to the same bytes.
#![no_main]

use cheesedb_core::codec::record;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok((decoded, length)) = record::decode(bytes) {
        let mut encoded = Vec::new();
        decoded.encode(&mut encoded);
        assert_eq!(Some(&encoded[..]), bytes.get(..length), "re-encoding changed the record");
        let _ = decoded.redacted();
    }
    let _ = record::looks_like_commit(bytes);
});
