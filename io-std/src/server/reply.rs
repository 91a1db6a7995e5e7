//! A session's answer to one request: one response, or a list sent in parts.

use cheesedb_core::limits::CONTENT_MAX_BYTES;

use crate::protocol::{
    Response, SpaceRemoved, WireFound, WireHit, WireLeftBehind, WireRanking, WireSpaceMembers, PROTOCOL_VERSION,
};

/// Ids or hits in one frame: at most 10 bytes each, far below a frame's limit.
const NUMBERS_PER_FRAME: usize = 65_536;
/// Names in one frame: an agent name is at most 256 bytes.
const NAMES_PER_FRAME: usize = 16_384;
/// Spaces in one frame: each lists at most `MEMBERS_PER_SPACE_MAX` names of at most 256 bytes.
const SPACES_PER_FRAME: usize = 16;
/// Paths left behind in one frame: a path is at most a few KiB.
const PATHS_PER_FRAME: usize = 1_024;
/// The bytes of hits one frame of a search page holds, about: one hit of the largest content
/// fits alone, with the frame's room for the rest, and small hits share a frame.
const PAGE_BYTES_PER_FRAME: usize = CONTENT_MAX_BYTES;

/// The answer to a hello of this version.
pub fn hello() -> Response {
    Response::Hello { version: PROTOCOL_VERSION, server: format!("cheesedb {}", env!("CARGO_PKG_VERSION")) }
}

/// The answer to one request.
#[derive(Debug)]
pub enum Reply {
    /// One response.
    One(Response),
    /// Ids, ascending.
    Ids(Vec<u64>),
    /// Search hits, best first.
    Hits(Vec<WireHit>),
    /// Agent names.
    Names(Vec<String>),
    /// What deleting agents left behind.
    LeftBehind(Vec<WireLeftBehind>),
    /// What a space's recall removed: the space's ids, then each member's.
    SpaceRemoved(Vec<SpaceRemoved>),
    /// Spaces with their members.
    Spaces(Vec<WireSpaceMembers>),
    /// A page of search hits, best first, and how it was ranked.
    Page {
        /// How it was ranked.
        ranking: WireRanking,
        /// The hits.
        found: Vec<WireFound>,
    },
}

/// `items` in parts of at most `per_frame`, each made a part by `make` with `more` set
/// on all but the last; an empty list is one empty part.
fn parts<T, Part>(items: Vec<T>, per_frame: usize, make: impl Fn(Vec<T>, bool) -> Part) -> Vec<Part> {
    let mut responses = Vec::with_capacity(items.len() / per_frame + 1);
    let mut items = items.into_iter().peekable();
    loop {
        let part: Vec<T> = items.by_ref().take(per_frame).collect();
        let more = items.peek().is_some();
        responses.push(make(part, more));
        if !more {
            return responses;
        }
    }
}

/// The hits of a page in parts of about [`PAGE_BYTES_PER_FRAME`] each (at least one hit a part),
/// each a response saying how the page was ranked, with `more` set on all but the last.
fn page_parts(ranking: &WireRanking, found: Vec<WireFound>) -> Vec<Response> {
    let mut parts: Vec<Vec<WireFound>> = vec![Vec::new()];
    let mut part_bytes = 0usize;
    for hit in found {
        let bytes = hit.size_bytes();
        if part_bytes.saturating_add(bytes) > PAGE_BYTES_PER_FRAME && parts.last().is_some_and(|part| !part.is_empty())
        {
            parts.push(Vec::new());
            part_bytes = 0;
        }
        part_bytes = part_bytes.saturating_add(bytes);
        if let Some(part) = parts.last_mut() {
            part.push(hit);
        }
    }
    let last = parts.len() - 1;
    parts
        .into_iter()
        .enumerate()
        .map(|(index, found)| Response::SearchPage { ranking: ranking.clone(), found, more: index < last })
        .collect()
}

/// Each owner's removed ids in parts of at most [`NUMBERS_PER_FRAME`], in order, with `more`
/// set on all but the last part.
fn removed_parts(removed: Vec<SpaceRemoved>) -> Vec<Response> {
    let mut split = Vec::new();
    for SpaceRemoved { member, ids } in removed {
        split.extend(parts(ids, NUMBERS_PER_FRAME, |ids, _| SpaceRemoved { member: member.clone(), ids }));
    }
    let last = split.len().saturating_sub(1);
    split
        .into_iter()
        .enumerate()
        .map(|(index, removed)| Response::SpaceRemoved { removed, more: index < last })
        .collect()
}

impl Reply {
    /// The responses to send, in order.
    pub fn into_responses(self) -> Vec<Response> {
        match self {
            Reply::One(response) => vec![response],
            Reply::Ids(ids) => parts(ids, NUMBERS_PER_FRAME, |ids, more| Response::Ids { ids, more }),
            Reply::Hits(hits) => parts(hits, NUMBERS_PER_FRAME, |hits, more| Response::Hits { hits, more }),
            Reply::Names(names) => parts(names, NAMES_PER_FRAME, |names, more| Response::Names { names, more }),
            Reply::LeftBehind(entries) => {
                parts(entries, PATHS_PER_FRAME, |entries, more| Response::LeftBehind { entries, more })
            }
            Reply::Page { ranking, found } => page_parts(&ranking, found),
            Reply::SpaceRemoved(removed) => removed_parts(removed),
            Reply::Spaces(spaces) => parts(spaces, SPACES_PER_FRAME, |spaces, more| Response::Spaces { spaces, more }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_is_split_and_marked() {
        let ids: Vec<u64> = (0..(2 * NUMBERS_PER_FRAME as u64 + 1)).collect();
        let responses = Reply::Ids(ids).into_responses();
        assert_eq!(responses.len(), 3);
        let flags: Vec<bool> = responses
            .iter()
            .map(|response| match response {
                Response::Ids { more, .. } => *more,
                _ => panic!("not ids"),
            })
            .collect();
        assert_eq!(flags, [true, true, false]);
        assert_eq!(Reply::Ids(Vec::new()).into_responses(), vec![Response::Ids { ids: Vec::new(), more: false }]);
    }

    fn hit(id: u64, content_bytes: usize) -> WireFound {
        WireFound {
            id,
            score: 1.0,
            kind: crate::protocol::WireFoundKind::Lot { label: String::from("note") },
            content: vec![b'x'; content_bytes],
            trust: crate::protocol::WireTrust::Normal,
            has_vector: false,
        }
    }

    #[test]
    fn a_page_of_large_hits_is_split_so_each_frame_stays_under_its_limit() {
        let found =
            vec![hit(1, CONTENT_MAX_BYTES), hit(2, 10), hit(3, CONTENT_MAX_BYTES / 2), hit(4, CONTENT_MAX_BYTES / 2)];
        let ranking = WireRanking::Hybrid;
        let responses = Reply::Page { ranking: ranking.clone(), found }.into_responses();
        let mut ids = Vec::new();
        let mut flags = Vec::new();
        for response in &responses {
            let mut body = Vec::new();
            response.encode_into(&mut body).unwrap();
            assert!(body.len() <= crate::protocol::FRAME_MAX_BYTES, "{} bytes", body.len());
            let Response::SearchPage { ranking: said, found, more } = response else { panic!("not a page") };
            assert_eq!(said, &ranking);
            ids.extend(found.iter().map(|hit| hit.id));
            flags.push(*more);
        }
        assert_eq!(ids, [1, 2, 3, 4]);
        assert_eq!(flags, [true, true, false]);
        let empty = Reply::Page { ranking: WireRanking::Keyword, found: Vec::new() }.into_responses();
        assert_eq!(empty, vec![Response::SearchPage { ranking: WireRanking::Keyword, found: Vec::new(), more: false }]);
        let small: Vec<WireFound> = (0..100).map(|id| hit(id, 100)).collect();
        assert_eq!(Reply::Page { ranking: WireRanking::Keyword, found: small }.into_responses().len(), 1);
    }
}
