//! An OpenAI-compatible server named in a small file of the data folder: `llm.conf` for the
//! demo's model, `embed.conf` for the embeddings that make search hybrid. Both are TOML and
//! read the same way:
//!
//! ```toml
//! base_url = "http://localhost:8000/v1"
//! model    = "your-model-name"
//! # api_key = "your-key"      (only if the server needs one)
//! # timeout_seconds = 30      (per request)
//! ```

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::config_file;
use crate::failure::Failure;

/// The most characters of an error reply quoted in a message.
const EXCERPT_MAX_CHARACTERS: usize = 200;

/// Where a server is and how to reach it.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The server's base URL, up to and including `/v1`.
    pub base_url: String,
    /// The model's name as the server knows it.
    pub model: String,
    /// Sent as a bearer token when set.
    pub api_key: Option<String>,
    /// How long one request may take.
    pub request_timeout: Duration,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        formatter
            .debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "(set)"))
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

impl Endpoint {
    /// The URL of `path` (such as `embeddings`) below the base URL.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.trim_end_matches('/'))
    }

    /// An HTTP client that gives up after the request timeout and hands error statuses back
    /// as replies, so their text can be shown.
    pub fn http_client(&self) -> ureq::Agent {
        ureq::Agent::config_builder()
            .timeout_global(Some(self.request_timeout))
            .http_status_as_error(false)
            .build()
            .new_agent()
    }

    /// Posts `body` as JSON to `path` below the base URL through `http` (the key, if set, as a
    /// bearer token) and returns the text of a successful reply, read up to `reply_max_bytes`.
    pub fn post_json(
        &self,
        http: &ureq::Agent,
        path: &str,
        body: &Value,
        reply_max_bytes: u64,
    ) -> Result<String, PostFailure> {
        let url = self.url(path);
        let mut request = http.post(&url).header("Content-Type", "application/json");
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.to_string())
            .map_err(|error| PostFailure::Unreachable(format!("no reply from {url}: {error}")))?;
        let status = response.status();
        let text = response
            .body_mut()
            .with_config()
            .limit(reply_max_bytes)
            .read_to_string()
            .map_err(|error| PostFailure::Unreachable(format!("cannot read the reply of {url}: {error}")))?;
        if !status.is_success() {
            let excerpt: String = text.chars().take(EXCERPT_MAX_CHARACTERS).collect();
            return Err(PostFailure::Refused(format!("the server at {url} answered HTTP {status}: {excerpt}")));
        }
        Ok(text)
    }
}

/// Why a request to an endpoint got no usable reply, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostFailure {
    /// No reply came, or it could not be read.
    Unreachable(String),
    /// The server answered with an error status; the message quotes the start of its reply.
    Refused(String),
}

impl PostFailure {
    /// The one-line message.
    pub fn into_message(self) -> String {
        match self {
            PostFailure::Unreachable(message) | PostFailure::Refused(message) => message,
        }
    }
}

/// The file as written: every key optional to serde, so a missing one gets a message of ours
/// with an example.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointFile {
    base_url: Option<String>,
    model: Option<String>,
    api_key: Option<String>,
    timeout_seconds: Option<u64>,
}

/// Reads the file `file_name` of `folder`; `None` when there is no such file. A request may
/// take `default_timeout` unless the file says otherwise.
///
/// # Errors
/// A [`Failure`] naming the file, and the line when one is at fault, when it cannot be read or
/// does not name a server.
pub fn load(folder: &Path, file_name: &str, default_timeout: Duration) -> Result<Option<Endpoint>, Failure> {
    let Some(file) = config_file::load::<EndpointFile>(folder, file_name)? else { return Ok(None) };
    endpoint_from(file, default_timeout)
        .map(Some)
        .map_err(|problem| Failure::new(format!("{}: {problem}", folder.join(file_name).display())))
}

/// Parses the TOML text of such a file (the tests' way in; the command reads files).
///
/// # Errors
/// The problem in one line, naming the line at fault when there is one.
#[cfg(test)]
pub fn parse(text: &str, default_timeout: Duration) -> Result<Endpoint, String> {
    endpoint_from(config_file::parse(text)?, default_timeout)
}

fn endpoint_from(file: EndpointFile, default_timeout: Duration) -> Result<Endpoint, String> {
    let base_url = file
        .base_url
        .filter(|url| !url.is_empty())
        .ok_or("base_url is missing, e.g. base_url = \"http://localhost:8000/v1\"")?;
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(format!("base_url {base_url:?} must start with http:// or https://"));
    }
    let model =
        file.model.filter(|model| !model.is_empty()).ok_or("model is missing, e.g. model = \"your-model-name\"")?;
    let api_key = file.api_key.filter(|key| !key.is_empty());
    let request_timeout = file.timeout_seconds.map_or(default_timeout, |seconds| Duration::from_secs(seconds.max(1)));
    Ok(Endpoint { base_url, model, api_key, request_timeout })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(7);

    #[test]
    fn a_config_with_comments_parses() {
        let text = "base_url = \"http://localhost:8000/v1\"\nmodel    = \"small\" # a comment\n# api_key = \"x\"\n";
        let config = parse(text, TIMEOUT).unwrap();
        assert_eq!(config.base_url, "http://localhost:8000/v1");
        assert_eq!(config.model, "small");
        assert_eq!(config.api_key, None);
        assert_eq!(config.request_timeout, TIMEOUT);
        assert_eq!(config.url("embeddings"), "http://localhost:8000/v1/embeddings");
        let timed = parse("base_url = \"http://x/v1\"\nmodel = \"m\"\ntimeout_seconds = 3\n", TIMEOUT).unwrap();
        assert_eq!(timed.request_timeout, Duration::from_secs(3));
    }

    #[test]
    fn missing_or_unknown_keys_are_explained() {
        assert!(parse("model = \"m\"", TIMEOUT).unwrap_err().contains("base_url"));
        assert!(parse("base_url = \"http://x/v1\"", TIMEOUT).unwrap_err().contains("model"));
        assert!(parse("base_url = \"ftp://x\"\nmodel = \"m\"", TIMEOUT).is_err());
        let unknown = parse("colour = \"blue\"", TIMEOUT).unwrap_err();
        assert!(unknown.starts_with("line 1: unknown field `colour`"), "{unknown}");
        let timeout =
            parse("base_url = \"http://x/\"\nmodel = \"m\"\ntimeout_seconds = \"soon\"", TIMEOUT).unwrap_err();
        assert!(timeout.starts_with("line 3: invalid type"), "{timeout}");
    }

    #[test]
    fn an_old_unquoted_file_says_how_to_write_it() {
        let old = parse("base_url = http://localhost:8000/v1\nmodel = small\n", TIMEOUT).unwrap_err();
        assert_eq!(
            old,
            "line 1: the value of base_url must be quoted, as the file is TOML: write base_url = \"http://localhost:8000/v1\""
        );
    }

    #[test]
    fn the_key_is_never_printed() {
        let config = parse("base_url = \"http://x/v1/\"\nmodel = \"m\"\napi_key = \"secret\"", TIMEOUT).unwrap();
        assert!(!format!("{config:?}").contains("secret"));
        assert_eq!(config.url("chat/completions"), "http://x/v1/chat/completions");
        let old = parse("base_url = \"http://x/v1/\"\nmodel = \"m\"\napi_key = secret", TIMEOUT).unwrap_err();
        assert!(!old.contains("secret"), "{old}");
    }
}
