//! Rewriting segments without the text of recalled nodes: compaction.
//!
//! A segment is rewritten whole into a temporary file (records copied, recalled ones without
//! salt, content or the zero padding of an erasure in place, commit markers recomputed for the
//! new offsets), synced, renamed over the old one, and the folder synced. The chain commits to
//! digests, not text, so it still verifies. Erase does not move records: see `redact`.

use alloc::vec::Vec;

use super::active_log::PoisonCause;
use super::files::read_all;
use super::{io_error, outcome_unknown, AgentEngine};
use crate::codec::record::{commit_marker, Body};
use crate::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::convert::segment_offset_usize;
use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::graph::Location;
use crate::log::names::segment_path;
use crate::log::scan::{scan_records, Expected};
use crate::storage::Storage;

impl<S: Storage> AgentEngine<S> {
    /// Rewrites the files without the text of recalled nodes. Their ids, labels, legs and
    /// digests stay, so the history still verifies.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted, `Error::Poisoned` after a failed write.
    /// - `Error::Corrupt` when a segment to rewrite (or, after a snapshot load, the log) fails
    ///   a check; `Error::Io` when the storage fails before a segment was replaced,
    ///   `Error::OutcomeUnknown` once one may be. Each of these poisons the engine.
    pub fn compact(&mut self) -> Result<(), Error> {
        let mut first = true;
        loop {
            match self.compact_step() {
                Ok(true) => return Ok(()),
                Ok(false) => first = false,
                // Once one segment is replaced, the compaction is partly on disk: a later
                // failure leaves its outcome unknown, never refused.
                Err(error) if !first => return Err(outcome_unknown(error)),
                Err(error) => return Err(error),
            }
        }
    }

    /// One step of a compaction: rewrites the first segment that holds text or vectors of a
    /// recalled node, so that a host compacting in the background holds the engine for one
    /// segment at a time. Returns whether the compaction is finished (no such segment is left).
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::compact`].
    pub fn compact_step(&mut self) -> Result<bool, Error> {
        self.check_writable()?;
        self.confirm_graph_before_destroying()?;
        let result = self.rewrite_one_segment();
        if result.is_err() {
            self.log.poison(PoisonCause::CompactionFailed);
        }
        result
    }

    /// Recalled lots and memories whose text is still in the files: what a compaction would
    /// take out.
    #[must_use]
    pub fn dead_text_nodes(&self) -> u64 {
        self.graph.doomed_text_count()
    }

    /// Whether automatic compaction should start: `Options::auto_compact_dead_nodes` is set and
    /// at least that many recalled nodes keep their text. Costs nothing: the graph keeps the
    /// count.
    #[must_use]
    pub fn compaction_due(&self) -> bool {
        let threshold = self.options.auto_compact_dead_nodes;
        threshold > 0 && self.check_writable().is_ok() && self.dead_text_nodes() >= threshold
    }

    /// The segments holding text or vectors of recalled nodes, ascending, and the recalled
    /// nodes whose vector records may still hold numbers.
    fn segments_to_compact(&mut self) -> Result<(Vec<u64>, Vec<u64>), Error> {
        let mut segments: Vec<u64> = self
            .graph
            .content_to_remove(true)
            .filter_map(|id| self.graph.location(id).ok())
            .map(|location| u64::from(location.segment))
            .collect();
        let doomed_vectors: Vec<u64> = self.graph.vectors_to_remove(true).collect();
        if !doomed_vectors.is_empty() {
            let index = self.search_index()?;
            for id in &doomed_vectors {
                segments.extend(index.vector_records_of(*id).iter().map(|location| u64::from(location.segment)));
            }
        }
        segments.sort_unstable();
        segments.dedup();
        Ok((segments, doomed_vectors))
    }

    /// Rewrites the first segment holding text or vectors of a recalled node; returns whether
    /// none is left after it.
    fn rewrite_one_segment(&mut self) -> Result<bool, Error> {
        let (segments, doomed_vectors) = self.segments_to_compact()?;
        let Some((&segment, remaining)) = segments.split_first() else { return Ok(true) };
        self.count_rewrite();
        // The rewrite moves records, so a snapshot pointing at them must go first.
        self.remove_snapshot()?;
        // The records it drops hold the only other copy of their nodes' secrets: an open could
        // no longer write those slots again, so they must be durable first.
        if let Some(sealing) = self.sealing.as_mut() {
            sealing.sync_key_table()?;
        }
        self.rewrite_segment(segment)?;
        self.report.segments_compacted += 1;
        if !doomed_vectors.is_empty() {
            let index = self.search_index()?;
            let done: Vec<u64> = doomed_vectors
                .into_iter()
                .filter(|id| {
                    index
                        .vector_records_of(*id)
                        .iter()
                        .all(|location| !remaining.contains(&u64::from(location.segment)))
                })
                .collect();
            for id in done {
                self.graph.set_vector_on_disk(id, false);
            }
        }
        Ok(remaining.is_empty())
    }

    fn rewrite_segment(&mut self, segment: u64) -> Result<(), Error> {
        let path = segment_path(&self.folder, segment);
        let bytes = self.with_segment(segment, &path, read_all)?;
        let corrupt = |offset: u64, reason| Error::Corrupt { file: path.clone(), offset, reason };
        let header = SegmentHeader::decode(&bytes).map_err(|reason| corrupt(0, reason))?;
        let expected = Expected {
            agent: self.agent,
            segment,
            sequence_before: header.sequence_before,
            chain_before: header.chain_before,
        };
        let mut out = bytes.get(..SEGMENT_HEADER_BYTES).unwrap_or_default().to_vec();
        let mut moves: Vec<(u64, Location, bool)> = Vec::new();
        let mut vector_moves: Vec<(u64, Location, bool)> = Vec::new();
        let mut batch_start = out.len();
        let graph = &self.graph;
        let end = scan_records(&bytes, &expected, SEGMENT_HEADER_BYTES, |record, _| -> Result<(), Error> {
            match record.body {
                Body::Commit { record_count, chain, .. } => {
                    let batch = out.get(batch_start..).unwrap_or_default();
                    let marker = commit_marker(record.identity, batch_start as u64, batch, record_count, chain);
                    marker.encode(&mut out);
                    batch_start = out.len();
                }
                Body::Lot { id, .. } | Body::Memory { id, .. } => {
                    // Every recalled node loses its text, and a record erased in place its padding.
                    // The mutant also takes a live node's text, when the node before it died.
                    let doomed = graph.is_erase_requested(id)
                        || !graph.is_alive(id)
                        || (mutant!(CompactionDropsLiveText) && id > 1 && !graph.is_alive(id - 1));
                    let kept = if doomed { record.redacted() } else { *record };
                    let present = kept.content().is_some_and(|content| content.present.is_some());
                    moves.push((id, Location::in_segment(segment, out.len() as u64)?, present));
                    kept.encode(&mut out);
                }
                Body::Vector { id, .. } => {
                    let doomed = graph.is_erase_requested(id) || !graph.is_alive(id);
                    let kept = if doomed { record.redacted() } else { *record };
                    let present = kept.content().is_some_and(|content| content.present.is_some());
                    vector_moves.push((id, Location::in_segment(segment, out.len() as u64)?, present));
                    kept.encode(&mut out);
                }
                Body::Shared { id, .. } => {
                    moves.push((id, Location::in_segment(segment, out.len() as u64)?, false));
                    record.encode(&mut out);
                }
                Body::Recall { .. } | Body::RecallAll { .. } | Body::Seal { .. } | Body::Member { .. } => {
                    record.encode(&mut out);
                }
            }
            Ok(())
        })?;
        if let Some(damage) = end.damage {
            return Err(corrupt(damage.offset, damage.reason));
        }
        if !end.is_clean() {
            return Err(corrupt(end.committed_end, CorruptReason::UncommittedBytesInRewrittenSegment));
        }
        let data_length = out.len() as u64;
        if segment == self.active_segment() {
            // The active segment keeps its header's promise: the margin of zeros after its end.
            out.resize(out.len() + segment_offset_usize(self.log.write_margin_bytes())?, 0);
        }
        self.replace_file(&path, &out)?;
        // A handle held open still reaches the file the rename replaced.
        if segment == self.active_segment() {
            let reopened = self
                .storage
                .open_file(&path, false)
                .map_err(|error| outcome_unknown(io_error(StorageOperation::Opening, &path, error)))?;
            self.segments.start(segment, reopened);
        } else {
            self.segments.forget_sealed(segment);
        }
        for (id, location, present) in moves {
            self.graph.set_location(id, location, present);
        }
        if let Some(index) = self.search.as_mut() {
            index.segment_rewritten(crate::convert::segment_number_u16(segment)?, &vector_moves);
        }
        if segment == self.active_segment() {
            self.log.rewritten(data_length, out.len() as u64);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::id::{Leg, Mode, Removal};
    use crate::limits::Options;
    use crate::ram_storage::RamStorage;
    use crate::store::StoreEngine;
    use crate::AgentEngine;
    use alloc::vec::Vec;

    /// An agent of small segments: six lots, each in a segment of its own or nearly, and a
    /// memory on the first; the memory and the first three lots recalled, Untrusted.
    fn recalled_across_segments(options: Options) -> (RamStorage, AgentEngine<RamStorage>) {
        let storage = RamStorage::default();
        let mut store = StoreEngine::open(storage.clone(), options.segment_size_max_bytes(4096)).unwrap();
        let token = store.create_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let text = [b'x'; 3000];
        let lots: Vec<_> = (0..6).map(|_| alice.add_lot("web", &text).unwrap()).collect();
        alice.remember(b"built on the first", &[Leg::from([lots[0]])]).unwrap();
        for lot in &lots[..3] {
            alice.recall(*lot, Mode::Fair, Removal::Untrusted).unwrap();
        }
        (storage, alice)
    }

    #[test]
    fn compaction_is_due_once_enough_recalled_nodes_keep_their_text() {
        let (_, alice) = recalled_across_segments(Options::default().auto_compact_dead_nodes(4));
        assert_eq!(alice.dead_text_nodes(), 4, "three lots and the memory on the first");
        assert!(alice.compaction_due());
        let (_, later) = recalled_across_segments(Options::default().auto_compact_dead_nodes(5));
        assert!(!later.compaction_due());
        let (_, off) = recalled_across_segments(Options::default().auto_compact_dead_nodes(0));
        assert!(!off.compaction_due(), "zero turns it off");
    }

    #[test]
    fn a_compaction_step_rewrites_one_segment_until_none_keeps_dead_text() {
        let (_, mut alice) = recalled_across_segments(Options::default());
        let segments = alice.report().segments;
        assert!(segments >= 3, "the recalled lots lie in several segments: {segments}");
        let mut steps = 0;
        let mut dead = alice.dead_text_nodes();
        while !alice.compact_step().unwrap() {
            steps += 1;
            assert!(alice.dead_text_nodes() < dead, "each step takes some text out");
            dead = alice.dead_text_nodes();
        }
        assert!(steps >= 2, "one segment a step: {steps} steps before the last");
        assert_eq!(alice.dead_text_nodes(), 0);
        assert_eq!(alice.report().segments_compacted, steps + 1);
        assert_eq!(alice.compact_step(), Ok(true), "nothing left: no segment rewritten");
        assert_eq!(alice.report().segments_compacted, steps + 1);
        alice.verify().unwrap();
    }

    #[test]
    fn a_compaction_in_steps_leaves_the_files_a_whole_compaction_leaves() {
        let (stepped_storage, mut stepped) = recalled_across_segments(Options::default());
        while !stepped.compact_step().unwrap() {}
        let (whole_storage, mut whole) = recalled_across_segments(Options::default());
        whole.compact().unwrap();
        assert_eq!(stepped.verify().unwrap(), whole.verify().unwrap());
        let text = |storage: &RamStorage| {
            storage.files().iter().map(|(_, bytes)| bytes.iter().filter(|byte| **byte == b'x').count()).sum::<usize>()
        };
        assert_eq!(text(&stepped_storage), text(&whole_storage));
        let memory_text = |storage: &RamStorage| {
            storage.files().iter().any(|(_, bytes)| bytes.windows(18).any(|window| window == b"built on the first"))
        };
        assert!(!memory_text(&stepped_storage) && !memory_text(&whole_storage), "the recalled memory's text is gone");
        for id in stepped.alive_lots() {
            assert_eq!(stepped.get(id).unwrap().content(), Some(&[b'x'; 3000][..]));
        }
        assert_eq!(stepped.alive_lots().len(), 3);
    }
}
