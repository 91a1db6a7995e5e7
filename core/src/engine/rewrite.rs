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
        self.check_writable()?;
        self.confirm_graph_before_destroying()?;
        self.count_rewrite();
        let result = self.rewrite_without_dead_content();
        if result.is_err() {
            self.log.poison(PoisonCause::CompactionFailed);
        }
        result.map(|_| ())
    }

    /// Rewrites every segment holding text or vectors of a recalled node; returns how many
    /// nodes lost their text.
    fn rewrite_without_dead_content(&mut self) -> Result<u64, Error> {
        let doomed: Vec<u64> = self.graph.content_to_remove(true).collect();
        let mut segments: Vec<u64> = doomed
            .iter()
            .filter_map(|id| self.graph.location(*id).ok())
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
        if !segments.is_empty() {
            // The rewrite moves records, so a snapshot pointing at them must go first.
            self.remove_snapshot()?;
            // The records it drops hold the only other copy of their nodes' secrets: an open
            // could no longer write those slots again, so they must be durable first.
            if let Some(sealing) = self.sealing.as_mut() {
                sealing.sync_key_table()?;
            }
        }
        for (index, segment) in segments.into_iter().enumerate() {
            // Once one segment is replaced, the compaction is partly on disk: a later failure
            // leaves its outcome unknown, never refused.
            self.rewrite_segment(segment).map_err(|error| if index > 0 { outcome_unknown(error) } else { error })?;
        }
        for id in doomed_vectors {
            self.graph.set_vector_on_disk(id, false);
        }
        Ok(doomed.len() as u64)
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
                    let doomed = graph.is_erase_requested(id) || !graph.is_alive(id);
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
