//! Trust levels: how far an agent should believe a lot or memory, from the labels of the lots
//! it rests on. The rules map lot labels to levels; the engine computes a memory's level from
//! its legs (see `AgentEngine::trust`).

use alloc::collections::BTreeMap;
use alloc::string::String;
use core::fmt;
use core::str::FromStr;

/// How far a lot or memory is to be believed. Ordered: `Low < Normal < High`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum TrustLevel {
    /// From a source the rules distrust (a web page, say): check before acting on it.
    Low,
    /// Neither distrusted nor vouched for: the level of every label the rules do not name.
    #[default]
    Normal,
    /// From a source the rules vouch for (the user's own words, say).
    High,
}

impl TrustLevel {
    /// The level as a word: `"low"`, `"normal"` or `"high"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            TrustLevel::Low => "low",
            TrustLevel::Normal => "normal",
            TrustLevel::High => "high",
        }
    }
}

impl fmt::Display for TrustLevel {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A word that names no trust level (only `low`, `normal` and `high` do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTrustLevel {
    /// The word given.
    pub word: String,
}

impl fmt::Display for UnknownTrustLevel {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "unknown trust level {:?}: expected low, normal or high", self.word)
    }
}

impl core::error::Error for UnknownTrustLevel {}

impl FromStr for TrustLevel {
    type Err = UnknownTrustLevel;

    fn from_str(word: &str) -> Result<TrustLevel, UnknownTrustLevel> {
        match word {
            "low" => Ok(TrustLevel::Low),
            "normal" => Ok(TrustLevel::Normal),
            "high" => Ok(TrustLevel::High),
            _ => Err(UnknownTrustLevel { word: String::from(word) }),
        }
    }
}

/// The trust level of each lot label; a label the rules do not name is `Normal`.
///
/// ```
/// use cheesedb_core::{TrustLevel, TrustRules};
///
/// let rules = TrustRules::new().with("user_message", TrustLevel::High).with("web_page", TrustLevel::Low);
/// assert_eq!(rules.level_of("web_page"), TrustLevel::Low);
/// assert_eq!(rules.level_of("weather_tool"), TrustLevel::Normal);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustRules {
    levels: BTreeMap<String, TrustLevel>,
}

impl TrustRules {
    /// Rules that leave every label `Normal`.
    #[must_use]
    pub fn new() -> TrustRules {
        TrustRules::default()
    }

    /// These rules with `label` at `level` (replacing what they said of it).
    #[must_use]
    pub fn with(mut self, label: &str, level: TrustLevel) -> TrustRules {
        self.set(label, level);
        self
    }

    /// Puts `label` at `level` (replacing what the rules said of it).
    pub fn set(&mut self, label: &str, level: TrustLevel) {
        self.levels.insert(String::from(label), level);
    }

    /// The level of lots labelled `label`.
    #[must_use]
    pub fn level_of(&self, label: &str) -> TrustLevel {
        self.levels.get(label).copied().unwrap_or_default()
    }

    /// The labels the rules name, ascending, with their levels.
    pub fn iter(&self) -> impl Iterator<Item = (&str, TrustLevel)> + '_ {
        self.levels.iter().map(|(label, level)| (label.as_str(), *level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    #[test]
    fn levels_are_ordered_from_low_to_high() {
        assert!(TrustLevel::Low < TrustLevel::Normal && TrustLevel::Normal < TrustLevel::High);
        assert_eq!(TrustLevel::default(), TrustLevel::Normal);
    }

    #[test]
    fn words_name_the_levels_both_ways() {
        for level in [TrustLevel::Low, TrustLevel::Normal, TrustLevel::High] {
            assert_eq!(level.as_str().parse::<TrustLevel>(), Ok(level));
            assert_eq!(level.to_string(), level.as_str());
        }
        let refused = "High".parse::<TrustLevel>();
        assert_eq!(refused, Err(UnknownTrustLevel { word: "High".to_string() }));
        assert_eq!(
            refused.map_err(|error| error.to_string()),
            Err("unknown trust level \"High\": expected low, normal or high".to_string())
        );
    }

    #[test]
    fn a_label_not_named_is_normal_and_a_later_rule_replaces_an_earlier() {
        let mut rules = TrustRules::new().with("web_page", TrustLevel::Low);
        assert_eq!(rules.level_of("web_page"), TrustLevel::Low);
        assert_eq!(rules.level_of("user_message"), TrustLevel::Normal);
        rules.set("web_page", TrustLevel::High);
        assert_eq!(rules.level_of("web_page"), TrustLevel::High);
        assert_eq!(rules.iter().collect::<Vec<_>>(), [("web_page", TrustLevel::High)]);
    }
}
