//! Reading a configuration file of the data folder (`trust.toml`, `embed.conf`, `llm.conf`):
//! TOML, parsed with the `toml` crate into a serde type, every problem one line naming the file
//! and the line.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::failure::Failure;

/// The contents of the file `file_name` in `folder` as a `T`; `None` when there is no such file.
///
/// # Errors
/// A [`Failure`] naming the file (and the line, when one is at fault) when it cannot be read or
/// does not hold a `T`.
pub fn load<T: DeserializeOwned>(folder: &Path, file_name: &str) -> Result<Option<T>, Failure> {
    let path = folder.join(file_name);
    match fs::read_to_string(&path) {
        Ok(text) => parse(&text).map(Some).map_err(|problem| Failure::new(format!("{}: {problem}", path.display()))),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(Failure::new(format!("cannot read {}: {error}", path.display()))),
    }
}

/// `text` as a `T`, or the problem in one line starting with the line it is on.
///
/// # Errors
/// The problem, e.g. `line 3: unknown field `colour`, expected `labels``.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    toml::from_str(text).map_err(|error| {
        let message = error.message().trim().replace('\n', " ");
        match error.span() {
            Some(span) => {
                let line = line_of(text, span.start);
                match unquoted_value_hint(text, line) {
                    Some(hint) => format!("line {line}: {hint}"),
                    None => format!("line {line}: {message}"),
                }
            }
            None => message,
        }
    })
}

/// The line (from 1) holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let before = text.get(..offset).unwrap_or(text);
    before.bytes().filter(|&byte| byte == b'\n').count() + 1
}

/// When line `line` of `text` is `key = value` with a bare text value, as these files were
/// written before they were TOML, how to write it now. The value is quoted back only when it is
/// not a key, which never appears in a message.
fn unquoted_value_hint(text: &str, line: usize) -> Option<String> {
    let (key, value) = text.lines().nth(line.checked_sub(1)?)?.split_once('=')?;
    let (key, value) = (key.trim(), value.split(" #").next().unwrap_or_default().trim());
    let bare_key =
        !key.is_empty() && key.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    let starts_like_toml = value.starts_with(['"', '\'', '[', '{']) || value.parse::<f64>().is_ok();
    if !bare_key || value.is_empty() || starts_like_toml || matches!(value, "true" | "false") {
        return None;
    }
    let shown = if key.contains("key") { String::from("...") } else { value.replace(['\\', '"'], "") };
    Some(format!("the value of {key} must be quoted, as the file is TOML: write {key} = \"{shown}\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Sample {
        name: String,
        count: Option<u64>,
    }

    #[test]
    fn a_good_file_parses() {
        let sample: Sample = parse("# comment\nname = \"x\" # trailing\ncount = 3\n").unwrap();
        assert_eq!(sample, Sample { name: "x".into(), count: Some(3) });
    }

    #[test]
    fn problems_name_their_line() {
        let wrong_type = parse::<Sample>("name = \"x\"\ncount = \"many\"\n").unwrap_err();
        assert!(wrong_type.starts_with("line 2: invalid type"), "{wrong_type}");
        let unknown = parse::<Sample>("name = \"x\"\n\ncolour = \"blue\"\n").unwrap_err();
        assert!(unknown.starts_with("line 3: unknown field `colour`"), "{unknown}");
        let missing = parse::<Sample>("count = 1\n").unwrap_err();
        assert!(missing.contains("missing field `name`"), "{missing}");
        assert_eq!(missing.lines().count(), 1);
    }

    #[test]
    fn an_old_unquoted_value_says_how_to_write_it() {
        let old = parse::<Sample>("name = http://localhost:8000/v1 # the server\n").unwrap_err();
        assert_eq!(
            old,
            "line 1: the value of name must be quoted, as the file is TOML: write name = \"http://localhost:8000/v1\""
        );
        let key = parse::<Sample>("name = \"x\"\napi_key = sk-secret\n").unwrap_err();
        assert!(key.starts_with("line 2: the value of api_key must be quoted") && !key.contains("secret"), "{key}");
    }
}
