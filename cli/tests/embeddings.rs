//! embed.conf: writes get their vectors from an OpenAI-compatible embeddings server, search
//! becomes hybrid, a failed embedding never loses the write, and `cheesedb embed` fills in the
//! vectors that are missing. The server is a loopback stub with deterministic vectors.

use crate::common;

use common::embeddings_server::{config_of_a_server_that_is_down, vector_of, Behaviour, EmbeddingsServer, DIMENSION};
use common::Cli;
use serde_json::{json, Value};

fn configure(cli: &Cli, config: &str) {
    std::fs::write(cli.folder().join("embed.conf"), config).unwrap();
}

fn ids(value: &Value) -> Vec<u64> {
    value["hits"].as_array().unwrap().iter().map(|hit| hit["id"].as_u64().unwrap()).collect()
}

/// An agent with a lot and a memory about rain, and one about cycling.
fn seed(cli: &Cli) -> (u64, u64, u64) {
    cli.create_agent("alice");
    let lot = cli.lot("alice", "weather_tool", "heavy rain in Pune tomorrow");
    let memory = cli.remember("alice", "rain is coming", &[&lot.to_string()]);
    let other = cli.lot("alice", "user_message", "I cycle to work");
    (lot, memory, other)
}

#[test]
fn every_write_gets_its_vector_and_search_finds_by_meaning() {
    let server = EmbeddingsServer::start(Behaviour::Vectors);
    let cli = Cli::new();
    configure(&cli, &server.config(Some("embedding-key")));
    cli.create_agent("alice");
    let lot = cli.json(&["lot", "alice", "weather_tool", "heavy rain in Pune tomorrow"]);
    assert_eq!(lot, json!({ "id": 1, "vector": true }));
    let memory = cli.json(&["remember", "alice", "rain is coming", "--leg", "1"]);
    assert_eq!(memory, json!({ "id": 2, "vector": true }));
    let text = cli.run(&["lot", "alice", "user_message", "I cycle to work"]).ok().to_owned();
    assert_eq!(text, "added lot 3 (user_message, 15 bytes), with its vector\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.path, "/v1/embeddings");
        assert_eq!(request.authorization.as_deref(), Some("Bearer embedding-key"));
        assert_eq!(request.body["model"], "hash-words");
    }
    assert_eq!(requests[1].body["input"], json!(["rain is coming"]));

    // No word of "downpour" is stored: only the vectors can find the rain.
    let found = cli.run(&["--json", "search", "alice", "downpour"]);
    assert_eq!(found.status, Some(0), "{found:?}");
    assert!(found.stderr.is_empty(), "{}", found.stderr);
    let found: Value = serde_json::from_str(&found.stdout).unwrap();
    assert_eq!(ids(&found)[..2], [2, 1], "{found}");
    assert_eq!(server.requests().last().unwrap().body["input"], json!(["downpour"]));
    let text = cli.run(&["search", "alice", "downpour"]).ok().to_owned();
    assert!(text.contains("best first by words and meaning"), "{text}");

    // Without embed.conf the same search is by words, and finds nothing.
    std::fs::remove_file(cli.folder().join("embed.conf")).unwrap();
    assert_eq!(cli.run(&["search", "alice", "downpour"]).status, Some(1));
    assert_eq!(cli.json(&["lot", "alice", "note", "no server now"]), json!({ "id": 4 }));
}

#[test]
fn a_failed_embedding_never_loses_the_write() {
    let broken = EmbeddingsServer::start(Behaviour::ServerError);
    let not_json = EmbeddingsServer::start(Behaviour::NotJson);
    let cases = [
        (config_of_a_server_that_is_down(), "no reply"),
        (broken.config(None), "HTTP 500"),
        (not_json.config(None), "not JSON"),
    ];
    for (config, reason) in cases {
        let cli = Cli::new();
        configure(&cli, &config);
        cli.create_agent("alice");
        let run = cli.run(&["--json", "lot", "alice", "weather_tool", "heavy rain in Pune"]);
        let value = run.json();
        assert_eq!((value["id"].clone(), value["vector"].clone()), (json!(1), json!(false)), "{value}");
        assert!(value["vector_problem"].as_str().unwrap().contains(reason), "{value}");
        assert!(
            run.stderr.contains("1 was stored without a vector") && run.stderr.contains("cheesedb embed"),
            "{}",
            run.stderr
        );

        let run = cli.run(&["remember", "alice", "rain is coming", "--leg", "1"]);
        assert_eq!(run.ok(), "remembered 2 (legs: [1])\n");
        assert!(run.stderr.contains("2 was stored without a vector"), "{}", run.stderr);
        assert_eq!(cli.json(&["get", "alice", "2"])["content"], "rain is coming");

        // The search falls back to the words, and says so.
        let searched = cli.run(&["--json", "search", "alice", "rain"]);
        assert_eq!(searched.status, Some(0), "{searched:?}");
        assert!(
            searched.stderr.contains("searched by keywords only") && searched.stderr.contains(reason),
            "{}",
            searched.stderr
        );
        let searched: Value = serde_json::from_str(&searched.stdout).unwrap();
        assert_eq!(ids(&searched).len(), 2);
    }
}

#[test]
fn embed_fills_in_the_missing_vectors_and_stops_cleanly_when_the_server_fails() {
    let server = EmbeddingsServer::start(Behaviour::ServerError);
    let cli = Cli::new();
    configure(&cli, &server.config(None));
    let (lot, memory, other) = seed(&cli);
    let binary = cli.folder().join("blob.bin");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let blob = cli.json(&["lot", "alice", "blob", "--file", binary.to_str().unwrap()]);
    assert!(blob["vector_problem"].as_str().unwrap().contains("not UTF-8"), "{blob}");
    let recalled = cli.lot("alice", "note", "recalled before it got a vector");
    cli.run(&["recall", "alice", &recalled.to_string()]).ok();

    let failed = cli.run(&["embed", "alice"]);
    assert!(failed.fails_with(2).contains("stopped after 0 vector(s)"), "{failed:?}");

    server.set_behaviour(Behaviour::Vectors);
    let asked_before = server.requests().len();
    let filled = cli.json(&["embed", "alice"]);
    assert_eq!(filled["embedded"], 3, "{filled}");
    assert_eq!(filled["had_vector"], 0);
    assert_eq!(filled["skipped"], json!([{ "id": 4, "reason": "its content is not UTF-8 text" }]));
    let inputs: Vec<Value> =
        server.requests()[asked_before..].iter().map(|request| request.body["input"].clone()).collect();
    assert_eq!(
        inputs,
        [json!(["heavy rain in Pune tomorrow", "rain is coming", "I cycle to work"])],
        "one request, no recalled node"
    );

    let again = cli.run(&["embed", "alice"]);
    let text = again.ok();
    assert!(text.starts_with("0 lot(s) and memories got a vector from hash-words at http://127.0.0.1:"), "{text}");
    assert!(
        text.contains("3 had one already") && text.contains("[4] left without one: its content is not UTF-8 text"),
        "{text}"
    );

    let found = cli.json(&["search", "alice", "drizzle"]);
    assert_eq!(ids(&found)[..2], [memory, lot]);
    assert!(!ids(&found)[..2].contains(&other));
}

#[test]
fn embed_needs_embed_conf_and_a_broken_one_writes_nothing() {
    let cli = Cli::new();
    cli.create_agent("alice");
    assert!(cli.run(&["embed", "alice"]).fails_with(2).contains("no embed.conf in"));
    configure(&cli, "model = \"m\"\n");
    let message = cli.run(&["lot", "alice", "note", "rain"]).fails_with(2).to_owned();
    assert!(message.contains("embed.conf") && message.contains("base_url"), "{message}");
    // A file written before these files were TOML says how to write it now.
    configure(&cli, "base_url = http://127.0.0.1:9/v1\nmodel = m\n");
    let message = cli.run(&["lot", "alice", "note", "rain"]).fails_with(2).to_owned();
    assert!(
        message.contains("embed.conf: line 1: the value of base_url must be quoted, as the file is TOML: write base_url = \"http://127.0.0.1:9/v1\""),
        "{message}"
    );
    assert!(cli.run(&["get", "alice", "1"]).fails_with(2).contains("no lot or memory has id 1"), "nothing was written");
}

#[test]
fn another_models_vectors_cost_the_vector_and_search_falls_back_to_words() {
    let server = EmbeddingsServer::start(Behaviour::Vectors);
    let cli = Cli::new();
    configure(&cli, &server.config(None));
    let (lot, memory, _) = seed(&cli);
    server.set_behaviour(Behaviour::OtherDimension);
    let written = cli.json(&["lot", "alice", "note", "rain again"]);
    let problem = written["vector_problem"].as_str().unwrap();
    assert!(
        problem.contains(&format!("{} dimensions", DIMENSION * 2)) && problem.contains(&DIMENSION.to_string()),
        "{problem}"
    );
    let searched = cli.run(&["--json", "search", "alice", "rain"]);
    assert!(searched.stderr.contains("searched by keywords only"), "{}", searched.stderr);
    let searched: Value = serde_json::from_str(&searched.stdout).unwrap();
    assert_eq!(ids(&searched).len(), 3);
    assert!(ids(&searched).contains(&lot) && ids(&searched).contains(&memory));
}

#[test]
fn a_recalled_node_is_never_found_by_its_vector() {
    let server = EmbeddingsServer::start(Behaviour::Vectors);
    for removal in [None, Some("--erase")] {
        let cli = Cli::new();
        configure(&cli, &server.config(None));
        let (lot, memory, other) = seed(&cli);
        assert!(ids(&cli.json(&["search", "alice", "downpour"])).contains(&memory));
        let mut recall = vec!["recall", "alice", "1"];
        recall.extend(removal);
        cli.run(&recall).ok();
        // The cycling lot shares no word with the query, so any hit could only come by vector.
        let found = cli.json(&["search", "alice", "downpour rain heavy Pune tomorrow coming"]);
        assert!(!ids(&found).contains(&lot) && !ids(&found).contains(&memory), "{removal:?}: {found}");
        assert_eq!(ids(&found), vec![other], "{removal:?}");
        let filled = cli.json(&["embed", "alice"]);
        assert_eq!((filled["embedded"].clone(), filled["had_vector"].clone()), (json!(0), json!(1)));
    }
    assert_eq!(vector_of("Downpour", DIMENSION), vector_of("rain", DIMENSION));
}
