//! Replaying one committed record into the recall graph, as open and verify both do.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::record::{Body, Record};
use crate::corrupt_reason::CorruptReason;
use crate::engine::shared_nodes::SharedNodes;
use crate::engine::space_ledger::{check_agent_record, SpaceLedger};
use crate::error::Error;
use crate::graph::{Graph, Location, RecallPlan};
use crate::id::{Mode, Removal};

/// Applies one committed record to the graph, and to the ledger of a space (`space`), checking
/// that the history is possible: ids in order, parents alive, recalls of known nodes, and in a
/// space every change by a member whose role allowed it.
pub(super) fn apply_record(
    graph: &mut Graph,
    mut space: Option<&mut SpaceLedger>,
    shared: &mut SharedNodes,
    record: &Record<'_>,
    offset: u64,
    path: &str,
) -> Result<(), Error> {
    let corrupt = |reason| Error::Corrupt { file: String::from(path), offset, reason };
    match space.as_deref_mut() {
        Some(ledger) => ledger.apply(record).map_err(corrupt)?,
        None => check_agent_record(record).map_err(corrupt)?,
    }
    let location = Location::in_segment(record.identity.segment, offset)?;
    match record.body {
        Body::Lot { id, content, .. } => {
            if id != graph.next_id() {
                return Err(corrupt(CorruptReason::LotIdOutOfOrder));
            }
            graph.add_lot(location, content.present.is_some())?;
        }
        Body::Memory { id, legs, content, .. } => {
            if id != graph.next_id() {
                return Err(corrupt(CorruptReason::MemoryIdOutOfOrder));
            }
            if legs.count() == 0 {
                return Err(corrupt(CorruptReason::MemoryWithoutLeg));
            }
            for leg in legs.iter() {
                let mut empty = true;
                for parent in leg {
                    empty = false;
                    graph.check_parent(parent).map_err(|_| corrupt(CorruptReason::MemoryOnDeadOrUnknownParent))?;
                }
                if empty {
                    return Err(corrupt(CorruptReason::MemoryWithEmptyLeg));
                }
            }
            graph.add_memory(legs.iter(), location, content.present.is_some())?;
        }
        Body::Recall { id, mode, removal } => {
            // The same plan the live call made: a repeated recall applies its own mode and removal.
            let plan = graph.plan_recall(id, mode, removal).map_err(|_| corrupt(CorruptReason::RecallOfUnknownId))?;
            apply_recall_plan(graph, space, &plan, mode, removal);
        }
        Body::RecallAll { ids, mode, removal } => {
            let ids: Vec<u64> = ids.iter().collect();
            let plan =
                graph.plan_recall_of_all(&ids, mode, removal).map_err(|_| corrupt(CorruptReason::RecallOfUnknownId))?;
            apply_recall_plan(graph, space, &plan, mode, removal);
        }
        Body::Shared { id, space, space_id } => {
            if id != graph.next_id() {
                return Err(corrupt(CorruptReason::SharedNodeIdOutOfOrder));
            }
            graph.add_shared(location)?;
            shared.note(space, space_id, id);
        }
        Body::Vector { id, content } => {
            if !graph.is_alive(id) {
                return Err(corrupt(CorruptReason::VectorOfDeadOrUnknownNode));
            }
            if content.present.is_some() {
                graph.set_vector_on_disk(id, true);
            }
        }
        Body::Commit { .. } | Body::Seal { .. } | Body::Member { .. } => {}
    }
    Ok(())
}

/// Applies a recall's plan to the graph, and in a space notes how each node it reaches was
/// recalled, for the members to apply to what they built on it. A Strict recall reaches, in a
/// member, everything with the recalled node in its history: through the space's nodes that
/// had died before too, so those are noted as recalled Strict.
pub(super) fn apply_recall_plan(
    graph: &mut Graph,
    space: Option<&mut SpaceLedger>,
    plan: &RecallPlan,
    mode: Mode,
    removal: Removal,
) {
    graph.apply_recall(plan);
    if let Some(ledger) = space {
        let history = if mode == Mode::Strict { graph.descendants_of_all(&plan.recalled) } else { Vec::new() };
        ledger.note_recall(plan, mode, removal, &history);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::record::{ContentBlock, Identity};

    fn vector_of(id: u64) -> Record<'static> {
        let content = ContentBlock {
            digest: [0; 32],
            present: Some((&[1; 16], &[0, 0, 128, 63])),
            erased_padding_bytes: 0,
            sealed: false,
        };
        let identity = Identity { agent: 1, segment: 1, sequence: 2 };
        Record { identity, body: Body::Vector { id, content }, author: None }
    }

    #[test]
    fn a_vector_must_name_an_alive_node_and_marks_it() {
        let mut graph = Graph::default();
        let lot = graph.add_lot(Location { segment: 1, offset: 96 }, true).unwrap();
        assert!(!graph.is_vector_on_disk(lot));
        apply_record(&mut graph, None, &mut SharedNodes::default(), &vector_of(lot), 200, "segment").unwrap();
        assert!(graph.is_vector_on_disk(lot));
        let unknown = apply_record(&mut graph, None, &mut SharedNodes::default(), &vector_of(lot + 1), 300, "segment");
        let expected = Error::Corrupt {
            file: String::from("segment"),
            offset: 300,
            reason: CorruptReason::VectorOfDeadOrUnknownNode,
        };
        assert_eq!(unknown, Err(expected));
    }
}
