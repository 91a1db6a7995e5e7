//! `cheesedb demo`: the story, with the model from llm.conf or the scripted one.

use crate::arguments::DemoArguments;
use crate::commands::Context;
use crate::demo::config::{self, LLM_CONFIG_FILE};
use crate::demo::llm::ChatModel;
use crate::demo::model::Model;
use crate::demo::scripted::ScriptedModel;
use crate::demo::story;
use crate::failure::Failure;

/// Tells the story in a temporary folder of its own, so the user's agents are never touched.
pub fn run(arguments: DemoArguments, context: &Context) -> Result<(), Failure> {
    let configured = if arguments.scripted { None } else { config::load(&context.folder)? };
    let mut model: Box<dyn Model> = match configured {
        Some(configuration) => Box::new(ChatModel::new(configuration)),
        None => {
            if !arguments.scripted {
                context.printer.text_line(&format!(
                    "(no {LLM_CONFIG_FILE} in {}: a SCRIPTED model plays the part; see `cheesedb help demo`)",
                    context.folder.display()
                ))?;
            }
            Box::new(ScriptedModel)
        }
    };
    let folder = tempfile::Builder::new()
        .prefix("cheesedb-demo-")
        .tempdir()
        .map_err(|error| Failure::new(format!("cannot make a temporary folder for the demo: {error}")))?;
    let mut summary = story::tell(model.as_mut(), folder.path(), context.printer)?;
    if arguments.keep {
        let kept = folder.keep();
        context.printer.text_line(&format!("\nThe demo's files are kept in {}", kept.display()))?;
        summary["kept_folder"] = serde_json::json!(kept.display().to_string());
    }
    if context.printer.is_json() {
        context.printer.result(summary, String::new)?;
    }
    Ok(())
}
