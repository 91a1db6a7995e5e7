//! `trust.toml`: how far to believe lots of each label, and so the memories resting on them.
//!
//! ```toml
//! [labels]
//! user_message = "high"
//! web_page = "low"
//! "search result" = "low"
//! ```
//!
//! A label the file does not name is `normal`, and so is every label without the file.

use std::collections::BTreeMap;
use std::path::Path;

use cheesedb::{TrustLevel, TrustRules};
use serde::{Deserialize, Deserializer};

use crate::config_file;
use crate::failure::Failure;

/// The file's name in the data folder.
pub const TRUST_RULES_FILE: &str = "trust.toml";

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    /// Lot label -> level.
    #[serde(default)]
    labels: BTreeMap<String, Level>,
}

/// A level as the file writes it: `"low"`, `"normal"` or `"high"`.
#[derive(Debug, Clone, Copy)]
struct Level(TrustLevel);

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Level, D::Error> {
        let word = String::deserialize(deserializer)?;
        word.parse().map(Level).map_err(serde::de::Error::custom)
    }
}

/// The trust rules of the data folder `folder`: every label `normal` without `trust.toml`.
///
/// # Errors
/// A [`Failure`] naming the file and the line when the file cannot be read, is not TOML, has
/// a key other than `labels`, or gives a label anything but `"low"`, `"normal"` or `"high"`.
pub fn load(folder: &Path) -> Result<TrustRules, Failure> {
    let file: Option<TrustFile> = config_file::load(folder, TRUST_RULES_FILE)?;
    Ok(file.map(rules_from).unwrap_or_default())
}

fn rules_from(file: TrustFile) -> TrustRules {
    file.labels.into_iter().fold(TrustRules::new(), |rules, (label, level)| rules.with(&label, level.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<TrustRules, Failure> {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join(TRUST_RULES_FILE), text).unwrap();
        load(folder.path())
    }

    #[test]
    fn a_missing_file_leaves_every_label_normal() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(load(folder.path()).unwrap(), TrustRules::new());
        assert_eq!(load_text("").unwrap(), TrustRules::new());
    }

    #[test]
    fn labels_get_their_levels_and_others_stay_normal() {
        let rules = load_text(
            "# who to believe\n[labels]\nuser_message = \"high\"\nweb_page = \"low\"\n\"a b\" = \"normal\"\n",
        )
        .unwrap();
        assert_eq!(rules.level_of("user_message"), TrustLevel::High);
        assert_eq!(rules.level_of("web_page"), TrustLevel::Low);
        assert_eq!(rules.level_of("a b"), TrustLevel::Normal);
        assert_eq!(rules.level_of("weather_tool"), TrustLevel::Normal);
    }

    #[test]
    fn mistakes_are_one_line_naming_the_file_and_line() {
        let cases = [
            (
                "[labels]\nweb_page = \"medium\"\n",
                "line 2: unknown trust level \"medium\": expected low, normal or high",
            ),
            ("[labels]\n\nweb_page = 3\n", "line 3: invalid type: integer `3`, expected a string"),
            ("[label]\nweb_page = \"low\"\n", "line 1: unknown field `label`, expected `labels`"),
            ("[labels]\nweb_page = low\n", "line 2: the value of web_page must be quoted"),
            ("[labels]\nweb_page = \"low\"\nweb_page = \"high\"\n", "line 3: duplicate key"),
        ];
        for (text, expected) in cases {
            let failure = load_text(text).unwrap_err();
            let message = failure.message();
            assert!(message.contains("trust.toml: ") && message.contains(expected), "{text:?}: {message}");
            assert_eq!(message.lines().count(), 1);
        }
    }
}
