//! `embed.conf`: which OpenAI-compatible embeddings server and model give lots and memories
//! their vectors. Without the file, search is by keywords alone.

use std::path::Path;
use std::time::Duration;

use crate::embeddings::client::Embedder;
use crate::endpoint;
use crate::failure::Failure;

/// The file's name in the data folder.
pub const EMBED_CONFIG_FILE: &str = "embed.conf";
/// How long one request may take unless `timeout_seconds` says otherwise: embedding a few
/// texts is quick, and every write waits for it.
const REQUEST_TIMEOUT_DEFAULT: Duration = Duration::from_secs(30);

/// The embedder that `embed.conf` in `folder` names, or `None` without the file.
pub fn load(folder: &Path) -> Result<Option<Embedder>, Failure> {
    Ok(endpoint::load(folder, EMBED_CONFIG_FILE, REQUEST_TIMEOUT_DEFAULT)?.map(Embedder::new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_means_keywords_only_and_a_broken_one_is_named() {
        let folder = tempfile::tempdir().unwrap();
        assert!(load(folder.path()).unwrap().is_none());
        std::fs::write(folder.path().join(EMBED_CONFIG_FILE), "model = \"m\"\n").unwrap();
        let failure = load(folder.path()).unwrap_err();
        assert!(failure.message().contains("embed.conf") && failure.message().contains("base_url"), "{failure}");
        std::fs::write(folder.path().join(EMBED_CONFIG_FILE), "base_url = \"http://x/v1\"\nmodel = \"m\"\n").unwrap();
        assert_eq!(load(folder.path()).unwrap().unwrap().url(), "http://x/v1/embeddings");
    }
}
