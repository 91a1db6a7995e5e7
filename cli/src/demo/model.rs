//! What the story asks of a model, and the checks its replies must pass before anything it
//! says is stored. A model can name only ids that exist: it cannot invent a source.

use serde_json::Value;

/// A source as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceView {
    /// Its id in the store.
    pub id: u64,
    /// Its label, e.g. `weather_tool`.
    pub label: String,
    /// Its text.
    pub text: String,
}

/// A memory as the model sees it when answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryView {
    /// Its id in the store.
    pub id: u64,
    /// Its text.
    pub text: String,
}

/// A memory the model proposes, checked: its legs name only sources and earlier memories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedMemory {
    /// What was learned.
    pub text: String,
    /// Alternatives, each a set of ids that together support it.
    pub legs: Vec<Vec<u64>>,
}

/// A model that stayed unusable: why, after how many attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFailure {
    /// What was wrong with the last attempt.
    pub reason: String,
    /// How many attempts were made.
    pub attempts: u32,
}

impl std::fmt::Display for ModelFailure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.attempts {
            0 => write!(formatter, "{}", self.reason),
            attempts => write!(formatter, "unusable after {attempts} attempts: {}", self.reason),
        }
    }
}

/// The two things the story asks of a model.
pub trait Model {
    /// How the model is shown on screen.
    fn description(&self) -> String;
    /// Whether it is the scripted stand-in.
    fn is_scripted(&self) -> bool;
    /// Memories learned from `sources`, each naming what it came from. Ids of proposed
    /// memories follow the sources' ids in order.
    fn extract_memories(&mut self, sources: &[SourceView]) -> Result<Vec<ProposedMemory>, ModelFailure>;
    /// An answer to `question` from `memories` alone.
    fn answer(&mut self, question: &str, memories: &[MemoryView]) -> Result<String, ModelFailure>;
}

/// The most memories the demo takes from one extraction.
pub const MEMORIES_MAX: usize = 8;
/// The longest memory text accepted, in characters.
pub const MEMORY_TEXT_MAX_CHARACTERS: usize = 300;
/// The longest answer shown, in characters.
pub const ANSWER_MAX_CHARACTERS: usize = 300;
const LEGS_MAX: usize = 4;
const PARENTS_MAX: usize = 8;

/// Finds the first JSON object or array in a model's reply (models wrap JSON in prose or code
/// fences) that holds memories, and checks every memory against the ids that exist.
pub fn parse_extraction(reply: &str, sources: &[SourceView]) -> Result<Vec<ProposedMemory>, String> {
    let memories = find_memories_json(reply)?;
    if memories.is_empty() {
        return Err(String::from("the list of memories is empty"));
    }
    if memories.len() > MEMORIES_MAX {
        return Err(format!("{} memories were given; at most {MEMORIES_MAX} are wanted", memories.len()));
    }
    let first_memory_id = sources.iter().map(|source| source.id).max().unwrap_or(0) + 1;
    let mut accepted: Vec<ProposedMemory> = Vec::new();
    for (index, memory) in memories.iter().enumerate() {
        let own_id = first_memory_id + index as u64;
        let is_known =
            |id: u64| sources.iter().any(|source| source.id == id) || (first_memory_id..own_id).contains(&id);
        accepted.push(check_memory(memory, own_id, is_known).map_err(|problem| format!("memory {own_id}: {problem}"))?);
    }
    Ok(accepted)
}

fn find_memories_json(reply: &str) -> Result<Vec<Value>, String> {
    let starts = reply.char_indices().filter(|(_, character)| matches!(character, '{' | '['));
    for (start, _) in starts.take(64) {
        let mut values = serde_json::Deserializer::from_str(&reply[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(mut object))) => {
                if let Some(Value::Array(memories)) = object.remove("memories") {
                    return Ok(memories);
                }
            }
            Some(Ok(Value::Array(memories))) if memories.iter().all(Value::is_object) => return Ok(memories),
            _ => {}
        }
    }
    Err(String::from("no JSON object with a \"memories\" array was found in the reply"))
}

fn check_memory(memory: &Value, own_id: u64, is_known: impl Fn(u64) -> bool) -> Result<ProposedMemory, String> {
    let text = match memory.get("text") {
        Some(Value::String(text)) if !text.trim().is_empty() => text.trim().to_owned(),
        _ => return Err(String::from("\"text\" must be a non-empty string")),
    };
    if text.chars().count() > MEMORY_TEXT_MAX_CHARACTERS {
        return Err(format!("the text is longer than {MEMORY_TEXT_MAX_CHARACTERS} characters"));
    }
    let Some(Value::Array(legs)) = memory.get("legs") else {
        return Err(String::from("\"legs\" must be an array of arrays of ids, e.g. [[1], [2]]"));
    };
    if legs.is_empty() || legs.len() > LEGS_MAX {
        return Err(format!("\"legs\" must hold 1 to {LEGS_MAX} legs"));
    }
    let mut checked = Vec::new();
    for leg in legs {
        let Some(parents) = leg.as_array().filter(|parents| !parents.is_empty() && parents.len() <= PARENTS_MAX) else {
            return Err(format!("each leg must be a non-empty array of at most {PARENTS_MAX} ids"));
        };
        let mut ids = Vec::new();
        for parent in parents {
            match parent.as_u64() {
                Some(id) if is_known(id) => ids.push(id),
                Some(id) if id >= own_id => {
                    return Err(format!("it names {id}, which is not an earlier source or memory"))
                }
                _ => return Err(format!("it names {parent}, which is no source or earlier memory")),
            }
        }
        ids.sort_unstable();
        ids.dedup();
        checked.push(ids);
    }
    Ok(ProposedMemory { text, legs: checked })
}

/// Checks an answer: some words, and not the prompt repeated back (small models often echo
/// it). The answer is folded onto one line and a long one is cut for the screen.
pub fn check_answer(reply: &str, question: &str) -> Result<String, String> {
    let answer = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    if !answer.chars().any(char::is_alphabetic) {
        return Err(String::from("the answer is empty"));
    }
    if answer.contains(question.trim()) {
        return Err(String::from("the reply repeats the question instead of answering it"));
    }
    let mut shown: String = answer.chars().take(ANSWER_MAX_CHARACTERS).collect();
    if answer.chars().count() > ANSWER_MAX_CHARACTERS {
        shown.push_str(" …");
    }
    Ok(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources() -> Vec<SourceView> {
        (1..=3).map(|id| SourceView { id, label: format!("s{id}"), text: String::from("t") }).collect()
    }

    #[test]
    fn json_inside_prose_and_fences_is_found() {
        let reply = "Sure! Here it is:\n```json\n{\"memories\": [{\"text\": \"a\", \"legs\": [[1], [2]]}, {\"text\": \"b\", \"legs\": [[4, 3]]}]}\n```";
        let memories = parse_extraction(reply, &sources()).unwrap();
        assert_eq!(memories[0].legs, vec![vec![1], vec![2]]);
        assert_eq!(memories[1].legs, vec![vec![3, 4]]);
    }

    #[test]
    fn invented_or_later_ids_are_refused() {
        let invented = r#"{"memories": [{"text": "a", "legs": [[9]]}]}"#;
        assert!(parse_extraction(invented, &sources()).is_err());
        let forward = r#"{"memories": [{"text": "a", "legs": [[5]]}, {"text": "b", "legs": [[1]]}]}"#;
        assert!(parse_extraction(forward, &sources()).is_err());
        let own = r#"{"memories": [{"text": "a", "legs": [[4]]}]}"#;
        assert!(parse_extraction(own, &sources()).is_err());
    }

    #[test]
    fn junk_is_refused_with_a_reason() {
        for reply in [
            "",
            "I live in Pune",
            "{\"memories\": []}",
            "{\"memories\": [{\"text\": \"\", \"legs\": [[1]]}]}",
            "{\"memories\": [{\"text\": \"a\", \"legs\": []}]}",
            "{\"memories\": [{\"text\": \"a\", \"legs\": [\"1\"]}]}",
        ] {
            assert!(parse_extraction(reply, &sources()).is_err(), "{reply}");
        }
    }

    #[test]
    fn answers_need_words_must_not_echo_and_are_cut_for_the_screen() {
        let question = "Do I need a raincoat?";
        assert!(check_answer("  \n ", question).is_err());
        assert!(check_answer("...", question).is_err());
        assert_eq!(check_answer(" Yes.\n\n  Take one. ", question).unwrap(), "Yes. Take one.");
        assert!(check_answer(&"a".repeat(2000), question).unwrap().ends_with('…'));
        assert!(check_answer("[4] memory\nQuestion: Do I need a raincoat? [/INST]", question).is_err());
    }
}
