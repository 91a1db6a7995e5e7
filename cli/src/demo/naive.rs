//! The plain memory list the story compares cheesedb with: sources and memories in one JSON
//! file, with no record of which memory came from which source. Deleting a source can only
//! delete the source.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::failure::Failure;

/// The list's file in its folder.
const LIST_FILE: &str = "memory.json";

/// A memory list that forgets a source but not what was learned from it.
#[derive(Debug)]
pub struct NaiveList {
    path: PathBuf,
    sources: Vec<(u64, String, String)>,
    memories: Vec<(u64, String)>,
}

impl NaiveList {
    /// An empty list kept in `folder`.
    pub fn create(folder: &Path) -> Result<NaiveList, Failure> {
        fs::create_dir_all(folder)
            .map_err(|error| Failure::new(format!("cannot create {}: {error}", folder.display())))?;
        let list = NaiveList { path: folder.join(LIST_FILE), sources: Vec::new(), memories: Vec::new() };
        list.save()?;
        Ok(list)
    }

    /// Adds a source.
    pub fn add_source(&mut self, id: u64, label: &str, text: &str) -> Result<(), Failure> {
        self.sources.push((id, label.to_owned(), text.to_owned()));
        self.save()
    }

    /// Adds a memory; where it came from is not kept.
    pub fn add_memory(&mut self, id: u64, text: &str) -> Result<(), Failure> {
        self.memories.push((id, text.to_owned()));
        self.save()
    }

    /// Deletes the source `id`, and only it.
    pub fn delete_source(&mut self, id: u64) -> Result<(), Failure> {
        self.sources.retain(|(source, _, _)| *source != id);
        self.save()
    }

    /// The memories, all of them: nothing says which came from a deleted source.
    pub fn memories(&self) -> &[(u64, String)] {
        &self.memories
    }

    /// The sources and memories holding a word of `query` (compared lower-cased), in the
    /// order they were added: a deleted source's memories are still found.
    pub fn search(&self, query: &str) -> Vec<u64> {
        let wanted: Vec<String> = words(query).map(str::to_lowercase).collect();
        let holds_a_word = |text: &str| words(text).any(|word| wanted.contains(&word.to_lowercase()));
        let sources = self.sources.iter().filter(|(_, _, text)| holds_a_word(text)).map(|(id, _, _)| *id);
        let memories = self.memories.iter().filter(|(_, text)| holds_a_word(text)).map(|(id, _)| *id);
        let mut found: Vec<u64> = sources.chain(memories).collect();
        found.sort_unstable();
        found
    }

    fn save(&self) -> Result<(), Failure> {
        let sources: Vec<_> =
            self.sources.iter().map(|(id, label, text)| json!({ "id": id, "label": label, "text": text })).collect();
        let memories: Vec<_> = self.memories.iter().map(|(id, text)| json!({ "id": id, "text": text })).collect();
        let text = serde_json::to_string_pretty(&json!({ "sources": sources, "memories": memories }))
            .map_err(|error| Failure::new(error.to_string()))?;
        fs::write(&self.path, text)
            .map_err(|error| Failure::new(format!("cannot write {}: {error}", self.path.display())))
    }
}

/// The runs of letters and digits of `text`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|character: char| !character.is_alphanumeric()).filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deleting_a_source_keeps_what_was_learned_from_it() {
        let folder = tempfile::tempdir().unwrap();
        let mut list = NaiveList::create(folder.path()).unwrap();
        list.add_source(1, "weather_tool", "storm").unwrap();
        list.add_memory(2, "a storm is coming").unwrap();
        list.delete_source(1).unwrap();
        let file = fs::read_to_string(folder.path().join(LIST_FILE)).unwrap();
        assert!(file.contains("a storm is coming"));
        assert!(!file.contains("\"storm\""));
        assert_eq!(list.memories().len(), 1);
        assert_eq!(list.search("Storm warning"), vec![2]);
    }
}
