//! `cheesedb verify AGENT [--expect FINGERPRINT]`: check the whole history.

use cheesedb::Fingerprint;
use serde_json::json;

use crate::arguments::VerifyArguments;
use crate::commands::Context;
use crate::failure::Failure;
use crate::progress::spinner;
use crate::session::open_agent;

/// Re-reads and checks every record and prints `{"fingerprint": "..."}`; with `--expect`, also
/// fails unless the history still passes through the kept fingerprint.
pub fn run(arguments: VerifyArguments, context: &Context) -> Result<(), Failure> {
    let expected = match &arguments.expect {
        Some(text) => Some(text.parse::<Fingerprint>().map_err(|_| {
            Failure::new(format!("--expect {text:?} is not a fingerprint (it looks like 12- and 64 hex digits)"))
        })?),
        None => None,
    };
    if let Some(space) = &arguments.space {
        return crate::commands::space::verify(context, &arguments.agent, space);
    }
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let progress = spinner("verifying");
    let checked = match &expected {
        Some(kept) => agent.verify_extends(kept),
        None => agent.verify(),
    };
    progress.finish_and_clear();
    let fingerprint = checked.map_err(|failure| Failure::from(failure).context("verification failed"))?;
    let mut value = json!({ "fingerprint": fingerprint.to_string() });
    if let Some(kept) = &expected {
        value["extends"] = json!(kept.to_string());
    }
    context.printer.result(value, || {
        let mut text = format!("history verified: {} records\nfingerprint: {fingerprint}", fingerprint.records);
        match &expected {
            Some(kept) => text.push_str(&format!("\nthe history still passes through {kept}")),
            None => text.push_str(&format!(
                "\nkeep it somewhere else; later check with: cheesedb verify {} --expect {fingerprint}",
                arguments.agent
            )),
        }
        text
    })
}
