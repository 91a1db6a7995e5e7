//! Which files hold an agent's access log: `NAME.N.log` in the access folder.
//!
//! An agent's name is any text up to 256 bytes, so it cannot always be a file name: slashes,
//! dots, control characters and long names would escape the folder, hide the file or exceed the
//! system's limit. A name of letters, digits, `_` and `-` (at most [`PLAIN_NAME_MAX_BYTES`]) is
//! used as it is, so the files are easy to find; any other name is replaced by `~` and a hash of
//! it (a `~` never appears in a plain name, so the two kinds never meet). Each file's header
//! names the agent in full, and the reader checks it.

use sha2::{Digest, Sha256};

/// The longest agent name used as it is in a file name.
pub const PLAIN_NAME_MAX_BYTES: usize = 64;

/// Hash bytes (written as hex) naming an agent whose name is not plain.
const NAME_HASH_BYTES: usize = 16;

const EXTENSION: &str = ".log";

/// The part of every file name of `agent`'s log before the file number.
pub fn stem_of(agent: &str) -> String {
    let plain = !agent.is_empty()
        && agent.len() <= PLAIN_NAME_MAX_BYTES
        && agent.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    if plain {
        return agent.to_owned();
    }
    let digest = Sha256::digest(agent.as_bytes());
    let hex: String = digest.iter().take(NAME_HASH_BYTES).map(|byte| format!("{byte:02x}")).collect();
    format!("~{hex}")
}

/// The name of file `number` of the log whose stem is `stem`.
pub fn file_name(stem: &str, number: u64) -> String {
    format!("{stem}.{number}{EXTENSION}")
}

/// The file number in `name` when it is a file of the log whose stem is `stem`. Numbers are
/// written without leading zeros, so a file has exactly one name.
pub fn file_number(stem: &str, name: &str) -> Option<u64> {
    let digits = name.strip_suffix(EXTENSION)?.strip_prefix(stem)?.strip_prefix('.')?;
    let canonical = !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit()) && !digits.starts_with('0');
    if !canonical {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept_and_others_hashed() {
        assert_eq!(stem_of("alice"), "alice");
        assert_eq!(stem_of("research-bot_2"), "research-bot_2");
        for hostile in ["../x", "a/b", ".", "..", "", "é", "a.b", "a\nb", &"x".repeat(65)] {
            let stem = stem_of(hostile);
            assert!(stem.starts_with('~') && stem.len() == 33, "{hostile:?} -> {stem}");
            assert!(stem[1..].bytes().all(|byte| byte.is_ascii_hexdigit()));
        }
        assert_ne!(stem_of("a.b"), stem_of("a/b"));
    }

    #[test]
    fn file_numbers_are_read_back_from_names_of_the_same_log_only() {
        assert_eq!(file_number("alice", &file_name("alice", 12)), Some(12));
        assert_eq!(file_number("alice", "alice.0.log"), None);
        assert_eq!(file_number("alice", "alice.012.log"), None);
        assert_eq!(file_number("alice", "alice.x.log"), None);
        assert_eq!(file_number("alice", "alice.1.log.tmp"), None);
        assert_eq!(file_number("alice", "alicex.1.log"), None);
        assert_eq!(file_number("ali", "alice.1.log"), None);
        assert_eq!(file_number("alice", "alice.99999999999999999999.log"), None);
    }
}
