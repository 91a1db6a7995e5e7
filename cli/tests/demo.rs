//! `cheesedb demo`: scripted, against a loopback stub of a chat-completions server, and against
//! a stub whose output is junk.

use crate::common;

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use common::Cli;
use serde_json::{json, Value};

/// What the stub saw of one request: the path, the Authorization header, the JSON body.
use common::loopback_http::JsonRequest as SeenRequest;

/// A chat-completions server on 127.0.0.1 that answers each request with `reply(request)`.
struct StubServer {
    port: u16,
    requests: Arc<Mutex<Vec<SeenRequest>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The most requests a stub serves before it stops on its own.
const STUB_REQUESTS_MAX: usize = 64;

impl StubServer {
    fn start(reply: fn(&Value) -> (u16, String)) -> StubServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopping) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut served = 0;
            while !stopping.load(Ordering::Relaxed)
                && served < STUB_REQUESTS_MAX
                && started.elapsed() < Duration::from_secs(120)
            {
                match listener.accept() {
                    Ok((stream, _)) => {
                        served += 1;
                        serve_one(stream, &seen, reply);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        StubServer { port, requests, stop, thread: Some(thread) }
    }

    fn config(&self, api_key: Option<&str>) -> String {
        let mut config = format!("base_url = \"http://127.0.0.1:{}/v1\"\nmodel    = \"stub-model\"\n", self.port);
        if let Some(key) = api_key {
            config.push_str(&format!("api_key = \"{key}\"\n"));
        }
        config
    }

    fn requests(&self) -> Vec<SeenRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one HTTP request and answers it with `reply`.
fn serve_one(stream: TcpStream, seen: &Mutex<Vec<SeenRequest>>, reply: fn(&Value) -> (u16, String)) {
    common::loopback_http::exchange(stream, seen, |request| reply(&request.body));
}

fn chat_reply(content: &str) -> String {
    json!({ "id": "x", "object": "chat.completion", "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }] }).to_string()
}

fn is_extraction(request: &Value) -> bool {
    request["messages"][0]["content"].as_str().unwrap_or_default().contains("memories for")
}

/// A capable model: good JSON (wrapped in prose) for extraction, and an answer that follows
/// what the memories say.
fn capable(request: &Value) -> (u16, String) {
    if is_extraction(request) {
        let memories = r#"Here you go: {"memories": [
            {"text": "The user is based in Pune.", "legs": [[1], [2]]},
            {"text": "Tomorrow brings rain to Pune.", "legs": [[3]]},
            {"text": "Pack the rain jacket for the commute.", "legs": [[4, 5]]}]}"#;
        return (200, chat_reply(memories));
    }
    let prompt = request["messages"][1]["content"].as_str().unwrap_or_default();
    let memories = prompt.split("Question:").next().unwrap_or_default();
    let answer = if memories.contains("rain") { "Yes, it will rain." } else { "I do not know the forecast." };
    (200, chat_reply(answer))
}

/// A weak model: junk for everything, and a server error now and then.
fn junk(request: &Value) -> (u16, String) {
    if request["messages"].as_array().map(Vec::len).unwrap_or(0) > 2 {
        return (500, String::from("{\"error\": \"overloaded\"}"));
    }
    (200, chat_reply("the the the {\"memories\": [{\"text\": \"invented\", \"legs\": [[42]]}]} the"))
}

fn demo(cli: &Cli, arguments: &[&str]) -> Value {
    let mut all = vec!["--json", "demo"];
    all.extend_from_slice(arguments);
    cli.run(&all).json()
}

fn ways(summary: &Value) -> Vec<(bool, bool)> {
    summary["ways"]
        .as_array()
        .unwrap()
        .iter()
        .map(|way| (way["model_sees_bad_data"].as_bool().unwrap(), way["bad_text_on_disk"].as_bool().unwrap()))
        .collect()
}

/// The ids of a search, in ascending order (the ranking is the engine's business).
fn sorted(hits: &Value) -> Vec<u64> {
    let mut ids: Vec<u64> = hits.as_array().unwrap().iter().map(|id| id.as_u64().unwrap()).collect();
    ids.sort_unstable();
    ids
}

fn searches(summary: &Value) -> Vec<Value> {
    summary["ways"].as_array().unwrap().iter().map(|way| way["search_hits"].clone()).collect()
}

#[test]
fn the_scripted_demo_tells_the_story_and_ends_with_the_table() {
    let cli = Cli::new();
    let text = cli.run(&["demo"]).ok().to_owned();
    assert!(text.contains("SCRIPTED"), "the scripted model is labelled: {text}");
    for expected in [
        "A  naive memory list",
        "B  cheesedb, Untrusted",
        "C  cheesedb, Erase",
        "bad text on disk",
        "A search of the memory for \"rain forecast\" finds 2:",
        "search brings it back?",
    ] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    let summary = demo(&cli, &[]);
    assert_eq!(summary["model"]["scripted"], true);
    assert_eq!(ways(&summary), vec![(true, true), (false, true), (false, false)]);
    assert_eq!(summary["search_query"], "rain forecast");
    assert_eq!(sorted(&summary["search_before"]), [3, 6]);
    assert_eq!(searches(&summary), vec![json!([6]), json!([]), json!([])], "only the naive list brings it back");
    assert_eq!(summary["ways"][1]["occurrences_on_disk"], 3);
    assert!(summary["answer_before"]["text"].as_str().unwrap().starts_with("Yes"));
    assert!(summary["ways"][2]["answer"]["text"].as_str().unwrap().contains("no forecast"));
}

#[test]
fn the_demo_never_touches_the_users_data_folder() {
    let cli = Cli::new();
    cli.create_agent("alice");
    cli.lot("alice", "note", "mine");
    let before = common::files_below(cli.folder());
    demo(&cli, &[]);
    assert_eq!(common::files_below(cli.folder()), before);
    assert_eq!(cli.json(&["agent", "list"])["agents"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_demo_talks_to_a_chat_completions_server() {
    let stub = StubServer::start(capable);
    let cli = Cli::new();
    std::fs::write(cli.folder().join("llm.conf"), stub.config(Some("test-key"))).unwrap();
    let summary = demo(&cli, &[]);
    assert_eq!(summary["model"]["scripted"], false);
    assert!(summary["model"]["description"].as_str().unwrap().contains("stub-model"));
    assert_eq!(summary["model_output_usable"], true);
    let memories: Vec<&str> =
        summary["memories"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(
        memories,
        ["The user is based in Pune.", "Tomorrow brings rain to Pune.", "Pack the rain jacket for the commute."]
    );
    assert_eq!(ways(&summary), vec![(true, true), (false, true), (false, false)]);
    assert_eq!(summary["answer_before"]["text"], "Yes, it will rain.");
    assert_eq!(summary["ways"][0]["answer"]["text"], "Yes, it will rain.", "the naive list still feeds the bad data");
    assert_eq!(summary["ways"][2]["answer"]["text"], "I do not know the forecast.");
    assert_eq!(sorted(&summary["search_before"]), [3, 5, 6], "the model's own memories of the rain are found");
    assert_eq!(searches(&summary), vec![json!([5, 6]), json!([]), json!([])]);

    let requests = stub.requests();
    assert_eq!(requests.len(), 5, "one extraction and four answers");
    for SeenRequest { path, authorization, body } in &requests {
        assert_eq!(path, "/v1/chat/completions");
        assert_eq!(authorization.as_deref(), Some("Bearer test-key"));
        assert_eq!(body["model"], "stub-model");
    }
}

#[test]
fn junk_from_the_model_is_explained_and_nothing_invented_is_stored() {
    let stub = StubServer::start(junk);
    let cli = Cli::new();
    std::fs::write(cli.folder().join("llm.conf"), stub.config(None)).unwrap();
    let run = cli.run(&["demo"]);
    let text = run.ok().to_owned();
    assert!(text.contains("unusable after 3 attempts"), "{text}");
    assert!(text.contains("SCRIPTED"), "{text}");
    assert!(!text.contains("] invented"), "no invented memory is stored: {text}");

    let summary = demo(&cli, &[]);
    assert_eq!(summary["model_output_usable"], false);
    assert!(summary["fallback_reason"].as_str().unwrap().contains("42"));
    assert_eq!(summary["memories"].as_array().map(Vec::len), Some(4), "the scripted memories, nothing invented");
    assert_eq!(ways(&summary), vec![(true, true), (false, true), (false, false)]);
    assert!(stub.requests().iter().all(|request| request.authorization.is_none()));
}

#[test]
fn an_unreachable_server_is_explained_not_a_crash() {
    // Bind a port and close it again, so nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cli = Cli::new();
    std::fs::write(
        cli.folder().join("llm.conf"),
        format!("base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n"),
    )
    .unwrap();
    let summary = demo(&cli, &[]);
    assert_eq!(summary["model_output_usable"], false);
    assert!(summary["fallback_reason"].as_str().unwrap().contains("no reply"));
    let unusable = summary["ways"][0]["answer"]["unusable"].as_str().unwrap();
    assert!(unusable.contains("not asked"), "an unreachable server is not asked again: {unusable}");
}

#[test]
fn a_broken_llm_conf_is_one_line_and_scripted_ignores_it() {
    let cli = Cli::new();
    std::fs::write(cli.folder().join("llm.conf"), "model = \"m\"\n").unwrap();
    let message = cli.run(&["demo"]).fails_with(2).to_owned();
    assert!(message.contains("llm.conf") && message.contains("base_url"), "{message}");
    assert_eq!(demo(&cli, &["--scripted"])["model"]["scripted"], true);
}
