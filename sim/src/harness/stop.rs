//! Why a run of the simulator stops before its last step.

/// Why a run stops early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A broken promise.
    Violation(String),
    /// The engine reported damage that a silent fault caused: correct, and the end of the run.
    Detected(String),
}

/// The result of one step.
pub(crate) type Step = Result<(), Stop>;
