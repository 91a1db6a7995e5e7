//! What verification adds for an encrypted agent: the key table agrees with the log (no key
//! left for a node an Erase covers, a key that opens for every node whose content is readable),
//! and passes over the whole log get an opener for its sealed contents.

use alloc::string::String;
use alloc::sync::Arc;

use super::AgentEngine;
use crate::codec::key_table_file::key_slot_offset;
use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::graph::Graph;
use crate::seal::ContentOpener;
use crate::storage::Storage;

impl<S: Storage> AgentEngine<S> {
    /// What opens this agent's sealed contents: `None` for a plaintext agent.
    pub(super) fn content_opener(&self) -> Result<Option<Arc<ContentOpener>>, Error> {
        self.sealing.as_ref().map(|sealing| sealing.opener().map(Arc::new)).transpose()
    }

    /// Checks every slot of the key table against the graph, then marks, in `replayed` (the
    /// graph rebuilt from the log), the nodes whose keys an Erase destroyed as holding no
    /// readable content, as the engine's graph does: their sealed bytes are still in the log.
    /// `opener` is the one the pass over the log used, if any: the key table is then not read
    /// a second time.
    pub(super) fn check_keys(&self, replayed: &mut Graph, opener: Option<&ContentOpener>) -> Result<(), Error> {
        let Some(sealing) = self.sealing.as_ref() else { return Ok(()) };
        let read;
        let opener = match opener {
            Some(opener) => opener,
            None => {
                read = sealing.opener()?;
                &read
            }
        };
        let path = sealing.key_table_path();
        let corrupt = |id: u64, reason| Error::Corrupt {
            file: String::from(path),
            offset: key_slot_offset(id).unwrap_or(0),
            reason,
        };
        for id in 1..self.graph.next_id() {
            let secret = opener.secret(id).map_err(|reason| corrupt(id, reason))?;
            let erased = self.graph.is_erase_requested(id);
            if erased && secret.is_some() {
                return Err(corrupt(id, CorruptReason::KeyKeptForErasedNode));
            }
            if !erased && self.graph.is_content_on_disk(id) && secret.is_none() {
                return Err(corrupt(id, CorruptReason::KeyMissingForReadableNode));
            }
            if erased && replayed.is_erase_requested(id) {
                let location = replayed.location(id)?;
                replayed.set_location(id, location, false);
                replayed.set_vector_on_disk(id, false);
            }
        }
        Ok(())
    }
}
