//! Engine errors in words a model can act on: what went wrong and what to do instead.

use cheesedb::Error;

/// An engine error in words for the model, with what to do instead.
pub fn explain(error: Error) -> String {
    match error {
        Error::UnknownId { id } => format!(
            "no source or memory has id {id} here; use the ids that add_source and remember returned, or list_memories"
        ),
        Error::DeadParent { id } => format!(
            "id {id} was forgotten (deleted) and can no longer be built on; name only sources and memories that are still valid"
        ),
        Error::AlreadyRecalled { id } => format!(
            "id {id} was already forgotten, and forgetting it again this way would change nothing (with erase, it erases any text left; once erased, there is none)"
        ),
        Error::OutcomeUnknown { operation, path, kind, source } => format!(
            "storage error{note} while {operation} {path}: {source}. The write may have been stored: check with get before retrying (a retry could store it twice; a forget with erase that was stored finishes its erasure when the memory is next opened)",
            note = crate::failure::kind_note(kind)
        ),
        Error::NoLegs => String::from("legs is empty: a memory must name what it was learned from, e.g. [[1]]"),
        Error::EmptyLeg { leg_index } => format!("legs[{leg_index}] is empty: each leg must list at least one id"),
        Error::InvalidName { reason } => format!("label refused: {reason}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use cheesedb::StorageOperation;

    use super::*;

    #[test]
    fn an_unknown_outcome_tells_the_model_to_check_before_retrying() {
        let refused = Error::from_storage(StorageOperation::Syncing, "segment", std::io::Error::other("EIO"));
        let Error::Io { operation, path, kind, source } = refused.clone() else { panic!("{refused:?}") };
        let explained = explain(Error::OutcomeUnknown { operation, path, kind, source });
        assert!(explained.contains("may have been stored: check with get before retrying"), "{explained}");
        let refused = explain(refused);
        assert!(!refused.contains("may have been stored"), "{refused}");
    }
}
