//! The story: an agent learns from a user message, a web page and a weather tool; the weather
//! tool turns out to be wrong. Its removal is told three ways, side by side:
//!
//! - A, a naive memory list: it deletes the source and nothing else;
//! - B, cheesedb with Untrusted: the source and what was learned from it are gone from the
//!   agent's view, the text stays in the files until compaction;
//! - C, cheesedb with Erase: as B, and the text is gone from the files too.
//!
//! Before and after the removal, the agent searches its memory for the bad fact, as a model
//! would before it answers. It ends with a table: is the model still shown the bad data, does a
//! search still bring it back, and is the bad text still on disk, by the same byte search as
//! `cheesedb find`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cheesedb::{Agent, Id, Leg, Mode, Removal, Store};
use indicatif::ProgressBar;
use serde_json::{json, Value};

use crate::demo::model::{MemoryView, Model, ProposedMemory, SourceView};
use crate::demo::naive::NaiveList;
use crate::demo::scripted::scripted_memories;
use crate::failure::Failure;
use crate::find::find_in_folder;
use crate::output::Printer;

/// The three sources, in the order they arrive; the third is the bad one.
pub const SOURCES: [(&str, &str); 3] = [
    ("user_message", "I live in Pune and I cycle to work every day."),
    ("web_page", "Profile page: this user lives in Pune, India."),
    ("weather_tool", "Forecast for Pune tomorrow: heavy rain all day."),
];
/// The id the bad source gets: it arrives third.
pub const BAD_SOURCE_ID: u64 = 3;
/// What the user asks before and after the bad source is removed.
pub const QUESTION: &str = "I am cycling to work tomorrow. Do I need a raincoat?";
/// The bytes searched for on disk: the word the bad source brought in.
pub const BAD_WORD: &str = "rain";
/// What the agent searches its memory for: the bad fact.
pub const SEARCH_QUERY: &str = "rain forecast";
/// The most hits the story's searches show.
const SEARCH_HITS_MAX: usize = 10;

/// One of the three ways of removing the bad source, and what came of it.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// How it was removed.
    pub way: &'static str,
    /// The model's answer afterwards, or why there is none.
    pub answer: Result<String, String>,
    /// Whether the model is still shown memories learned from the bad source.
    pub model_sees_bad_data: bool,
    /// What a search of the memory for [`SEARCH_QUERY`] finds afterwards, best first.
    pub search_hits: Vec<u64>,
    /// How often the bad word is in the files of this way's folder.
    pub occurrences_on_disk: u64,
}

/// An agent in a store of its own, in its own folder.
struct DemoAgent {
    folder: PathBuf,
    _store: Store,
    agent: Agent,
}

impl DemoAgent {
    fn create(folder: PathBuf) -> Result<DemoAgent, Failure> {
        let store = Store::open(&folder)?;
        let token = store.create_agent("demo")?;
        let agent = store.open_agent(&token)?;
        Ok(DemoAgent { folder, _store: store, agent })
    }

    fn alive_memories(&self) -> Result<Vec<MemoryView>, Failure> {
        let mut memories = Vec::new();
        for id in self.agent.memories()? {
            let node = self.agent.get(id)?;
            let text = String::from_utf8_lossy(node.content().unwrap_or_default()).into_owned();
            memories.push(MemoryView { id: id.get(), text });
        }
        Ok(memories)
    }

    /// The ids a search for [`SEARCH_QUERY`] finds, best first.
    fn search(&self) -> Result<Vec<u64>, Failure> {
        Ok(self.agent.search(SEARCH_QUERY, SEARCH_HITS_MAX)?.iter().map(|hit| hit.id.get()).collect())
    }
}

/// Tells the story in `folder` (which it fills) with `model`; prints it through `printer` and
/// returns its JSON summary.
pub fn tell(model: &mut dyn Model, folder: &Path, printer: Printer) -> Result<Value, Failure> {
    let say = |line: &str| printer.text_line(line);
    say(&format!("cheesedb demo: one bad source, removed three ways\nmodel: {}\n", model.description()))?;

    let mut naive = NaiveList::create(&folder.join("naive-list"))?;
    let untrusted = DemoAgent::create(folder.join("cheesedb-untrusted"))?;
    let erase = DemoAgent::create(folder.join("cheesedb-erase"))?;

    say("1. Three sources arrive; each is stored as a lot with a label.")?;
    let mut sources = Vec::new();
    for (label, text) in SOURCES {
        let id =
            same_id(untrusted.agent.add_lot(label, text.as_bytes())?, erase.agent.add_lot(label, text.as_bytes())?)?;
        naive.add_source(id, label, text)?;
        say(&format!("   [{id}] {label}: {text}"))?;
        sources.push(SourceView { id, label: label.to_owned(), text: text.to_owned() });
    }

    say("\n2. The model learns memories and says where each came from.")?;
    let (proposed, model_output_usable, fallback_reason) = match model.extract_memories(&sources) {
        Ok(proposed) => (proposed, true, None),
        Err(failure) => {
            say(&format!(
                "   The model's output was {failure}\n   Nothing it said was stored. So the story can still be told, the SCRIPTED memories are used from here on."
            ))?;
            (scripted_memories(), false, Some(failure.reason))
        }
    };
    let mut memories = Vec::new();
    for memory in &proposed {
        let legs = legs_of(memory);
        let id = same_id(
            untrusted.agent.remember(memory.text.as_bytes(), &legs)?,
            erase.agent.remember(memory.text.as_bytes(), &legs)?,
        )?;
        naive.add_memory(id, &memory.text)?;
        say(&format!("   [{id}] {:<52} <- from {}", memory.text, describe_legs(&memory.legs)))?;
        memories.push(MemoryView { id, text: memory.text.clone() });
    }
    let tainted: BTreeSet<u64> =
        untrusted.agent.preview_recall(Id::from(BAD_SOURCE_ID), Mode::Fair)?.iter().map(|id| id.get()).collect();

    say(&format!("\n3. The user asks: {QUESTION}"))?;
    let search_before = untrusted.search()?;
    say(&format!(
        "   A search of the memory for {SEARCH_QUERY:?} finds {}",
        describe_hits(&search_before, &sources, &memories)
    ))?;
    let before = answer(model, &memories);
    say(&format!("   The model sees {} memories and answers: {}", memories.len(), shown(&before)))?;

    say(&format!("\n4. The weather tool was wrong. Source [{BAD_SOURCE_ID}] is removed three ways."))?;
    let mut outcomes = Vec::new();

    naive.delete_source(BAD_SOURCE_ID)?;
    let context: Vec<MemoryView> =
        naive.memories().iter().map(|(id, text)| MemoryView { id: *id, text: text.clone() }).collect();
    let found = naive.search(SEARCH_QUERY);
    outcomes.push(outcome("A  naive memory list", model, &context, &tainted, found, &folder.join("naive-list"))?);
    say_outcome(&printer, outcomes.last(), "deletes the source only; the memories built on it stay")?;

    let removed = untrusted.agent.recall(Id::from(BAD_SOURCE_ID), Mode::Fair, Removal::Untrusted)?;
    let context = untrusted.alive_memories()?;
    outcomes.push(outcome(
        "B  cheesedb, Untrusted",
        model,
        &context,
        &tainted,
        untrusted.search()?,
        &untrusted.folder,
    )?);
    say_outcome(
        &printer,
        outcomes.last(),
        &format!("one recall removes [{BAD_SOURCE_ID}] and what was learned from it: {}", id_list(&removed)),
    )?;

    let removed = erase.agent.recall(Id::from(BAD_SOURCE_ID), Mode::Fair, Removal::Erase)?;
    let context = erase.alive_memories()?;
    outcomes.push(outcome("C  cheesedb, Erase", model, &context, &tainted, erase.search()?, &erase.folder)?);
    say_outcome(
        &printer,
        outcomes.last(),
        &format!(
            "the same recall, and the text of [{BAD_SOURCE_ID}] and {} is erased from the files",
            id_list(&removed)
        ),
    )?;

    say(&table(&outcomes))?;
    if model.is_scripted() {
        say(
            "(memories and answers by the SCRIPTED model; write llm.conf to use a real one: see `cheesedb help demo`)",
        )?;
    } else if !model_output_usable {
        say("(memories by the SCRIPTED model, because the configured model's output was unusable)")?;
    }
    let told = Told { sources: &sources, memories: &memories, tainted: &tainted, search_before: &search_before };
    Ok(summary(model, &told, model_output_usable, fallback_reason, &before, &outcomes))
}

fn same_id(first: Id, second: Id) -> Result<u64, Failure> {
    if first != second {
        return Err(Failure::new("the demo's two stores gave one write different ids"));
    }
    Ok(first.get())
}

fn legs_of(memory: &ProposedMemory) -> Vec<Leg> {
    memory.legs.iter().map(|leg| leg.iter().map(|id| Id::from(*id)).collect()).collect()
}

fn describe_legs(legs: &[Vec<u64>]) -> String {
    legs.iter()
        .map(|leg| format!("[{}]", leg.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")))
        .collect::<Vec<_>>()
        .join(" or ")
}

fn id_list(ids: &[Id]) -> String {
    if ids.is_empty() {
        return String::from("no memory");
    }
    ids.iter().map(|id| format!("[{id}]")).collect::<Vec<_>>().join(", ")
}

/// Search hits as people read them: `[3] weather_tool: …, [6] …`, or `nothing`.
fn describe_hits(hits: &[u64], sources: &[SourceView], memories: &[MemoryView]) -> String {
    if hits.is_empty() {
        return String::from("nothing");
    }
    let shown: Vec<String> = hits
        .iter()
        .map(|id| {
            let source = sources.iter().find(|source| source.id == *id);
            let memory = memories.iter().find(|memory| memory.id == *id);
            match (source, memory) {
                (Some(source), _) => format!("[{id}] {}: {}", source.label, source.text),
                (None, Some(memory)) => format!("[{id}] {}", memory.text),
                (None, None) => format!("[{id}]"),
            }
        })
        .collect();
    format!("{}:\n      {}", hits.len(), shown.join("\n      "))
}

fn answer(model: &mut dyn Model, memories: &[MemoryView]) -> Result<String, String> {
    model.answer(QUESTION, memories).map_err(|failure| format!("no usable answer: {failure}"))
}

fn shown(answer: &Result<String, String>) -> String {
    match answer {
        Ok(text) => format!("\"{text}\""),
        Err(reason) => format!("({reason})"),
    }
}

fn outcome(
    way: &'static str,
    model: &mut dyn Model,
    context: &[MemoryView],
    tainted: &BTreeSet<u64>,
    search_hits: Vec<u64>,
    folder: &Path,
) -> Result<Outcome, Failure> {
    let model_sees_bad_data = context.iter().any(|memory| tainted.contains(&memory.id));
    let answer = answer(model, context);
    let occurrences_on_disk = find_in_folder(folder, BAD_WORD.as_bytes(), &ProgressBar::hidden())?
        .matches
        .iter()
        .map(|found| found.occurrences)
        .sum();
    Ok(Outcome { way, answer, model_sees_bad_data, search_hits, occurrences_on_disk })
}

fn say_outcome(printer: &Printer, outcome: Option<&Outcome>, what_happened: &str) -> Result<(), Failure> {
    let Some(outcome) = outcome else { return Ok(()) };
    let on_disk = match outcome.occurrences_on_disk {
        0 => format!("a search of every byte finds no {BAD_WORD:?}"),
        count => format!("{BAD_WORD:?} is still in the files, {count} time(s)"),
    };
    let searched = match outcome.search_hits.as_slice() {
        [] => format!("a search of the memory for {SEARCH_QUERY:?} finds nothing"),
        hits => format!("a search of the memory for {SEARCH_QUERY:?} still finds {}", id_numbers(hits)),
    };
    printer.text_line(&format!(
        "   {}: {what_happened}.\n      the model answers: {}\n      {searched}\n      {on_disk}",
        outcome.way,
        shown(&outcome.answer)
    ))
}

fn id_numbers(ids: &[u64]) -> String {
    ids.iter().map(|id| format!("[{id}]")).collect::<Vec<_>>().join(", ")
}

fn yes_no(value: bool) -> &'static str {
    if value {
        "yes"
    } else {
        "no"
    }
}

/// The closing table.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut lines = vec![
        String::from("\n5. In short:"),
        format!(
            "   {:<26} {:<28} {:<24} {}",
            "",
            "model still sees bad data?",
            "search brings it back?",
            format!("bad text on disk ({BAD_WORD:?})?")
        ),
    ];
    for outcome in outcomes {
        let on_disk = match outcome.occurrences_on_disk {
            0 => String::from("no"),
            count => format!("yes ({count} times)"),
        };
        let searched = match outcome.search_hits.as_slice() {
            [] => String::from("no"),
            hits => format!("yes ({})", id_numbers(hits)),
        };
        lines.push(format!(
            "   {:<26} {:<28} {searched:<24} {on_disk}",
            outcome.way,
            yes_no(outcome.model_sees_bad_data)
        ));
    }
    lines.push(format!("   `cheesedb find {BAD_WORD}` runs the same byte search on your own data folder."));
    lines.join("\n")
}

/// What the story stored and found before the removal.
struct Told<'story> {
    sources: &'story [SourceView],
    memories: &'story [MemoryView],
    tainted: &'story BTreeSet<u64>,
    search_before: &'story [u64],
}

fn summary(
    model: &dyn Model,
    told: &Told<'_>,
    model_output_usable: bool,
    fallback_reason: Option<String>,
    before: &Result<String, String>,
    outcomes: &[Outcome],
) -> Value {
    let answer_json = |answer: &Result<String, String>| match answer {
        Ok(text) => json!({ "text": text }),
        Err(reason) => json!({ "text": null, "unusable": reason }),
    };
    json!({
        "model": { "scripted": model.is_scripted(), "description": model.description() },
        "model_output_usable": model_output_usable,
        "fallback_reason": fallback_reason,
        "sources": told.sources.iter().map(|source| json!({ "id": source.id, "label": source.label, "text": source.text })).collect::<Vec<_>>(),
        "memories": told.memories.iter().map(|memory| json!({ "id": memory.id, "text": memory.text, "from_bad_source": told.tainted.contains(&memory.id) })).collect::<Vec<_>>(),
        "bad_source": BAD_SOURCE_ID,
        "question": QUESTION,
        "answer_before": answer_json(before),
        "search_query": SEARCH_QUERY,
        "search_before": told.search_before,
        "searched_for": BAD_WORD,
        "ways": outcomes.iter().map(|outcome| json!({
            "way": outcome.way.get(3..).unwrap_or(outcome.way),
            "answer": answer_json(&outcome.answer),
            "model_sees_bad_data": outcome.model_sees_bad_data,
            "search_hits": outcome.search_hits,
            "bad_text_on_disk": outcome.occurrences_on_disk > 0,
            "occurrences_on_disk": outcome.occurrences_on_disk,
        })).collect::<Vec<_>>(),
    })
}
