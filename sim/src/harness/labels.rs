//! The labels the simulated agents give their lots; the trust rules of a run name them too.

/// The labels of the workload's lots.
pub(super) const LABELS: [&str; 5] = ["user_message", "web_page", "tool_result", "document", "ünïcödé source"];
