//! `llm.conf`: which OpenAI-compatible server and model the demo talks to (read as every
//! server file of the data folder is, see [`crate::endpoint`]).

use std::path::Path;
use std::time::Duration;

use crate::endpoint::{self, Endpoint};
use crate::failure::Failure;

/// The file's name in the data folder.
pub const LLM_CONFIG_FILE: &str = "llm.conf";
/// How long one request may take unless `timeout_seconds` says otherwise; small models on a
/// CPU can be slow.
const REQUEST_TIMEOUT_DEFAULT: Duration = Duration::from_secs(120);

/// Where the model is and how to reach it.
pub type LlmConfig = Endpoint;

/// Reads `llm.conf` from `folder`; `None` when there is no such file.
pub fn load(folder: &Path) -> Result<Option<LlmConfig>, Failure> {
    endpoint::load(folder, LLM_CONFIG_FILE, REQUEST_TIMEOUT_DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_gets_two_minutes_unless_told_otherwise() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(load(folder.path()).unwrap(), None);
        std::fs::write(
            folder.path().join(LLM_CONFIG_FILE),
            "base_url = \"http://localhost:8000/v1\"\nmodel = \"small\"",
        )
        .unwrap();
        assert_eq!(load(folder.path()).unwrap().unwrap().request_timeout, REQUEST_TIMEOUT_DEFAULT);
        std::fs::write(folder.path().join(LLM_CONFIG_FILE), "model = \"small\"").unwrap();
        assert!(load(folder.path()).unwrap_err().message().contains("llm.conf"));
    }
}
