//! An OpenAI-compatible server named in a small file of the data folder: `llm.conf` for the
//! demo's model, `embed.conf` for the embeddings that make search hybrid. Both read the same way:
//!
//! ```text
//! base_url = http://localhost:8000/v1
//! model    = your-model-name
//! # api_key = your-key        (only if the server needs one)
//! # timeout_seconds = 30      (per request)
//! ```

use std::fs;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

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

/// Reads the file `file_name` of `folder`; `None` when there is no such file. A request may
/// take `default_timeout` unless the file says otherwise.
pub fn load(folder: &Path, file_name: &str, default_timeout: Duration) -> Result<Option<Endpoint>, Failure> {
    let path = folder.join(file_name);
    match fs::read_to_string(&path) {
        Ok(text) => parse(&text, default_timeout)
            .map(Some)
            .map_err(|problem| Failure::new(format!("{}: {problem}", path.display()))),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(Failure::new(format!("cannot read {}: {error}", path.display()))),
    }
}

/// Parses `key = value` lines; `#` starts a comment.
pub fn parse(text: &str, default_timeout: Duration) -> Result<Endpoint, String> {
    let mut base_url = None;
    let mut model = None;
    let mut api_key = None;
    let mut request_timeout = default_timeout;
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected key = value", number + 1));
        };
        let value = value.trim().to_owned();
        match key.trim() {
            "base_url" => base_url = Some(value),
            "model" => model = Some(value),
            "api_key" => api_key = Some(value).filter(|key| !key.is_empty()),
            "timeout_seconds" => {
                let seconds: u64 = value
                    .parse()
                    .map_err(|_| format!("line {}: timeout_seconds must be a whole number", number + 1))?;
                request_timeout = Duration::from_secs(seconds.max(1));
            }
            other => {
                return Err(format!(
                    "line {}: unknown key {other:?} (known: base_url, model, api_key, timeout_seconds)",
                    number + 1
                ))
            }
        }
    }
    let base_url = base_url
        .filter(|url| !url.is_empty())
        .ok_or("base_url is missing, e.g. base_url = http://localhost:8000/v1")?;
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(format!("base_url {base_url:?} must start with http:// or https://"));
    }
    let model = model.filter(|model| !model.is_empty()).ok_or("model is missing, e.g. model = your-model-name")?;
    Ok(Endpoint { base_url, model, api_key, request_timeout })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(7);

    #[test]
    fn a_config_with_comments_parses() {
        let config =
            parse("base_url = http://localhost:8000/v1\nmodel    = small # a comment\n# api_key = x\n", TIMEOUT)
                .unwrap();
        assert_eq!(config.base_url, "http://localhost:8000/v1");
        assert_eq!(config.model, "small");
        assert_eq!(config.api_key, None);
        assert_eq!(config.request_timeout, TIMEOUT);
        assert_eq!(config.url("embeddings"), "http://localhost:8000/v1/embeddings");
    }

    #[test]
    fn missing_or_unknown_keys_are_explained() {
        assert!(parse("model = m", TIMEOUT).unwrap_err().contains("base_url"));
        assert!(parse("base_url = http://x/v1", TIMEOUT).unwrap_err().contains("model"));
        assert!(parse("base_url = ftp://x\nmodel = m", TIMEOUT).is_err());
        assert!(parse("colour = blue", TIMEOUT).unwrap_err().contains("unknown key"));
        assert!(parse("base_url = http://x/\nmodel = m\ntimeout_seconds = soon", TIMEOUT).is_err());
    }

    #[test]
    fn the_key_is_never_printed() {
        let config = parse("base_url = http://x/v1/\nmodel = m\napi_key = secret", TIMEOUT).unwrap();
        assert!(!format!("{config:?}").contains("secret"));
        assert_eq!(config.url("chat/completions"), "http://x/v1/chat/completions");
    }
}
