//! Any bytes as a request to the memory server: decoding never panics, the hello's version is
//! read without panicking, and a request that decodes encodes to bytes that decode to it again.
#![no_main]

use cheesedb::protocol::Request;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let _ = Request::hello_version(bytes);
    if let Ok(request) = Request::decode(bytes) {
        // Compared as bytes: a vector may hold NaN, which is not equal to itself.
        let encoded = request.encode().expect("a decoded request encodes");
        let again = Request::decode(&encoded).expect("an encoded request decodes");
        assert_eq!(again.encode().expect("encodes"), encoded, "re-encoding changed the request");
        let _ = (request.operation(), request.ids(), request.is_write());
    }
});
