//! A real model behind an OpenAI-compatible `POST {base_url}/chat/completions`.
//!
//! Small models return junk, echo the prompt or wrap JSON in prose: every reply is checked
//! (see [`crate::demo::model`]), a bad one is sent back with what was wrong, and after
//! [`ATTEMPTS_MAX`] tries the story is told why the model's output stayed unusable.

use serde_json::{json, Value};

use crate::demo::config::LlmConfig;
use crate::demo::model::{check_answer, parse_extraction, MemoryView, Model, ModelFailure, ProposedMemory, SourceView};
use crate::endpoint::PostFailure;
use crate::progress::spinner;

/// How many times one question is put to the model before giving up.
pub const ATTEMPTS_MAX: u32 = 3;
/// How many tokens an extraction reply may hold: a handful of short memories in JSON.
const EXTRACTION_MAX_TOKENS: u32 = 500;
/// How many tokens an answer may hold: one or two sentences. A small bound also keeps a model
/// that rambles or repeats the prompt from taking minutes on a CPU.
const ANSWER_MAX_TOKENS: u32 = 120;
/// The most bytes of a server's reply read; a chat reply is far smaller.
const RESPONSE_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// Where the chat API lies below the base URL.
const CHAT_PATH: &str = "chat/completions";

const EXTRACTION_INSTRUCTIONS: &str = "You turn sources into memories for an assistant's long-term memory. \
Reply with JSON only, no other text, in exactly this form:
{\"memories\": [{\"text\": \"...\", \"legs\": [[1]]}]}
Rules:
- Give 2 to 6 short memories, each one fact or conclusion.
- Memories are numbered after the sources, in the order you list them (the first is number FIRST).
- \"legs\" says where a memory came from: a list of alternatives, each a list of ids that together support it. \
[[1]] means from source 1. [[1], [2]] means source 1 says it and source 2 says it too. \
[[4, 6]] means it follows from memories 4 and 6 together.
- Use only the ids of the sources and of memories earlier in your list.";

const ANSWER_INSTRUCTIONS: &str =
    "Answer the user's question in one or two sentences, using only the memories listed. \
If the memories do not tell, say that you do not know.";

/// A model reached over HTTP.
pub struct ChatModel {
    config: LlmConfig,
    http: ureq::Agent,
    /// Set once the server could not be reached on every attempt of one question.
    unreachable: Option<String>,
}

impl ChatModel {
    /// A model as `config` describes it.
    pub fn new(config: LlmConfig) -> ChatModel {
        let http = config.http_client();
        ChatModel { config, http, unreachable: None }
    }

    fn endpoint(&self) -> String {
        self.config.url(CHAT_PATH)
    }

    /// Sends one conversation and returns the reply's text.
    fn chat(&self, messages: &[Value], reply_max_tokens: u32) -> Result<String, ChatError> {
        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": reply_max_tokens,
            "stream": false,
        });
        let progress = spinner("waiting for the model");
        let posted = self.config.post_json(&self.http, CHAT_PATH, &body, RESPONSE_MAX_BYTES);
        progress.finish_and_clear();
        let text = posted.map_err(|failure| match failure {
            PostFailure::Unreachable(problem) => ChatError::Unreachable(problem),
            PostFailure::Refused(problem) => ChatError::BadReply(problem),
        })?;
        reply_text(&text).map_err(ChatError::BadReply)
    }

    /// Asks until `accept` takes a reply or the attempts run out. A refused reply is shown to
    /// the model with the reason, so it can correct itself. A server that could not be reached
    /// on any attempt is not asked again: the rest of the story would only repeat the wait.
    fn ask<T>(
        &mut self,
        mut messages: Vec<Value>,
        reply_max_tokens: u32,
        accept: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, ModelFailure> {
        if let Some(reason) = &self.unreachable {
            return Err(ModelFailure {
                reason: format!("not asked, the server could not be reached earlier ({reason})"),
                attempts: 0,
            });
        }
        let mut reasons = Vec::new();
        let mut any_reply = false;
        for attempt in 1..=ATTEMPTS_MAX {
            let reply = match self.chat(&messages, reply_max_tokens) {
                Ok(reply) => reply,
                Err(ChatError::Unreachable(problem)) => {
                    reasons.push(format!("attempt {attempt}: {problem}"));
                    continue;
                }
                Err(ChatError::BadReply(problem)) => {
                    any_reply = true;
                    reasons.push(format!("attempt {attempt}: {problem}"));
                    continue;
                }
            };
            any_reply = true;
            match accept(&reply) {
                Ok(value) => return Ok(value),
                Err(problem) => {
                    let excerpt: String = reply.chars().take(80).collect();
                    reasons.push(format!("attempt {attempt}: {problem} (the reply began {excerpt:?})"));
                    if attempt < ATTEMPTS_MAX {
                        messages.push(json!({ "role": "assistant", "content": reply }));
                        messages.push(json!({ "role": "user", "content": format!("That reply was not usable: {problem}. Try again, following the rules exactly.") }));
                    }
                }
            }
        }
        if !any_reply {
            self.unreachable = Some(self.endpoint());
        }
        Err(ModelFailure { reason: reasons.join("; "), attempts: ATTEMPTS_MAX })
    }
}

/// Why one request gave no text.
#[derive(Debug)]
enum ChatError {
    /// No HTTP reply at all: refused, timed out, cut off.
    Unreachable(String),
    /// A reply, but an error status or not the expected JSON.
    BadReply(String),
}

/// The text of the first choice of a chat-completions reply.
pub fn reply_text(body: &str) -> Result<String, String> {
    let value: Value =
        serde_json::from_str(body).map_err(|error| format!("the server's reply is not JSON: {error}"))?;
    match value.pointer("/choices/0/message/content") {
        Some(Value::String(text)) => Ok(text.clone()),
        _ => Err(String::from("the server's reply has no choices[0].message.content text")),
    }
}

impl Model for ChatModel {
    fn description(&self) -> String {
        format!("{} at {}", self.config.model, self.config.base_url)
    }

    fn is_scripted(&self) -> bool {
        false
    }

    fn extract_memories(&mut self, sources: &[SourceView]) -> Result<Vec<ProposedMemory>, ModelFailure> {
        let first = sources.iter().map(|source| source.id).max().unwrap_or(0) + 1;
        let listing: Vec<String> =
            sources.iter().map(|source| format!("[{}] {}: {}", source.id, source.label, source.text)).collect();
        let messages = vec![
            json!({ "role": "system", "content": EXTRACTION_INSTRUCTIONS.replace("FIRST", &first.to_string()) }),
            json!({ "role": "user", "content": format!("Sources:\n{}", listing.join("\n")) }),
        ];
        self.ask(messages, EXTRACTION_MAX_TOKENS, |reply| parse_extraction(reply, sources))
    }

    fn answer(&mut self, question: &str, memories: &[MemoryView]) -> Result<String, ModelFailure> {
        let listing: Vec<String> = memories.iter().map(|memory| format!("[{}] {}", memory.id, memory.text)).collect();
        let listing = if listing.is_empty() { String::from("(none)") } else { listing.join("\n") };
        let messages = vec![
            json!({ "role": "system", "content": ANSWER_INSTRUCTIONS }),
            json!({ "role": "user", "content": format!("Memories:\n{listing}\n\nQuestion: {question}") }),
        ];
        self.ask(messages, ANSWER_MAX_TOKENS, |reply| check_answer(reply, question))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_text_is_taken_from_the_first_choice() {
        let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(reply_text(body), Ok(String::from("hi")));
        assert!(reply_text("{}").is_err());
        assert!(reply_text("<html>").is_err());
        assert!(reply_text(r#"{"choices":[{"message":{"content":null}}]}"#).is_err());
    }

    #[test]
    fn an_unreachable_server_is_a_failure_not_a_crash() {
        // A port that was just bound and let go has nothing listening: the connection is refused.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let text = format!("base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\ntimeout_seconds = 2");
        let config = crate::endpoint::parse(&text, std::time::Duration::from_secs(2)).unwrap();
        let mut model = ChatModel::new(config);
        let failure = model.answer("q", &[]).unwrap_err();
        assert_eq!(failure.attempts, ATTEMPTS_MAX);
        assert!(failure.reason.contains("no reply"), "{}", failure.reason);
    }
}
