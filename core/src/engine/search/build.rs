//! The search index built a segment at a time, in pieces that can run apart.
//!
//! Each segment's records can be indexed on their own ([`index_segment`]): which nodes are alive
//! comes from the graph, and the checks of the records (checksums, chain) start from the
//! segment's own header. What ties the segments together is settled when the parts are joined in
//! log order ([`SearchIndexJoin`]): documents are numbered after the earlier ones, a later vector
//! of a node replaces an earlier one, and the dimension of each vector is checked against the
//! vectors of the earlier segments, as one pass checks it against the vectors it holds. So the
//! joined index, and the error a damaged log gives, are those of the one pass the engine makes by
//! itself, segment after segment; the `cheesedb` crate indexes segments on threads.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use hashbrown::HashMap;

use super::{vector_numbers, SearchIndex};
use crate::codec::key_table_file::key_slot_offset;
use crate::codec::record::{Body, Record};
use crate::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::corrupt_reason::CorruptReason;
use crate::engine::verify::SegmentPlace;
use crate::engine::AgentEngine;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::graph::{Graph, Location};
use crate::log::names::{agent_folder, key_table_path, segment_path};
use crate::log::scan::{scan_records, Expected};
use crate::seal::envelope::split_lot_plain_bytes;
use crate::storage::Storage;

/// Builds an agent's search index some other way than the engine's one pass (the `cheesedb`
/// crate: on threads), from the parts [`index_segment`] makes of the segments that
/// [`AgentEngine::segments_to_index`] lists, joined by a [`SearchIndexJoin`].
pub type SearchIndexBuilder<S> = fn(&AgentEngine<S>) -> Result<SearchIndexJoin, Error>;

/// A vector of an alive node, as a segment holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct VectorSeen {
    id: u64,
    dimension: usize,
    /// Where its record lies in the segment.
    offset: u64,
}

/// What indexing one segment on its own found: its part of the index, and the first error in it.
#[derive(Debug)]
pub struct SearchIndexPart {
    segment: u64,
    index: SearchIndex,
    /// Each vector of an alive node in the segment, in log order, up to the failure if any.
    vectors: Vec<VectorSeen>,
    /// The first error in the segment: nothing after it was indexed.
    failure: Option<Error>,
}

impl SearchIndexPart {
    /// The part of a segment that could not be read: `error` is its first error.
    #[must_use]
    pub fn unreadable(place: &SegmentPlace, error: Error) -> SearchIndexPart {
        let index = SearchIndex::default();
        SearchIndexPart { segment: place.segment, index, vectors: Vec::new(), failure: Some(error) }
    }
}

/// Indexes the records of one segment, `bytes`, on their own: the text of every node that
/// `alive` holds alive, its vectors, and where every vector record still holding numbers lies.
/// The part ends at the segment's first error, which it keeps.
#[must_use]
pub fn index_segment(bytes: &[u8], place: &SegmentPlace, alive: &Graph) -> SearchIndexPart {
    let mut index = SearchIndex::default();
    let mut vectors = Vec::new();
    let failure = index_records(&mut index, bytes, place, alive, |seen| vectors.push(seen)).err();
    SearchIndexPart { segment: place.segment, index, vectors, failure }
}

/// Adds the records of one segment, `bytes`, to `index`: the text of every alive node, the
/// vectors of every alive node (a later one replacing an earlier one), and where every vector
/// record still holding numbers lies. `seen` is told of each vector of an alive node before it
/// is checked against the vectors `index` holds.
///
/// # Errors
///
/// `Error::Corrupt` for the first damage in the segment, a vector record whose bytes are not
/// numbers, or a vector that the vectors held refuse; `Error::Internal` for a record past what
/// a location holds.
pub(super) fn index_records(
    index: &mut SearchIndex,
    bytes: &[u8],
    place: &SegmentPlace,
    alive: &Graph,
    mut seen: impl FnMut(VectorSeen),
) -> Result<(), Error> {
    let header = SegmentHeader::decode(bytes).map_err(|reason| place.corrupt(0, reason))?;
    let expected = Expected {
        agent: place.agent,
        segment: place.segment,
        sequence_before: header.sequence_before,
        chain_before: header.chain_before,
    };
    let end = scan_records(bytes, &expected, SEGMENT_HEADER_BYTES, |record, offset| -> Result<(), Error> {
        match record.body {
            Body::Lot { id, content, .. } | Body::Memory { id, content, .. } => {
                if let Some((_, text)) = content.present.filter(|_| alive.is_alive(id)) {
                    match opened(record, id, text, place, offset)? {
                        Opened::Plain(text) => index.keywords.add(id, text),
                        Opened::Sealed(plain) if matches!(record.body, Body::Lot { .. }) => {
                            let (_, text) = split_lot_plain_bytes(&plain)
                                .ok_or_else(|| place.corrupt(offset, CorruptReason::SealedContentMalformed))?;
                            index.keywords.add(id, text);
                        }
                        Opened::Sealed(plain) => index.keywords.add(id, &plain),
                    }
                }
            }
            Body::Vector { id, content } => {
                let Some((_, bytes)) = content.present else { return Ok(()) };
                let location = Location::in_segment(place.segment, offset)?;
                if content.sealed && !alive.is_alive(id) {
                    // Sealed numbers of a recalled node: nothing to index, nothing to check.
                    index.vector_records.entry(id).or_default().push(location);
                    return Ok(());
                }
                let plain = match opened(record, id, bytes, place, offset)? {
                    Opened::Plain(bytes) => alloc::borrow::Cow::Borrowed(bytes),
                    Opened::Sealed(plain) => alloc::borrow::Cow::Owned(plain),
                };
                let numbers = vector_numbers(&plain)
                    .ok_or_else(|| place.corrupt(offset, CorruptReason::VectorBytesNotNumbers))?;
                index.vector_records.entry(id).or_default().push(location);
                if alive.is_alive(id) {
                    seen(VectorSeen { id, dimension: numbers.len(), offset });
                    // A later vector of the node replaces this one: the check is of the other
                    // nodes' vectors.
                    index.vectors.remove(id);
                    let refused = index.vectors.check(&numbers).is_err();
                    if refused {
                        return Err(place.corrupt(offset, CorruptReason::VectorDimensionDiffers));
                    }
                    index.vectors.set(id, &numbers);
                }
            }
            Body::Recall { .. }
            | Body::RecallAll { .. }
            | Body::Commit { .. }
            | Body::Seal { .. }
            | Body::Member { .. }
            | Body::Shared { .. } => {}
        }
        Ok(())
    })?;
    match end.damage {
        Some(damage) => Err(place.corrupt(damage.offset, damage.reason)),
        None => Ok(()),
    }
}

/// A content as the index reads it.
enum Opened<'a> {
    /// A plaintext agent's bytes, as stored.
    Plain(&'a [u8]),
    /// An encrypted agent's plain bytes, opened.
    Sealed(Vec<u8>),
}

/// The bytes `stored` of `record`, a record of node `id` that is alive, opened if they are
/// sealed.
///
/// An alive node's key is never destroyed (an Erase kills what it covers first), so a slot with
/// no key is damage, as `get` finds it: leaving the node out would answer a search as if it
/// held nothing, silently.
fn opened<'a>(
    record: &Record<'_>,
    id: u64,
    stored: &'a [u8],
    place: &SegmentPlace,
    offset: u64,
) -> Result<Opened<'a>, Error> {
    let sealed = record.content().is_some_and(|content| content.sealed);
    match (sealed, &place.opener) {
        (false, _) => Ok(Opened::Plain(stored)),
        (true, None) => Err(place.corrupt(offset, CorruptReason::SealedRecordInPlaintextAgent)),
        (true, Some(opener)) => match opener.open(record, id, stored) {
            Ok(Some(plain)) => Ok(Opened::Sealed(plain)),
            Ok(None) => Err(key_table_corrupt(place, id, CorruptReason::KeyMissingForReadableNode)),
            Err(reason @ (CorruptReason::SealedContentMalformed | CorruptReason::SealedContentDoesNotOpen)) => {
                Err(place.corrupt(offset, reason))
            }
            Err(reason) => Err(key_table_corrupt(place, id, reason)),
        },
    }
}

/// The error of damage of the slot of node `id` in the key table of the agent of `place`.
fn key_table_corrupt(place: &SegmentPlace, id: u64, reason: CorruptReason) -> Error {
    let file = key_table_path(&agent_folder(place.agent));
    Error::Corrupt { file, offset: key_slot_offset(id).unwrap_or(0), reason }
}

/// Joins the parts of the search index, one per segment, in log order: each part as soon as the
/// parts of every segment before it are joined.
#[derive(Debug)]
pub struct SearchIndexJoin {
    /// Every segment, in log order.
    places: Vec<SegmentPlace>,
    /// How many of them are joined.
    joined: usize,
    /// Parts given before the part of a segment before theirs, by segment.
    waiting: BTreeMap<u64, SearchIndexPart>,
    index: SearchIndex,
    dimensions: DimensionReplay,
    /// The first error in log order: nothing after it is joined.
    failure: Option<Error>,
}

impl SearchIndexJoin {
    /// A join of the parts of the segments at `places`, in log order.
    #[must_use]
    pub fn new(places: &[SegmentPlace]) -> SearchIndexJoin {
        SearchIndexJoin {
            places: places.to_vec(),
            joined: 0,
            waiting: BTreeMap::new(),
            index: SearchIndex::default(),
            dimensions: DimensionReplay::default(),
            failure: None,
        }
    }

    /// Takes the part of one of the segments, in any order; it is joined once the parts of the
    /// segments before it are. A part of no segment of the join, or of one joined already, is
    /// dropped, and so is every part after the first error.
    pub fn add(&mut self, part: SearchIndexPart) {
        if self.failure.is_some() {
            return;
        }
        self.waiting.insert(part.segment, part);
        while let Some(place) = self.places.get(self.joined) {
            let Some(part) = self.waiting.remove(&place.segment) else { return };
            self.joined += 1;
            if let Err(error) = join_part(&mut self.index, &mut self.dimensions, place, part) {
                self.failure = Some(error);
                self.waiting.clear();
                return;
            }
        }
        self.waiting.clear();
    }

    /// The index of the whole log.
    ///
    /// # Errors
    ///
    /// The first error in log order; `Error::Internal` when a segment's part is missing.
    pub(super) fn finish(self) -> Result<SearchIndex, Error> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        if self.joined < self.places.len() {
            return Err(Error::Internal { what: InternalRule::EverySegmentIndexed });
        }
        Ok(self.index)
    }
}

/// Joins `part`, the part of the segment at `place`, to `index`, the parts of the segments
/// before it, once its vectors are found to fit theirs.
fn join_part(
    index: &mut SearchIndex,
    dimensions: &mut DimensionReplay,
    place: &SegmentPlace,
    part: SearchIndexPart,
) -> Result<(), Error> {
    if let Some(seen) = part.vectors.iter().find(|seen| !dimensions.fits(seen)) {
        return Err(place.corrupt(seen.offset, CorruptReason::VectorDimensionDiffers));
    }
    if let Some(error) = part.failure {
        return Err(error);
    }
    index.append(part.index);
    Ok(())
}

/// The dimension of the latest vector of each alive node so far, so that each next vector is
/// checked against those of the other nodes, as the one pass checks it against the vectors it
/// holds.
#[derive(Debug, Default)]
struct DimensionReplay {
    dimensions: HashMap<u64, usize>,
    /// The dimension of every vector in `dimensions`.
    common: usize,
}

impl DimensionReplay {
    /// Whether the vector `seen` fits the vectors of the other nodes; then it is the latest of
    /// its node.
    fn fits(&mut self, seen: &VectorSeen) -> bool {
        let others = self.dimensions.len() - usize::from(self.dimensions.contains_key(&seen.id));
        if others > 0 && self.common != seen.dimension {
            return false;
        }
        self.dimensions.insert(seen.id, seen.dimension);
        self.common = seen.dimension;
        true
    }
}

impl<S: Storage> AgentEngine<S> {
    /// Has the search index built by `builder` from now on, whenever it is needed, instead of
    /// by the engine's one pass.
    #[doc(hidden)]
    pub fn build_search_index_with(&mut self, builder: SearchIndexBuilder<S>) {
        self.search_builder = Some(builder);
    }

    /// The segments the search index is built from, in log order.
    ///
    /// # Errors
    ///
    /// `Error::AgentDeleted` when the agent was deleted.
    #[doc(hidden)]
    pub fn segments_to_index(&self) -> Result<Vec<SegmentPlace>, Error> {
        self.check_readable()?;
        let last = self.active_segment();
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

    /// The recall graph, which tells the alive nodes: what [`index_segment`] needs of it.
    #[must_use]
    #[doc(hidden)]
    pub fn alive_nodes(&self) -> &Graph {
        &self.graph
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;

    use super::*;
    use crate::engine::append::Entry;
    use crate::engine::search::vector_bytes;
    use crate::id::{Leg, Mode, Removal};
    use crate::limits::Options;
    use crate::ram_storage::RamStorage;
    use crate::search::Hit;
    use crate::storage::StorageFile;
    use crate::store::StoreEngine;

    const QUERIES: [&str; 6] = ["memory", "pune rain", "source", "word3", "word3 word5 nothing", "12 word6"];

    /// An agent in RAM with at least `segments` small segments: memories of varied words, some
    /// recalled (Untrusted or Erase), vectors set on most of them and replaced on some.
    fn agent_with_segments(segments: u64) -> (RamStorage, AgentEngine<RamStorage>) {
        let storage = RamStorage::default();
        let options =
            Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(u64::MAX);
        let mut store = StoreEngine::open(storage.clone(), options).unwrap();
        let token = store.create_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let lot = alice.add_lot("source", b"the source of pune rain").unwrap();
        let mut memories = Vec::new();
        let mut index = 0u64;
        while alice.report().segments < segments {
            let text = format!("memory {index} word{} word{} pune", index % 7, index % 11);
            let memory = alice.remember(text.as_bytes(), &[Leg::from([lot])]).unwrap();
            memories.push(memory);
            if index % 3 != 0 {
                alice.set_vector(memory, &[1.0, (index % 5) as f32, 0.5]).unwrap();
            }
            // A vector replacing one set long before, often in an earlier segment.
            let earlier = memories[memories.len() / 2];
            if index % 4 == 1 && alice.get(earlier).unwrap().is_alive() {
                alice.set_vector(earlier, &[0.25, 1.0, (index % 3) as f32]).unwrap();
            }
            if index % 9 == 4 {
                let removal = if index % 2 == 0 { Removal::Erase } else { Removal::Untrusted };
                alice.recall(memory, Mode::Fair, removal).unwrap();
            }
            index += 1;
        }
        (storage, alice)
    }

    /// The index joined from parts of each segment, given to the join last segment first.
    fn joined<S: Storage>(engine: &AgentEngine<S>) -> Result<SearchIndex, Error> {
        let places = engine.segments_to_index()?;
        let mut join = SearchIndexJoin::new(&places);
        let mut bytes = Vec::new();
        let mut parts = Vec::new();
        for place in &places {
            match engine.read_segment(place, &mut bytes) {
                Ok(()) => parts.push(index_segment(&bytes, place, engine.alive_nodes())),
                Err(error) => parts.push(SearchIndexPart::unreadable(place, error)),
            }
        }
        for part in parts.into_iter().rev() {
            join.add(part);
        }
        join.finish()
    }

    /// The hits of each query, the hits of a vector search, and where the vector records lie.
    type Answers = (Vec<Vec<Hit>>, Vec<Hit>, BTreeMap<u64, Vec<Location>>);

    /// Every answer of `index`, to compare two indexes.
    fn answers(index: &SearchIndex) -> Answers {
        let keywords = QUERIES.iter().map(|query| index.keywords.search(query, usize::MAX)).collect();
        let vectors = index.vectors.search(&[1.0, 2.0, 0.5], usize::MAX).unwrap();
        (keywords, vectors, index.vector_records.clone())
    }

    fn flip(storage: &RamStorage, path: &str, offset: u64) {
        let mut file = storage.open_file(path, false).unwrap();
        let mut byte = [0u8];
        file.read_at(offset, &mut byte).unwrap();
        file.write_at(offset, &[byte[0] ^ 0x20]).unwrap();
    }

    #[test]
    fn parts_joined_in_log_order_give_the_one_pass_index() {
        let (_, alice) = agent_with_segments(5);
        let one_pass = alice.build_search_index().unwrap();
        let joined = joined(&alice).unwrap();
        assert_eq!(answers(&joined), answers(&one_pass));
        let (keywords, vectors, records) = answers(&joined);
        assert!(keywords.iter().all(|hits| !hits.is_empty()), "{keywords:?}");
        assert!(vectors.len() > 10);
        assert!(records.values().any(|locations| locations.len() > 1), "some vectors were replaced");
        assert!(records.values().flatten().any(|location| location.segment > 1));
    }

    #[test]
    fn the_only_vector_may_change_its_dimension_in_a_later_segment() {
        let (_, mut alice) = agent_with_segments(1);
        let lot = alice.add_lot("source", b"text").unwrap();
        alice.set_vector(lot, &[1.0, 2.0]).unwrap();
        while alice.report().segments < 3 {
            alice.add_lot("filler", b"words to fill a segment").unwrap();
        }
        let numbers = vector_bytes(&[1.0, 2.0, 3.0]);
        alice.write_entries(&[Entry::Vector { id: lot.get(), numbers: &numbers }]).unwrap();
        let one_pass = alice.build_search_index().unwrap();
        assert_eq!(one_pass.vectors.dimension(), Some(3));
        assert_eq!(answers(&joined(&alice).unwrap()), answers(&one_pass));
    }

    #[test]
    fn a_vector_of_another_dimension_is_refused_where_the_one_pass_refuses_it() {
        for segments_between in [0, 2] {
            let (_, mut alice) = agent_with_segments(2);
            let target = segments_between + alice.report().segments;
            while alice.report().segments < target {
                alice.add_lot("filler", b"words to fill a segment").unwrap();
            }
            let lot = alice.add_lot("source", b"text").unwrap();
            let numbers = vector_bytes(&[1.0, 2.0]);
            alice.write_entries(&[Entry::Vector { id: lot.get(), numbers: &numbers }]).unwrap();
            let refused = alice.build_search_index().map(|_| ());
            assert!(
                matches!(refused, Err(Error::Corrupt { reason: CorruptReason::VectorDimensionDiffers, .. })),
                "{refused:?}"
            );
            assert_eq!(joined(&alice).map(|_| ()), refused);
        }
    }

    #[test]
    fn every_flipped_byte_gives_the_one_pass_error() {
        let (storage, alice) = agent_with_segments(3);
        let mut failures = 0;
        for place in alice.segments_to_index().unwrap() {
            let length = alice.with_segment(place.segment, &place.path, |file, _| Ok(file.len().unwrap())).unwrap();
            for offset in (0..length).step_by(3) {
                flip(&storage, &place.path, offset);
                let one_pass = alice.build_search_index();
                let joined = joined(&alice);
                match (&one_pass, &joined) {
                    (Ok(one_pass), Ok(joined)) => assert_eq!(answers(joined), answers(one_pass)),
                    _ => {
                        failures += 1;
                        assert_eq!(joined.err(), one_pass.err(), "flip at {offset} of {}", place.path);
                    }
                }
                flip(&storage, &place.path, offset);
            }
        }
        assert!(failures > 1000, "{failures}");
    }

    #[test]
    fn a_missing_part_fails_the_join_and_an_unreadable_one_is_its_first_error() {
        let (_, alice) = agent_with_segments(3);
        let places = alice.segments_to_index().unwrap();
        let mut bytes = Vec::new();
        let mut join = SearchIndexJoin::new(&places);
        alice.read_segment(&places[0], &mut bytes).unwrap();
        join.add(index_segment(&bytes, &places[0], alice.alive_nodes()));
        assert!(matches!(join.finish(), Err(Error::Internal { .. })));
        let mut join = SearchIndexJoin::new(&places);
        let unreadable = Error::Internal { what: InternalRule::KeyIs32Bytes };
        alice.read_segment(&places[2], &mut bytes).unwrap();
        join.add(index_segment(&bytes, &places[2], alice.alive_nodes()));
        join.add(SearchIndexPart::unreadable(&places[1], unreadable.clone()));
        alice.read_segment(&places[0], &mut bytes).unwrap();
        join.add(index_segment(&bytes, &places[0], alice.alive_nodes()));
        assert_eq!(join.finish().map(|_| ()), Err(unreadable));
    }

    #[test]
    fn each_vector_is_checked_against_the_latest_of_the_other_nodes() {
        let seen = |id, dimension| VectorSeen { id, dimension, offset: 0 };
        let mut replay = DimensionReplay::default();
        assert!(replay.fits(&seen(1, 3)));
        assert!(replay.fits(&seen(1, 4)), "the only vector may change its dimension");
        assert!(replay.fits(&seen(2, 4)));
        assert!(!replay.fits(&seen(3, 3)));
        let mut replay = DimensionReplay::default();
        for vector in [seen(1, 2), seen(2, 2), seen(1, 2)] {
            assert!(replay.fits(&vector));
        }
        assert!(!replay.fits(&seen(2, 5)), "node 1 still holds a vector of 2");
        assert_eq!(replay.dimensions.get(&2), Some(&2), "a refused vector changes nothing");
    }
}
