//! Asking an OpenAI-compatible server for embeddings: `POST {base_url}/embeddings` with
//! `{"model": ..., "input": [texts]}`, answered by `{"data": [{"index": i, "embedding": [...]}]}`.
//!
//! Every reply is checked before a vector is used: one vector per text, each a non-empty list
//! of finite numbers, all of one dimension. Anything else is a one-line reason, never a panic.

use serde_json::{json, Value};

use crate::endpoint::{Endpoint, PostFailure};

/// The most bytes of a server's reply read: a batch of vectors of the largest dimension the
/// engine takes, written as JSON numbers, fits many times over.
const RESPONSE_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Where the embeddings API lies below the base URL.
const EMBEDDINGS_PATH: &str = "embeddings";

/// An embeddings server and the model it runs.
pub struct Embedder {
    endpoint: Endpoint,
    http: ureq::Agent,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Embedder").field("endpoint", &self.endpoint).finish()
    }
}

impl Embedder {
    /// An embedder for the server and model `endpoint` names.
    pub fn new(endpoint: Endpoint) -> Embedder {
        let http = endpoint.http_client();
        Embedder { endpoint, http }
    }

    /// Where the requests go.
    pub fn url(&self) -> String {
        self.endpoint.url(EMBEDDINGS_PATH)
    }

    /// The model, as `embed.conf` names it.
    pub fn model(&self) -> &str {
        &self.endpoint.model
    }

    /// The vector of each of `texts`, in order; or why there is none. Nothing is retried:
    /// the caller decides what a missing vector means.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let body = json!({ "model": self.endpoint.model, "input": texts });
        let text = self
            .endpoint
            .post_json(&self.http, EMBEDDINGS_PATH, &body, RESPONSE_MAX_BYTES)
            .map_err(PostFailure::into_message)?;
        parse_embeddings(&text, texts.len())
    }

    /// The vector of one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, String> {
        let mut vectors = self.embed(&[text])?;
        vectors.pop().ok_or_else(|| String::from("the embeddings server gave no vector"))
    }
}

/// The vectors of an embeddings reply, put in the order of the texts by their `index`.
pub fn parse_embeddings(body: &str, texts: usize) -> Result<Vec<Vec<f32>>, String> {
    let value: Value =
        serde_json::from_str(body).map_err(|error| format!("the embeddings server's reply is not JSON: {error}"))?;
    let Some(Value::Array(items)) = value.get("data") else {
        return Err(String::from("the embeddings server's reply has no data list"));
    };
    if items.len() != texts {
        return Err(format!("the embeddings server gave {} vectors for {texts} texts", items.len()));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts];
    for (position, item) in items.iter().enumerate() {
        let index = match item.get("index") {
            None => position,
            Some(index) => index
                .as_u64()
                .and_then(|index| usize::try_from(index).ok())
                .filter(|index| *index < texts)
                .ok_or_else(|| format!("data[{position}].index is not the position of a text sent"))?,
        };
        let vector =
            numbers(item.get("embedding")).map_err(|problem| format!("data[{position}].embedding {problem}"))?;
        let slot = vectors.get_mut(index).ok_or_else(|| format!("data[{position}].index is out of range"))?;
        if slot.replace(vector).is_some() {
            return Err(format!("the embeddings server gave two vectors for text {index}"));
        }
    }
    let vectors: Vec<Vec<f32>> = vectors.into_iter().flatten().collect();
    if vectors.iter().any(|vector| vector.len() != vectors.first().map_or(0, Vec::len)) {
        return Err(String::from("the embeddings server gave vectors of different dimensions"));
    }
    Ok(vectors)
}

/// A JSON list of finite numbers as a vector.
fn numbers(value: Option<&Value>) -> Result<Vec<f32>, String> {
    let Some(Value::Array(numbers)) = value else {
        return Err(String::from("is not a list of numbers (a base64 reply is not read)"));
    };
    if numbers.is_empty() {
        return Err(String::from("is empty"));
    }
    numbers
        .iter()
        .enumerate()
        .map(|(position, number)| {
            // An f64 beyond the range of f32 becomes infinite here, and is refused with the rest.
            let converted = number.as_f64().map(|number| number as f32).filter(|number| number.is_finite());
            converted.ok_or_else(|| format!("holds {number} at position {position}, not a finite number"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_put_in_the_order_of_the_texts() {
        let body = r#"{"object":"list","data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1.5,-2]}]}"#;
        assert_eq!(parse_embeddings(body, 2).unwrap(), vec![vec![1.5, -2.0], vec![3.0, 4.0]]);
        let without_index = r#"{"data":[{"embedding":[1]},{"embedding":[2]}]}"#;
        assert_eq!(parse_embeddings(without_index, 2).unwrap(), vec![vec![1.0], vec![2.0]]);
    }

    #[test]
    fn a_reply_that_does_not_fit_the_texts_is_refused_with_a_reason() {
        let cases = [
            ("<html>busy</html>", "not JSON"),
            (r#"{"error":"x"}"#, "no data"),
            (r#"{"data":[{"index":0,"embedding":[1]}]}"#, "1 vectors for 2 texts"),
            (r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}"#, "two vectors"),
            (r#"{"data":[{"index":0,"embedding":[1]},{"index":7,"embedding":[2]}]}"#, "index"),
            (r#"{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[]}]}"#, "empty"),
            (r#"{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":"AAAA"}]}"#, "base64"),
            (r#"{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1e300]}]}"#, "finite"),
            (r#"{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[null]}]}"#, "finite"),
            (r#"{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}"#, "dimensions"),
        ];
        for (body, reason) in cases {
            let problem = parse_embeddings(body, 2).unwrap_err();
            assert!(problem.contains(reason), "{body}: {problem}");
        }
    }

    #[test]
    fn an_unreachable_server_is_a_reason_not_a_crash() {
        // A port that was just bound and let go has nothing listening: the connection is refused.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let text = format!("base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\ntimeout_seconds = 2");
        let embedder = Embedder::new(crate::endpoint::parse(&text, std::time::Duration::from_secs(2)).unwrap());
        assert!(embedder.embed(&["rain"]).unwrap_err().contains("no reply"));
        assert_eq!(embedder.embed(&[]).unwrap(), Vec::<Vec<f32>>::new());
    }
}
