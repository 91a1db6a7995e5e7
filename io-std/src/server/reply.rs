//! A session's answer to one request: one response, or a list sent in parts.

use crate::protocol::{Response, WireHit, WireLeftBehind, PROTOCOL_VERSION};

/// Ids or hits in one frame: at most 10 bytes each, far below a frame's limit.
const NUMBERS_PER_FRAME: usize = 65_536;
/// Names in one frame: an agent name is at most 256 bytes.
const NAMES_PER_FRAME: usize = 16_384;
/// Paths left behind in one frame: a path is at most a few KiB.
const PATHS_PER_FRAME: usize = 1_024;

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
}

/// `items` in parts of at most `per_frame`, each made a response by `make` with `more` set
/// on all but the last; an empty list is one empty part.
fn parts<T>(items: Vec<T>, per_frame: usize, make: impl Fn(Vec<T>, bool) -> Response) -> Vec<Response> {
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
}
