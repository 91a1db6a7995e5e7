//! The head fingerprint: how many records the history holds and the chain hash after them.

use core::fmt;
use core::str::FromStr;

use crate::digest::Hash;
use crate::error::Error;
use crate::error_facts::NameProblem;

/// The head of an agent's hash chain. Keep it somewhere else and compare it later: a history
/// that was cut or rewritten below it no longer produces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// Records (lots, memories, recalls) in the history.
    pub records: u64,
    /// The chain hash after the last of them.
    pub chain: Hash,
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}-", self.records)?;
        for byte in self.chain {
            write!(formatter, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl FromStr for Fingerprint {
    type Err = Error;

    fn from_str(text: &str) -> Result<Fingerprint, Error> {
        let malformed = Error::InvalidName { reason: NameProblem::FingerprintMalformed };
        let (records, hex) = text.trim().split_once('-').ok_or(malformed.clone())?;
        let records = records.parse().map_err(|_| malformed.clone())?;
        let chain = crate::token::decode_hex_32(hex).ok_or(malformed)?;
        Ok(Fingerprint { records, chain })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn display_and_parse_agree() {
        let fingerprint = Fingerprint { records: 12, chain: [0xab; 32] };
        let text = fingerprint.to_string();
        assert!(text.starts_with("12-abab"));
        assert_eq!(text.parse::<Fingerprint>(), Ok(fingerprint));
        assert!("12-zz".parse::<Fingerprint>().is_err());
    }
}
