//! Tokens: 256 random bits, shown once; the store keeps only their hash.

use core::fmt;
use core::str::FromStr;

pub use crate::conceal::conceal_token_digits;
use crate::error::Error;

/// What every printable token starts with.
pub(crate) const PREFIX: &str = "cheesedb-";

/// The secret that opens one agent. Its printable form is `cheesedb-` and 64 hex digits.
#[derive(Clone, PartialEq, Eq)]
pub struct Token([u8; 32]);

impl Token {
    /// A token made of these bytes (they must come from a good random source).
    #[must_use]
    pub fn from_bytes(bytes: [u8; 32]) -> Token {
        Token(bytes)
    }

    /// The secret bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret by accident, in logs or panics.
        formatter.write_str("Token(hidden)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(PREFIX)?;
        for byte in self.0 {
            write!(formatter, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl FromStr for Token {
    type Err = Error;

    fn from_str(text: &str) -> Result<Token, Error> {
        let hex = text.trim().strip_prefix(PREFIX).ok_or(Error::MalformedToken)?;
        decode_hex_32(hex).map(Token).ok_or(Error::MalformedToken)
    }
}

/// Decodes exactly 64 hex digits.
pub(crate) fn decode_hex_32(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let text = core::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn printable_form_round_trips() {
        let token = Token::from_bytes([0x5a; 32]);
        let text = token.to_string();
        assert_eq!(text.len(), PREFIX.len() + 64);
        assert_eq!(text.parse::<Token>(), Ok(token));
    }

    #[test]
    fn malformed_text_is_refused() {
        for text in ["", "cheesedb-", "cheesedb-zz", "other-00", &"cheesedb-0".repeat(2)] {
            assert_eq!(text.parse::<Token>(), Err(Error::MalformedToken), "{text}");
        }
    }

    #[test]
    fn long_hex_runs_are_concealed_and_short_ones_kept() {
        let token = Token::from_bytes([0x5a; 32]).to_string();
        assert_eq!(
            conceal_token_digits(&alloc::format!("no agent is named {token:?}")),
            "no agent is named \"cheesedb-…\""
        );
        let typo = alloc::format!("{}z{}", &token[..40], &token[41..]);
        assert!(!conceal_token_digits(&typo).contains("5a5a5a5a5a"), "{typo}");
        let half = &token[..PREFIX.len() + 32];
        assert_eq!(conceal_token_digits(half), "cheesedb-…");
        assert_eq!(
            conceal_token_digits("agent-0000000000000001/segment-0000000000000002.log"),
            "agent-0000000000000001/segment-0000000000000002.log"
        );
        assert_eq!(conceal_token_digits("id 12 is unknown"), "id 12 is unknown");
    }

    #[test]
    fn debug_hides_the_secret() {
        let token = Token::from_bytes([0x5a; 32]);
        assert!(!alloc::format!("{token:?}").contains("5a"));
    }
}
