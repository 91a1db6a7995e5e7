//! `cheesedb search`: hits best first with grep's exit status, the exact JSON shape, and never
//! a recalled lot or memory, whatever the removal and mode, after compaction and read-only.

use crate::common;

use std::collections::BTreeSet;

use common::Cli;
use serde_json::{json, Value};

/// The ids of `search AGENT QUERY --json`, best first; panics unless the exit status is 0 or 1.
fn hit_ids(cli: &Cli, agent: &str, query: &str) -> Vec<u64> {
    let run = cli.run(&["--json", "search", agent, query]);
    let value: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|_| panic!("JSON: {run:?}"));
    let hits = value["hits"].as_array().unwrap();
    assert_eq!(run.status, Some(if hits.is_empty() { 1 } else { 0 }), "{run:?}");
    hits.iter().map(|hit| hit["id"].as_u64().unwrap()).collect()
}

#[test]
fn hits_exit_zero_and_no_hit_exits_one_like_grep() {
    let cli = Cli::new();
    let [_a, _b, c, _m1, m2, _m3] = cli.seed_story("alice");
    let found = cli.run(&["search", "alice", "rain"]);
    let text = found.ok();
    assert!(text.starts_with("1 hit(s) for \"rain\", best first by words:"), "{text}");
    assert!(text.contains(&format!("[{c}] lot")) && text.contains("weather_tool: Pune: rain"), "{text}");
    let rainy = cli.run(&["search", "alice", "rainy", "umbrella"]);
    assert_eq!(rainy.status, Some(2), "one query, quoted: {rainy:?}");
    assert_eq!(hit_ids(&cli, "alice", "rainy umbrella").len(), 2);
    assert_eq!(hit_ids(&cli, "alice", "rainy")[0], m2);

    let missing = cli.run(&["search", "alice", "snow"]);
    assert_eq!(missing.status, Some(1));
    assert_eq!(missing.stdout, "no lot or memory matches \"snow\"\n");
    assert!(missing.stderr.is_empty(), "{}", missing.stderr);
    let missing = cli.run(&["--json", "search", "alice", "snow"]);
    assert_eq!((missing.status, missing.stdout.as_str()), (Some(1), "{\"hits\":[]}\n"));
}

#[test]
fn json_has_exactly_the_documented_shape() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let lot = cli.lot("alice", "weather_tool", "Pune: rain, rain and more rain");
    let memory = cli.remember("alice", "Pune is rainy: rain today", &[&lot.to_string()]);
    let value = cli.json(&["search", "alice", "rain"]);
    assert_eq!(value.as_object().unwrap().keys().collect::<Vec<_>>(), ["hits"]);
    let hits = value["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    for hit in hits {
        let keys: BTreeSet<&str> = hit.as_object().unwrap().keys().map(String::as_str).collect();
        let expected: &[&str] = if hit["kind"] == "memory" {
            &["id", "score", "kind", "content", "trust", "tracked_parents"]
        } else {
            &["id", "score", "kind", "content", "trust"]
        };
        assert_eq!(keys, expected.iter().copied().collect::<BTreeSet<_>>(), "{hit}");
        assert!(hit["score"].as_f64().unwrap() > 0.0, "{hit}");
    }
    let scores: Vec<f64> = hits.iter().map(|hit| hit["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|pair| pair[0] >= pair[1]), "best first: {scores:?}");
    let by_id = |id: u64| hits.iter().find(|hit| hit["id"] == id).unwrap().clone();
    let score = |id: u64| by_id(id)["score"].clone();
    assert_eq!(
        by_id(lot),
        json!({ "id": lot, "score": score(lot), "kind": "lot", "content": "Pune: rain, rain and more rain", "trust": "normal" })
    );
    assert_eq!(
        by_id(memory),
        json!({ "id": memory, "score": score(memory), "kind": "memory", "content": "Pune is rainy: rain today", "trust": "normal", "tracked_parents": [] })
    );
}

#[test]
fn limit_cuts_the_list_and_bad_arguments_exit_two() {
    let cli = Cli::new();
    cli.create_agent("alice");
    for text in ["rain", "rain rain", "rain in Pune"] {
        cli.lot("alice", "note", text);
    }
    assert_eq!(cli.json(&["search", "alice", "rain", "--limit", "2"])["hits"].as_array().map(Vec::len), Some(2));
    assert_eq!(cli.json(&["search", "alice", "rain"])["hits"].as_array().map(Vec::len), Some(3));
    assert!(cli.run(&["search", "alice", "  "]).fails_with(2).contains("empty"));
    cli.run(&["search", "alice", "rain", "--limit", "0"]).fails_with(2);
    cli.run(&["search", "alice", "rain", "--limit", "x"]).fails_with(2);
    assert!(cli.run(&["search", "bob", "rain"]).fails_with(2).contains("no agent is named \"bob\""));
}

#[test]
fn a_long_content_shows_the_part_that_matched() {
    let cli = Cli::new();
    cli.create_agent("alice");
    let text = format!("{} the forecast says rain {}", "filler ".repeat(40), "more ".repeat(40));
    cli.lot("alice", "web_page", &text);
    let shown = cli.run(&["search", "alice", "forecast"]).ok().to_owned();
    let line = shown.lines().nth(1).unwrap();
    assert!(line.contains("…") && line.contains("the forecast says rain"), "{line}");
    assert!(line.chars().count() < 140, "one short line: {line}");
    assert_eq!(cli.json(&["search", "alice", "forecast"])["hits"][0]["content"], json!(text), "JSON is whole");
}

#[test]
fn a_recalled_lot_or_memory_is_never_found() {
    for (removal, mode) in
        [(None, None), (Some("--erase"), None), (None, Some("--strict")), (Some("--erase"), Some("--strict"))]
    {
        let cli = Cli::new();
        let [a, b, c, m1, m2, m3] = cli.seed_story("alice");
        assert_eq!(hit_ids(&cli, "alice", "rain rainy umbrella").len(), 3);
        let mut recall = vec!["recall", "alice", "3"];
        recall.extend(removal);
        recall.extend(mode);
        cli.run(&recall).ok();
        let gone = [c, m2, m3];
        let everything = "Pune rain rainy umbrella lives user carry profile live";
        let found = hit_ids(&cli, "alice", everything);
        assert_eq!(found.iter().copied().collect::<BTreeSet<_>>(), BTreeSet::from([a, b, m1]), "{recall:?}");
        for query in ["rain", "rainy", "umbrella carry"] {
            assert_eq!(hit_ids(&cli, "alice", query), Vec::<u64>::new(), "{recall:?} {query}");
        }
        let text = cli.run(&["search", "alice", everything]).ok().to_owned();
        for id in gone {
            assert!(!text.contains(&format!("[{id}]")), "{recall:?}: {text}");
        }
        // Reopened read-only, and after compaction, it stays so.
        let read_only = cli.run(&["--read-only", "--json", "search", "alice", "rain rainy"]);
        assert_eq!((read_only.status, read_only.stdout.as_str()), (Some(1), "{\"hits\":[]}\n"));
        cli.run(&["compact", "alice"]).ok();
        assert_eq!(hit_ids(&cli, "alice", everything).len(), 3);
        assert_eq!(hit_ids(&cli, "alice", "rain rainy umbrella"), Vec::<u64>::new());
        // A new memory with the same words is found: the words are not banned, the nodes are.
        let again = cli.remember("alice", "rain again", &[&a.to_string()]);
        assert_eq!(hit_ids(&cli, "alice", "rain"), vec![again]);
    }
}

#[test]
fn a_token_opens_the_agent_too() {
    let cli = Cli::new();
    let token = cli.create_agent("alice")["token"].as_str().unwrap().to_owned();
    cli.lot("alice", "note", "rain");
    assert_eq!(hit_ids(&cli, &token, "rain"), vec![1]);
}
