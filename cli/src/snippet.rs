//! A snippet of a search hit for text output: one line, at most a given number of characters,
//! taken around the first word of the query the content holds, so a long source shows why it
//! matched rather than how it begins.

use crate::output::escaped;

/// How many characters of the window come before the matched word, at most: enough to read it
/// in its sentence.
const CONTEXT_BEFORE_DIVISOR: usize = 4;

/// At most `characters_max` characters of `content` around the first word of `query` it holds
/// (compared lower-cased), with `…` where it was cut; control and direction-changing characters
/// are shown as escapes, non-UTF-8 bytes as replacement characters.
pub fn snippet(content: &[u8], query: &str, characters_max: usize) -> String {
    let text = String::from_utf8_lossy(content);
    let characters: Vec<char> = text.chars().collect();
    if characters.len() <= characters_max {
        return escaped(&text);
    }
    let matched = first_query_word(&characters, query).unwrap_or(0);
    let start = matched.saturating_sub(characters_max / CONTEXT_BEFORE_DIVISOR).min(characters.len() - characters_max);
    let end = start + characters_max;
    let window: String = characters.get(start..end).unwrap_or_default().iter().collect();
    let before = if start > 0 { "…" } else { "" };
    let after = if end < characters.len() { "…" } else { "" };
    format!("{before}{}{after}", escaped(&window))
}

/// Where, in characters, the first word of `characters` that is also a word of `query` begins.
fn first_query_word(characters: &[char], query: &str) -> Option<usize> {
    let wanted: Vec<String> = words(query).map(|word| word.to_lowercase()).collect();
    let mut position = 0;
    while position < characters.len() {
        if !characters.get(position).is_some_and(|character| character.is_alphanumeric()) {
            position += 1;
            continue;
        }
        let start = position;
        while characters.get(position).is_some_and(|character| character.is_alphanumeric()) {
            position += 1;
        }
        let word: String = characters.get(start..position).unwrap_or_default().iter().collect();
        if wanted.contains(&word.to_lowercase()) {
            return Some(start);
        }
    }
    None
}

/// The runs of letters and digits of `text`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|character: char| !character.is_alphanumeric()).filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_content_is_shown_whole_and_escaped() {
        assert_eq!(snippet(b"Pune: rain", "rain", 40), "Pune: rain");
        assert_eq!(snippet(b"rain\x1b[2J\nnext", "rain", 40), "rain\\u{1b}[2J\\nnext");
    }

    #[test]
    fn long_content_is_cut_around_the_first_query_word() {
        let content = format!("{} Heavy RAIN tomorrow {}", "a".repeat(100), "b".repeat(100));
        let shown = snippet(content.as_bytes(), "forecast rain", 20);
        assert_eq!(shown, "…eavy RAIN tomorrow b…");
        assert_eq!(shown.chars().count(), 22);
        let no_match = snippet(content.as_bytes(), "snow", 10);
        assert_eq!(no_match, "aaaaaaaaaa…");
        let at_the_end = snippet(format!("{} rain", "a".repeat(50)).as_bytes(), "rain", 10);
        assert_eq!(at_the_end, "…aaaaa rain");
    }

    #[test]
    fn words_inside_other_words_do_not_match() {
        let content = format!("raincoat {} rain", "x".repeat(30));
        assert!(snippet(content.as_bytes(), "rain", 12).ends_with(" rain"));
    }
}
