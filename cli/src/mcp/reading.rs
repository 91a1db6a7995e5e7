//! What read tracking means for one MCP session: the ids the model was shown through `get` and
//! `search_memories` since its previous `remember` become parents of the next memory it
//! remembers, added to each leg it declared. A model that forgets to name what it read then
//! still leaves a memory that is recalled with its source. Listing does not count as reading.
//!
//! The reads are kept by the library's [`ReadTracking`], across the opens of the agent (each
//! tool call opens it anew). What is the MCP server's own is the answer to a refusal: the model
//! is told why, in its words, and the reads that caused it are let go.

use cheesedb::limits::PARENTS_PER_LEG_MAX;
use cheesedb::{Agent, Error, Id, Leg, Limit, ReadTracking};

use crate::mcp::explain::explain;

/// A memory just remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// Its id.
    pub id: Id,
    /// The ids read tracking added that not every leg declared.
    pub tracked_parents: Vec<Id>,
}

/// Remembers `content` in `agent`, learned through `legs` and, with `tracking` on, through
/// everything read since the previous memory; those reads are then forgotten.
///
/// A refusal because of the reads (too many, or one forgotten since it was read) says so, and
/// lets go of the reads that caused it: the model is told, so a second call is its choice,
/// made knowing what is no longer tracked.
pub fn remember(tracking: &ReadTracking, agent: &Agent, content: &[u8], legs: &[Leg]) -> Result<Remembered, String> {
    let Some(reads) = tracking.reads() else {
        let id = agent.remember(content, legs).map_err(explain)?;
        return Ok(Remembered { id, tracked_parents: Vec::new() });
    };
    match agent.remember_tracked(content, legs, &reads) {
        Ok(id) => {
            let declared_everywhere = |id: &Id| legs.iter().all(|leg| leg.parents().contains(id));
            let tracked_parents = reads.ids().iter().copied().filter(|id| !declared_everywhere(id)).collect();
            tracking.forget(&reads);
            Ok(Remembered { id, tracked_parents })
        }
        Err(Error::LimitExceeded { what: Limit::ReadSetIds | Limit::ParentsPerLegWithReadSet, .. }) => {
            tracking.forget(&reads);
            Err(too_many_reads(reads.len()))
        }
        Err(Error::DeadParent { id }) if reads.ids().contains(&id) && !declared(legs, id) => {
            tracking.forget_id(id);
            Err(forgotten_read(id))
        }
        Err(error) => Err(explain(error)),
    }
}

fn declared(legs: &[Leg], id: Id) -> bool {
    legs.iter().any(|leg| leg.parents().contains(&id))
}

fn too_many_reads(read: usize) -> String {
    let shown = if read > PARENTS_PER_LEG_MAX { format!("more than {PARENTS_PER_LEG_MAX}") } else { read.to_string() };
    format!(
        "nothing was stored: since your last remember you read {shown} sources and memories (with get and search_memories), and each leg of a memory, with everything read added to it, may hold at most {PARENTS_PER_LEG_MAX} ids. Those reads are no longer tracked: call remember again, naming in legs the ids this memory really comes from"
    )
}

fn forgotten_read(id: Id) -> String {
    format!(
        "nothing was stored: you read id {id} in this session and it has since been forgotten (deleted), so what you remember now may rest on it. If this memory does not come from it, call remember again: id {id} is no longer tracked"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb::{Mode, Removal, Store};

    fn agent() -> (tempfile::TempDir, Agent) {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(folder.path()).unwrap();
        let agent = store.open_agent(&store.create_agent("a").unwrap()).unwrap();
        (folder, agent)
    }

    fn read_ids(tracking: &ReadTracking) -> Vec<Id> {
        tracking.reads().map(|reads| reads.ids().to_vec()).unwrap_or_default()
    }

    #[test]
    fn reads_join_the_next_memory_and_are_then_forgotten() {
        let (_folder, agent) = agent();
        let read = agent.add_lot("web_page", b"read").unwrap();
        let declared = agent.add_lot("note", b"declared").unwrap();
        let tracking = ReadTracking::new(true);
        tracking.note([read, declared]);
        let first = remember(&tracking, &agent, b"m", &[Leg::from([declared])]).unwrap();
        assert_eq!(first.tracked_parents, [read]);
        assert_eq!(agent.get(first.id).unwrap().tracked_parents(), [read]);
        assert!(read_ids(&tracking).is_empty());
        let second = remember(&tracking, &agent, b"n", &[Leg::from([declared])]).unwrap();
        assert!(second.tracked_parents.is_empty());
    }

    #[test]
    fn off_means_only_the_declared_legs() {
        let (_folder, agent) = agent();
        let read = agent.add_lot("web_page", b"read").unwrap();
        let tracking = ReadTracking::new(false);
        tracking.note([read]);
        assert!(read_ids(&tracking).is_empty());
        let declared = agent.add_lot("note", b"declared").unwrap();
        let memory = remember(&tracking, &agent, b"m", &[Leg::from([declared])]).unwrap();
        assert!(agent.get(memory.id).unwrap().tracked_parents().is_empty());
    }

    #[test]
    fn a_forgotten_read_is_refused_once_then_let_go() {
        let (_folder, agent) = agent();
        let read = agent.add_lot("web_page", b"bad").unwrap();
        let declared = agent.add_lot("note", b"fine").unwrap();
        let tracking = ReadTracking::new(true);
        tracking.note([read]);
        agent.recall(read, Mode::Fair, Removal::Untrusted).unwrap();
        let refused = remember(&tracking, &agent, b"m", &[Leg::from([declared])]).unwrap_err();
        assert!(refused.contains("nothing was stored") && refused.contains(&read.to_string()), "{refused}");
        assert!(remember(&tracking, &agent, b"m", &[Leg::from([declared])]).is_ok());
    }

    #[test]
    fn too_many_reads_are_refused_once_then_let_go() {
        let (_folder, agent) = agent();
        let ids: Vec<Id> =
            (0..=PARENTS_PER_LEG_MAX).map(|index| agent.add_lot("x", index.to_string().as_bytes()).unwrap()).collect();
        let tracking = ReadTracking::new(true);
        tracking.note(ids.iter().copied());
        let refused = remember(&tracking, &agent, b"m", &[Leg::from([ids[0]])]).unwrap_err();
        assert!(refused.contains(&format!("more than {PARENTS_PER_LEG_MAX}")), "{refused}");
        assert!(read_ids(&tracking).is_empty());
        assert!(remember(&tracking, &agent, b"m", &[Leg::from([ids[0]])]).is_ok());
    }
}
