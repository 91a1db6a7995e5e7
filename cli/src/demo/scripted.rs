//! The scripted model: what a capable model would do with the story, fixed in advance, so the
//! demo runs on a machine with no model server. It is always labelled as scripted on screen.

use crate::demo::model::{MemoryView, Model, ModelFailure, ProposedMemory, SourceView};

/// The word the scripted answer looks for in the memories it is shown.
const FORECAST_WORD: &str = "rain";

/// A stand-in model with fixed memories and a rule for its answer.
#[derive(Debug, Default)]
pub struct ScriptedModel;

/// The memories the scripted model learns from the story's three sources (ids 1 to 3):
/// 4 from 1 or 2, 5 from 1, 6 from 3, and 7 from 4 and 6 together.
pub fn scripted_memories() -> Vec<ProposedMemory> {
    let memory = |text: &str, legs: &[&[u64]]| ProposedMemory {
        text: text.to_owned(),
        legs: legs.iter().map(|leg| leg.to_vec()).collect(),
    };
    vec![
        memory("The user lives in Pune.", &[&[1], &[2]]),
        memory("The user cycles to work every day.", &[&[1]]),
        memory("Heavy rain is forecast for Pune tomorrow.", &[&[3]]),
        memory("The user will need a raincoat on tomorrow's ride.", &[&[4, 6]]),
    ]
}

impl Model for ScriptedModel {
    fn description(&self) -> String {
        String::from("SCRIPTED model (no llm.conf: its memories and answers are fixed in advance)")
    }

    fn is_scripted(&self) -> bool {
        true
    }

    fn extract_memories(&mut self, _sources: &[SourceView]) -> Result<Vec<ProposedMemory>, ModelFailure> {
        Ok(scripted_memories())
    }

    fn answer(&mut self, _question: &str, memories: &[MemoryView]) -> Result<String, ModelFailure> {
        let knows_forecast = memories.iter().any(|memory| memory.text.to_lowercase().contains(FORECAST_WORD));
        Ok(String::from(if knows_forecast {
            "Yes, take a raincoat: heavy rain is forecast for Pune tomorrow."
        } else {
            "I have no forecast for tomorrow in memory, so I cannot say whether you will need a raincoat."
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_follows_what_the_memories_say() {
        let mut model = ScriptedModel;
        let rainy = [MemoryView { id: 6, text: String::from("Heavy rain tomorrow.") }];
        assert!(model.answer("q", &rainy).unwrap().starts_with("Yes"));
        assert!(model.answer("q", &[]).unwrap().contains("no forecast"));
    }
}
