//! Reading a lot's or memory's content from the command line, a file, or standard input,
//! refusing more than the engine accepts before reading it all into memory.

use std::fs::File;
use std::io::Read;

use cheesedb::limits::CONTENT_MAX_BYTES;

use crate::arguments::TextSource;
use crate::failure::Failure;

/// The content that `source` names, as bytes.
pub fn read_content(source: &TextSource) -> Result<Vec<u8>, Failure> {
    match (&source.text, &source.file) {
        (_, Some(path)) => {
            let file =
                File::open(path).map_err(|error| Failure::new(format!("cannot open {}: {error}", path.display())))?;
            read_bounded(file, &path.display().to_string())
        }
        (Some(text), None) if text == "-" => read_bounded(std::io::stdin().lock(), "standard input"),
        (Some(text), None) => Ok(text.clone().into_bytes()),
        (None, None) => Err(Failure::new("no content given: pass the text, --file PATH, or - to read standard input")),
    }
}

/// Reads at most the engine's content limit from `reader`, and fails if there is more.
fn read_bounded(reader: impl Read, what: &str) -> Result<Vec<u8>, Failure> {
    let mut content = Vec::new();
    reader
        .take(CONTENT_MAX_BYTES as u64 + 1)
        .read_to_end(&mut content)
        .map_err(|error| Failure::new(format!("cannot read {what}: {error}")))?;
    if content.len() > CONTENT_MAX_BYTES {
        return Err(Failure::new(format!(
            "{what} holds more than {CONTENT_MAX_BYTES} bytes, the most one lot or memory may hold"
        )));
    }
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_over_the_limit_is_refused() {
        let big = vec![b'x'; CONTENT_MAX_BYTES + 1];
        assert!(read_bounded(&big[..], "input").is_err());
        assert_eq!(read_bounded(&big[..10], "input").unwrap().len(), 10);
    }
}
