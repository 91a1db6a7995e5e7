//! The full verification of an agent's log, in pieces that can run apart.
//!
//! Every segment header holds the sequence and chain hash before it, so each segment's records,
//! checksums, content digests, chain and commit markers can be checked on their own from that
//! header ([`check_segment`], a pure function over the segment's bytes). What ties the segments
//! together is checked afterwards, in log order ([`AgentEngine::finish_verify`]): segment 1
//! starts at the genesis hash and each later header starts where the segment before it ended.
//! The recall graph is rebuilt from the log in order ([`GraphReplay`]), which needs no hashing,
//! so it can run beside the checks.
//!
//! [`AgentEngine::verify`] runs the pieces one after the other; the `cheesedb` crate runs the
//! segment checks on threads. Both report the same error for the same damage: the first one in
//! log order, exactly as a single pass that rebuilds the graph while it checks would.

use alloc::string::String;
use alloc::vec::Vec;

use super::files::read_all_into;
use super::replay::apply_record;
use super::AgentEngine;
use crate::codec::record::{self, Body, Record};
use crate::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::corrupt_reason::CorruptReason;
use crate::digest::{chain_genesis, content_digest, Hash};
use crate::engine::shared_nodes::SharedNodes;
use crate::engine::space_ledger::SpaceLedger;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::fingerprint::Fingerprint;
use crate::graph::Graph;
use crate::log::names::segment_path;
use crate::log::scan::{scan_records, Expected};
use crate::seal::ContentOpener;
use crate::storage::Storage;
use alloc::sync::Arc;

/// Why a segment header does not fit where it stands; the same words as opening the log uses.
const HEADER_ELSEWHERE: CorruptReason = CorruptReason::SegmentHeaderBelongsElsewhere;

/// One segment as a verification finds it: which agent and number it must carry, whether it is
/// the last one, and its path for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlace {
    /// The agent the segment belongs to.
    pub agent: u64,
    /// The segment's number, from 1.
    pub segment: u64,
    /// Whether it is the newest segment (the only one that must not end with a seal).
    pub last: bool,
    /// The file, relative to the store folder.
    pub path: String,
    /// Whether the agent is encrypted: its lots, memories and vectors must all be sealed.
    pub encrypted: bool,
    /// With an encrypted agent's token, what opens its sealed contents: each is then opened
    /// (unless an Erase destroyed its key) and must authenticate.
    pub opener: Option<Arc<ContentOpener>>,
}

/// The position in the log that a segment's header promises, and where its records end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentChecked {
    /// The sequence before the segment, as its header says.
    pub sequence_before: u64,
    /// The chain hash before the segment, as its header says.
    pub chain_before: Hash,
    /// The sequence after its last committed record.
    pub sequence: u64,
    /// The chain hash after its last committed record.
    pub chain: Hash,
    /// Whether a commit marker in it closes exactly at the kept fingerprint (and matches it).
    pub kept_seen: bool,
}

/// The first check a segment failed, with what a single pass would have done before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFailed {
    /// The error a single pass reports for it.
    pub error: Error,
    /// Records at offsets below this were handed to the graph before the failure: a graph error
    /// among them comes first in log order.
    pub visited_end: u64,
    /// The sequence and chain the header promises, when the header itself was sound: a header
    /// that does not continue the segment before it is damage at offset 0, before anything else.
    pub header: Option<(u64, Hash)>,
}

/// What checking one segment found.
pub type SegmentOutcome = Result<SegmentChecked, SegmentFailed>;

/// Checks one segment's bytes on their own, starting from what its own header says: the header,
/// every record's checksum and identity, the sequence, the chain, every commit marker and its
/// batch's checksum, the digest of every content still present, the seal (only the last segment
/// has none), nothing but zeros after the last commit marker, and `kept` if a commit marker
/// closes at its sequence. Whether the header continues the previous segment is left to
/// [`AgentEngine::finish_verify`].
///
/// # Errors
///
/// The [`SegmentFailed`] of the first failed check: its error is `Error::Corrupt`, or
/// `Error::HistoryMismatch` when the commit marker at `kept`'s sequence holds another chain.
// A failed segment is the rare case; boxing its error would cost every caller for nothing.
#[allow(clippy::result_large_err)]
pub fn check_segment(bytes: &[u8], place: &SegmentPlace, kept: Option<&Fingerprint>) -> SegmentOutcome {
    let failed =
        |offset: u64, reason, header| SegmentFailed { error: place.corrupt(offset, reason), visited_end: 0, header };
    let header = SegmentHeader::decode(bytes).map_err(|reason| failed(0, reason, None))?;
    if header.agent != place.agent || header.segment != place.segment {
        return Err(failed(0, HEADER_ELSEWHERE, None));
    }
    let start = Some((header.sequence_before, header.chain_before));
    let expected = Expected {
        agent: place.agent,
        segment: place.segment,
        sequence_before: header.sequence_before,
        chain_before: header.chain_before,
    };
    let mut kept_seen = false;
    let scanned = scan_records(bytes, &expected, SEGMENT_HEADER_BYTES, |record, offset| {
        check_committed(record, offset, place, kept, &mut kept_seen)
    });
    let end = scanned.map_err(|(error, visited_end)| SegmentFailed { error, visited_end, header: start })?;
    let visited = |reason, offset| SegmentFailed { visited_end: end.committed_end, ..failed(offset, reason, start) };
    if let Some(damage) = end.damage {
        return Err(visited(damage.reason, damage.offset));
    }
    if !end.is_clean() {
        return Err(visited(CorruptReason::UncommittedBytesAfterLastCommit, end.committed_end));
    }
    let sealed_as_expected =
        if place.last { end.sealed_into.is_none() } else { end.sealed_into == Some(place.segment + 1) };
    if !sealed_as_expected {
        return Err(visited(CorruptReason::SegmentSealOutOfPlace, end.committed_end));
    }
    Ok(SegmentChecked {
        sequence_before: header.sequence_before,
        chain_before: header.chain_before,
        sequence: end.sequence,
        chain: end.chain,
        kept_seen,
    })
}

/// The checks on one committed record beyond the scan's own: its content's digest, and the
/// kept fingerprint at a commit marker. An error carries the end of what the graph was given
/// in a single pass: every record up to and including this one.
fn check_committed(
    record: &Record<'_>,
    offset: u64,
    place: &SegmentPlace,
    kept: Option<&Fingerprint>,
    kept_seen: &mut bool,
) -> Result<(), (Error, u64)> {
    let this_one_included = offset + 1;
    match record.body {
        Body::Lot { id, content, .. } | Body::Memory { id, content, .. } | Body::Vector { id, content } => {
            if let Some((salt, text)) = content.present {
                if content_digest(salt, text) != content.digest {
                    return Err((place.corrupt(offset, CorruptReason::ContentDoesNotMatchDigest), this_one_included));
                }
            }
            check_sealing(record, id, place).map_err(|reason| (place.corrupt(offset, reason), this_one_included))?;
        }
        Body::Commit { chain, .. } => {
            if let Some(kept) = kept.filter(|kept| kept.records == record.identity.sequence) {
                if chain != kept.chain {
                    return Err((Error::HistoryMismatch { records: kept.records }, this_one_included));
                }
                *kept_seen = true;
            }
        }
        Body::Recall { .. }
        | Body::RecallAll { .. }
        | Body::Seal { .. }
        | Body::Member { .. }
        | Body::Shared { .. } => {}
    }
    Ok(())
}

/// Checks that the content of `record`, of node `id`, is sealed exactly when the agent is
/// encrypted, and, given an opener, that it opens (unless its key was destroyed).
fn check_sealing(record: &Record<'_>, id: u64, place: &SegmentPlace) -> Result<(), CorruptReason> {
    let Some(content) = record.content() else { return Ok(()) };
    match (place.encrypted, content.sealed) {
        (false, true) => return Err(CorruptReason::SealedRecordInPlaintextAgent),
        (true, false) => return Err(CorruptReason::PlaintextRecordInEncryptedAgent),
        _ => {}
    }
    if let (Some(opener), Some((_, sealed))) = (&place.opener, content.present) {
        opener.open(record, id, sealed)?;
    }
    Ok(())
}

impl SegmentPlace {
    /// The error of damage found at `offset` of this segment.
    pub(crate) fn corrupt(&self, offset: u64, reason: CorruptReason) -> Error {
        Error::Corrupt { file: self.path.clone(), offset, reason }
    }
}

/// The recall graph rebuilt from the log, segment by segment in log order, to compare with the
/// one in memory. It trusts no byte: a record that does not decode ends the segment's replay, and
/// a history the graph refuses (ids out of order, dead parents, unknown recalls) is kept as the
/// first graph error. Records past a segment's first failed check may be replayed too; whether
/// such an error counts is decided against that segment's outcome.
#[derive(Debug)]
pub struct GraphReplay {
    graph: Graph,
    /// A space's members and authors, rebuilt with its graph; `None` for an agent.
    space: Option<SpaceLedger>,
    /// The shared nodes, rebuilt with the graph.
    shared: SharedNodes,
    first_error: Option<(u64, u64, Error)>,
}

impl<S: Storage> AgentEngine<S> {
    /// An empty replay of this engine's log, to verify it segment by segment.
    #[must_use]
    pub fn start_replay(&self) -> GraphReplay {
        let mut graph = Graph::default();
        graph.defer_folds();
        let space = self.space.as_ref().map(|_| SpaceLedger::default());
        GraphReplay { graph, space, shared: SharedNodes::default(), first_error: None }
    }
}

impl GraphReplay {
    /// Applies the records of one segment, the next in log order, to the graph.
    pub fn replay_segment(&mut self, bytes: &[u8], place: &SegmentPlace) {
        if self.first_error.is_some() {
            return; // the graph is wrong from here on; a later error could never be the first
        }
        let mut position = SEGMENT_HEADER_BYTES;
        while let Some(rest) = bytes.get(position..).filter(|rest| !rest.is_empty()) {
            // The checks find every bad checksum; a record they did not pass is never counted here.
            let Ok((record, length)) = record::decode_without_checksum(rest) else { return };
            let applied = apply_record(
                &mut self.graph,
                self.space.as_mut(),
                &mut self.shared,
                &record,
                position as u64,
                &place.path,
            );
            if let Err(error) = applied {
                self.first_error = Some((place.segment, position as u64, error));
                return;
            }
            position += length;
        }
    }

    /// The first graph error in `segment` at an offset below `end`, if any.
    fn error_in(&self, segment: u64, end: u64) -> Option<Error> {
        match &self.first_error {
            Some((at_segment, offset, error)) if *at_segment == segment && *offset < end => Some(error.clone()),
            _ => None,
        }
    }
}

impl<S: Storage> AgentEngine<S> {
    /// The segments a verification reads, in log order.
    ///
    /// # Errors
    ///
    /// `Error::AgentDeleted` when the agent was deleted.
    pub fn segments_to_verify(&self) -> Result<Vec<SegmentPlace>, Error> {
        self.check_readable()?;
        let last = self.segments.count();
        let opener = self.content_opener()?;
        let place = |segment| SegmentPlace {
            agent: self.agent,
            segment,
            last: segment == last,
            path: segment_path(&self.folder, segment),
            encrypted: self.sealing.is_some(),
            opener: opener.clone(),
        };
        Ok((1..=last).map(place).collect())
    }

    /// Reads the whole of one segment into `bytes`, replacing what it held (a buffer used
    /// again for the next segment saves the system from mapping fresh memory for each).
    ///
    /// # Errors
    ///
    /// `Error::Io` when the segment cannot be opened or read; `Error::Internal` when `place`
    /// names no segment of this agent.
    pub fn read_segment(&self, place: &SegmentPlace, bytes: &mut Vec<u8>) -> Result<(), Error> {
        self.with_segment(place.segment, &place.path, |file, path| read_all_into(file, path, bytes))
    }

    /// Joins the segments' outcomes, in log order, into the verdict of a whole verification:
    /// the first failure in log order, or the head fingerprint once the headers are found to
    /// continue each other from the genesis hash, the log ends where the engine stands, the
    /// rebuilt graph equals the one in memory and `kept` was passed through. `outcomes` may stop
    /// at the first failed segment.
    ///
    /// # Errors
    ///
    /// The first failure in log order: the error of a failed segment (`Error::Corrupt`,
    /// `Error::HistoryMismatch`, `Error::Io`), `Error::Corrupt` when the segments do not follow
    /// each other or the log differs from the engine, `Error::HistoryMismatch` when `kept` was
    /// not passed through, `Error::Internal` when `outcomes` stops before a failure.
    pub fn finish_verify(
        &self,
        kept: Option<&Fingerprint>,
        places: &[SegmentPlace],
        outcomes: &[SegmentOutcome],
        replay: &mut GraphReplay,
    ) -> Result<Fingerprint, Error> {
        let mut sequence = 0;
        let mut chain = chain_genesis(self.agent);
        let mut kept_seen = kept.is_some_and(|kept| kept.records == 0 && kept.chain == chain);
        for (index, place) in places.iter().enumerate() {
            let outcome = outcomes.get(index).ok_or(Error::Internal { what: InternalRule::EverySegmentChecked })?;
            let (header, visited_end) = match outcome {
                Ok(checked) => (Some((checked.sequence_before, checked.chain_before)), u64::MAX),
                Err(failed) => (failed.header, failed.visited_end),
            };
            if header.is_some_and(|header| header != (sequence, chain)) {
                return Err(place.corrupt(0, HEADER_ELSEWHERE));
            }
            if let Some(error) = replay.error_in(place.segment, visited_end) {
                return Err(error);
            }
            let checked = outcome.as_ref().map_err(|failed| failed.error.clone())?;
            sequence = checked.sequence;
            chain = checked.chain;
            kept_seen |= checked.kept_seen;
        }
        let opener = places.first().and_then(|place| place.opener.as_deref());
        self.check_verified_end(sequence, chain, replay, opener)?;
        match kept {
            Some(kept) if !kept_seen => Err(Error::HistoryMismatch { records: kept.records }),
            _ => Ok(Fingerprint { records: sequence, chain }),
        }
    }

    /// Whether the verified log ends where the engine stands and rebuilds the graph it holds.
    /// `opener`, when the pass had one, saves reading the key table again.
    fn check_verified_end(
        &self,
        sequence: u64,
        chain: Hash,
        replay: &mut GraphReplay,
        opener: Option<&ContentOpener>,
    ) -> Result<(), Error> {
        let last = segment_path(&self.folder, self.segments.count());
        if sequence != self.log.sequence() || chain != self.log.chain() {
            return Err(Error::Corrupt { file: last, offset: 0, reason: CorruptReason::LogDiffersFromOpenedState });
        }
        self.check_keys(&mut replay.graph, opener)?;
        replay.graph.fold_children(); // the replay is compared, then dropped: no need to shrink it
        if !replay.graph.same_as(&self.graph) || replay.space != self.space || replay.shared != self.shared {
            return Err(Error::Corrupt { file: last, offset: 0, reason: CorruptReason::GraphDiffersFromLog });
        }
        Ok(())
    }

    /// Verification in one thread: each segment is read once, checked, and replayed into the
    /// graph, stopping at the first segment that fails.
    #[allow(clippy::result_large_err)] // as for `check_segment`
    pub(super) fn verify_in_order(&self, kept: Option<&Fingerprint>) -> Result<Fingerprint, Error> {
        let places = self.segments_to_verify()?;
        let mut outcomes = Vec::with_capacity(places.len());
        let mut replay = self.start_replay();
        let mut bytes = Vec::new();
        for place in &places {
            let outcome = self
                .read_segment(place, &mut bytes)
                .map_err(|error| SegmentFailed { error, visited_end: 0, header: None })
                .and_then(|()| {
                    let outcome = check_segment(&bytes, place, kept);
                    replay.replay_segment(&bytes, place);
                    outcome
                });
            let failed = outcome.is_err();
            outcomes.push(outcome);
            if failed {
                break;
            }
        }
        self.finish_verify(kept, &places, &outcomes, &mut replay)
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;

    use super::*;
    use crate::digest::chain_genesis;
    use crate::id::{Id, Leg, Mode, Removal};
    use crate::limits::Options;
    use crate::log::scan::check_header;
    use crate::ram_storage::RamStorage;
    use crate::storage::StorageFile;
    use crate::store::StoreEngine;

    /// Verification as one pass that rebuilds the graph while it checks, the way it was done
    /// before the pieces: the reference the pieces must agree with, error for error.
    fn verify_in_one_pass<S: Storage>(
        engine: &AgentEngine<S>,
        kept: Option<&Fingerprint>,
    ) -> Result<Fingerprint, Error> {
        let mut sequence = 0;
        let mut chain = chain_genesis(engine.agent);
        let mut kept_seen = kept.is_some_and(|kept| kept.records == 0 && kept.chain == chain);
        let mut replay = engine.start_replay();
        let last = engine.segments.count();
        for segment in 1..=last {
            let path = segment_path(&engine.folder, segment);
            let bytes = engine.with_segment(segment, &path, read_all)?;
            let corrupt = |offset: u64, reason| Error::Corrupt { file: path.clone(), offset, reason };
            let expected = Expected { agent: engine.agent, segment, sequence_before: sequence, chain_before: chain };
            check_header(&bytes, &expected).map_err(|damage| corrupt(damage.offset, damage.reason))?;
            let end = scan_records(&bytes, &expected, SEGMENT_HEADER_BYTES, |record, offset| {
                apply_record(&mut replay.graph, replay.space.as_mut(), &mut replay.shared, record, offset, &path)?;
                match record.body {
                    Body::Lot { content, .. } | Body::Memory { content, .. } | Body::Vector { content, .. } => {
                        if let Some((salt, text)) = content.present {
                            if content_digest(salt, text) != content.digest {
                                return Err(corrupt(offset, CorruptReason::ContentDoesNotMatchDigest));
                            }
                        }
                    }
                    Body::Commit { chain, .. } => {
                        if let Some(kept) = kept.filter(|kept| kept.records == record.identity.sequence) {
                            if chain != kept.chain {
                                return Err(Error::HistoryMismatch { records: kept.records });
                            }
                            kept_seen = true;
                        }
                    }
                    Body::Recall { .. }
                    | Body::RecallAll { .. }
                    | Body::Seal { .. }
                    | Body::Member { .. }
                    | Body::Shared { .. } => {}
                }
                Ok(())
            })?;
            if let Some(damage) = end.damage {
                return Err(corrupt(damage.offset, damage.reason));
            }
            if !end.is_clean() {
                return Err(corrupt(end.committed_end, CorruptReason::UncommittedBytesAfterLastCommit));
            }
            let sealed_as_expected =
                if segment == last { end.sealed_into.is_none() } else { end.sealed_into == Some(segment + 1) };
            if !sealed_as_expected {
                return Err(corrupt(end.committed_end, CorruptReason::SegmentSealOutOfPlace));
            }
            sequence = end.sequence;
            chain = end.chain;
        }
        engine.check_verified_end(sequence, chain, &mut replay, None)?;
        match kept {
            Some(kept) if !kept_seen => Err(Error::HistoryMismatch { records: kept.records }),
            _ => Ok(Fingerprint { records: sequence, chain }),
        }
    }

    fn read_all<F: StorageFile>(file: &F, path: &str) -> Result<Vec<u8>, Error> {
        let mut bytes = Vec::new();
        read_all_into(file, path, &mut bytes)?;
        Ok(bytes)
    }

    /// An agent in RAM with four small segments, recalls among its records; returns it with a
    /// fingerprint kept in its second segment.
    fn agent_with_four_segments() -> (RamStorage, AgentEngine<RamStorage>, Fingerprint) {
        let storage = RamStorage::default();
        let options =
            Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(u64::MAX);
        let mut store = StoreEngine::open(storage.clone(), options).unwrap();
        let token = store.create_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let lot = alice.add_lot("source", b"the source").unwrap();
        let mut kept = None;
        let mut index = 0u64;
        while alice.report().segments < 4 {
            let memory = alice.remember(format!("memory {index}").as_bytes(), &[Leg::from([lot])]).unwrap();
            if index % 7 == 3 {
                alice
                    .recall(memory, Mode::Fair, if index % 2 == 0 { Removal::Erase } else { Removal::Untrusted })
                    .unwrap();
            }
            if alice.report().segments == 2 && kept.is_none() {
                kept = Some(alice.head());
            }
            index += 1;
        }
        (storage, alice, kept.unwrap())
    }

    fn flip(storage: &RamStorage, path: &str, offset: u64) {
        let mut file = storage.open_file(path, false).unwrap();
        let mut byte = [0u8];
        file.read_at(offset, &mut byte).unwrap();
        file.write_at(offset, &[byte[0] ^ 0x20]).unwrap();
    }

    #[test]
    fn a_sound_log_verifies_through_a_kept_fingerprint() {
        let (_, alice, kept) = agent_with_four_segments();
        let head = alice.head();
        assert_eq!(alice.verify(), Ok(head));
        assert_eq!(alice.verify_extends(&kept), Ok(head));
        assert_eq!(verify_in_one_pass(&alice, Some(&kept)), Ok(head));
        let other = Fingerprint { chain: [9; 32], ..kept };
        assert_eq!(alice.verify_extends(&other), Err(Error::HistoryMismatch { records: kept.records }));
    }

    #[test]
    fn each_segment_starts_where_the_one_before_ends() {
        let (_, alice, _) = agent_with_four_segments();
        let mut before = (0, chain_genesis(alice.agent_number()));
        let mut bytes = Vec::new();
        for place in alice.segments_to_verify().unwrap() {
            alice.read_segment(&place, &mut bytes).unwrap();
            let checked = check_segment(&bytes, &place, None).unwrap();
            assert_eq!((checked.sequence_before, checked.chain_before), before, "segment {}", place.segment);
            before = (checked.sequence, checked.chain);
        }
        assert_eq!(before, (alice.head().records, alice.head().chain));
    }

    #[test]
    fn every_flipped_byte_is_reported_as_the_one_pass_reports_it() {
        let (storage, alice, kept) = agent_with_four_segments();
        for place in alice.segments_to_verify().unwrap() {
            let length = alice.with_segment(place.segment, &place.path, |file, _| Ok(file.len().unwrap())).unwrap();
            for offset in 0..length {
                flip(&storage, &place.path, offset);
                let found = alice.verify_extends(&kept);
                assert!(found.is_err(), "flip at {offset} of {}", place.path);
                assert_eq!(found, verify_in_one_pass(&alice, Some(&kept)), "flip at {offset} of {}", place.path);
                flip(&storage, &place.path, offset);
            }
        }
        assert_eq!(alice.verify_extends(&kept), Ok(alice.head()));
    }

    #[test]
    fn a_graph_error_counts_only_before_the_first_failed_check() {
        let replay = GraphReplay {
            graph: Graph::default(),
            space: None,
            shared: SharedNodes::default(),
            first_error: Some((3, 500, Error::UnknownId { id: Id::from(1) })),
        };
        assert!(replay.error_in(3, 501).is_some());
        assert!(replay.error_in(3, 500).is_none(), "past what a single pass would have replayed");
        assert!(replay.error_in(2, u64::MAX).is_none(), "another segment's");
    }
}
