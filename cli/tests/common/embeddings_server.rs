//! An embeddings server on 127.0.0.1 speaking the OpenAI API (`POST /v1/embeddings` with
//! `{"model", "input": [texts]}`, answered by `{"data": [{"index", "embedding"}]}`), with
//! deterministic vectors: each word of a text adds 1 to one of [`DIMENSION`] buckets chosen by
//! its hash, so texts that share words have similar vectors. A few synonyms share a bucket,
//! so a search by meaning finds what a search by words cannot. It can be switched to fail.

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The dimension of the vectors it gives.
pub const DIMENSION: usize = 64;
/// Words taken as another word, so their vectors match while their letters do not.
const SYNONYMS: [(&str, &str); 4] =
    [("downpour", "rain"), ("drizzle", "rain"), ("umbrella", "raincoat"), ("city", "pune")];
/// How long a server lives at most, so a test that forgets it cannot hang.
const LIFETIME_MAX: Duration = Duration::from_secs(300);

/// How the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Vectors, as described above.
    Vectors,
    /// Vectors of another dimension, as another model would give.
    OtherDimension,
    /// HTTP 500 with an error body.
    ServerError,
    /// HTTP 200 with a body that is not JSON.
    NotJson,
}

/// What the server saw of one request.
pub use super::loopback_http::JsonRequest as SeenRequest;

/// A running server; it stops when dropped.
pub struct EmbeddingsServer {
    port: u16,
    behaviour: Arc<Mutex<Behaviour>>,
    requests: Arc<Mutex<Vec<SeenRequest>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EmbeddingsServer {
    /// Starts a server answering with `behaviour`.
    pub fn start(behaviour: Behaviour) -> EmbeddingsServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().unwrap().port();
        let behaviour = Arc::new(Mutex::new(behaviour));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (answering, seen, stopping) = (behaviour.clone(), requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            while !stopping.load(Ordering::Relaxed) && started.elapsed() < LIFETIME_MAX {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let behaviour = *answering.lock().unwrap();
                        serve_one(stream, &seen, behaviour);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        EmbeddingsServer { port, behaviour, requests, stop, thread: Some(thread) }
    }

    /// The text of an `embed.conf` naming this server.
    pub fn config(&self, api_key: Option<&str>) -> String {
        let mut config = format!("base_url = \"http://127.0.0.1:{}/v1\"\nmodel    = \"hash-words\"\n", self.port);
        if let Some(key) = api_key {
            config.push_str(&format!("api_key = \"{key}\"\n"));
        }
        config
    }

    /// Changes how it answers from the next request on.
    pub fn set_behaviour(&self, behaviour: Behaviour) {
        *self.behaviour.lock().unwrap() = behaviour;
    }

    /// Every request it answered, in order.
    pub fn requests(&self) -> Vec<SeenRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for EmbeddingsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The text of an `embed.conf` naming a port where nothing listens.
pub fn config_of_a_server_that_is_down() -> String {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"hash-words\"\ntimeout_seconds = 5\n")
}

/// The vector the server gives `text`, with `dimension` numbers.
pub fn vector_of(text: &str, dimension: usize) -> Vec<f32> {
    let mut vector = vec![0.0; dimension];
    for word in text.split(|character: char| !character.is_alphanumeric()).filter(|word| !word.is_empty()) {
        let word = word.to_lowercase();
        let word = SYNONYMS.iter().find(|(synonym, _)| *synonym == word).map_or(word.as_str(), |(_, meant)| meant);
        // FNV-1a: the same word lands in the same bucket in every run.
        let hash = word
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3));
        vector[(hash % dimension as u64) as usize] += 1.0;
    }
    if vector.iter().all(|number| *number == 0.0) {
        vector[0] = 1.0;
    }
    vector
}

fn serve_one(stream: TcpStream, seen: &Mutex<Vec<SeenRequest>>, behaviour: Behaviour) {
    super::loopback_http::exchange(stream, seen, |request| answer(&request.path, &request.body, behaviour));
}

fn answer(path: &str, body: &Value, behaviour: Behaviour) -> (u16, String) {
    if path != "/v1/embeddings" {
        return (404, String::from("{\"error\": \"not found\"}"));
    }
    let dimension = match behaviour {
        Behaviour::Vectors => DIMENSION,
        Behaviour::OtherDimension => DIMENSION * 2,
        Behaviour::ServerError => return (500, String::from("{\"error\": \"the model is not loaded\"}")),
        Behaviour::NotJson => return (200, String::from("<html>gateway says hello</html>")),
    };
    let Some(Value::Array(inputs)) = body.get("input") else {
        return (400, String::from("{\"error\": \"input must be a list\"}"));
    };
    // Listed last first, so the client must put them back in order by their index.
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, input)| json!({ "object": "embedding", "index": index, "embedding": vector_of(input.as_str().unwrap_or_default(), dimension) }))
        .collect();
    (200, json!({ "object": "list", "data": data, "model": body["model"] }).to_string())
}
