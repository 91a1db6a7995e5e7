//! Which pieces a file is held in. A file grows by new pieces at its end; whenever the last
//! piece is at least as long as the one before it, the two are shipped again as one, so a file
//! written a little at a time is held in a number of pieces that grows with the logarithm of
//! its writes (each byte is shipped again that many times at most), and the head stays small.

use alloc::string::String;
use alloc::vec::Vec;

use crate::replica::head::Piece;

/// The pieces of one file after a ship, and what changed.
#[derive(Debug, Clone, Default)]
pub struct FilePlan {
    /// Every piece of the file, in order; those in `new_ranges` still need their bytes.
    pub pieces: Vec<Piece>,
    /// The ranges to upload.
    pub new_ranges: Vec<(u64, u64)>,
    /// Pieces no longer named once the plan's head is written.
    pub superseded: Vec<Piece>,
}

/// Where the shipped pieces of a file end.
#[must_use]
pub fn file_extent_shipped(shipped: &[Piece]) -> u64 {
    shipped.last().map_or(0, |piece| piece.end)
}

/// The pieces file `name` is held in once its first `extent` bytes are shipped, given the
/// pieces `shipped` so far. A `rewritten` file (bytes already shipped changed) is shipped
/// again whole.
#[must_use]
pub fn plan_file_pieces(name: &str, shipped: &[Piece], extent: u64, rewritten: bool, run: u64) -> FilePlan {
    let shipped_end = file_extent_shipped(shipped);
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    if rewritten || extent < shipped_end {
        if extent > 0 {
            ranges.push((0, extent));
        }
    } else {
        ranges.extend(shipped.iter().map(|piece| (piece.start, piece.end)));
        if extent > shipped_end {
            ranges.push((shipped_end, extent));
        }
        merge_equal_tails(&mut ranges);
    }
    let mut plan = FilePlan::default();
    for (start, end) in ranges {
        let kept = shipped.iter().find(|piece| (piece.start, piece.end) == (start, end) && !rewritten);
        match kept {
            Some(piece) => plan.pieces.push(piece.clone()),
            None => {
                plan.pieces.push(Piece { file: String::from(name), start, end, run, digest: [0; 32] });
                plan.new_ranges.push((start, end));
            }
        }
    }
    plan.superseded = shipped.iter().filter(|piece| !plan.pieces.contains(piece)).cloned().collect();
    plan
}

fn merge_equal_tails(ranges: &mut Vec<(u64, u64)>) {
    while let [.., (before_start, before_end), (last_start, last_end)] = ranges.as_slice() {
        if before_end - before_start > last_end - last_start {
            break;
        }
        debug_assert_eq!(*before_end, *last_start, "pieces of a file are contiguous");
        let merged = (*before_start, *last_end);
        ranges.truncate(ranges.len() - 2);
        ranges.push(merged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped_after(writes: &[u64]) -> Vec<Piece> {
        let mut pieces: Vec<Piece> = Vec::new();
        let mut extent = 0;
        for (run, length) in writes.iter().enumerate() {
            extent += length;
            let plan = plan_file_pieces("keys", &pieces, extent, false, run as u64);
            pieces = plan.pieces;
        }
        pieces
    }

    #[test]
    fn growth_keeps_pieces_contiguous_and_few() {
        let pieces = shipped_after(&[10; 1000]);
        assert!(pieces.len() <= 11, "{} pieces for 1000 writes", pieces.len());
        assert_eq!(pieces.first().map(|piece| piece.start), Some(0));
        assert_eq!(pieces.last().map(|piece| piece.end), Some(10_000));
        assert!(pieces.windows(2).all(|pair| pair[0].end == pair[1].start));
    }

    #[test]
    fn a_rewritten_file_is_shipped_whole_and_every_old_piece_superseded() {
        let pieces = shipped_after(&[10, 5]);
        let plan = plan_file_pieces("keys", &pieces, 15, true, 9);
        assert_eq!(plan.new_ranges, [(0, 15)]);
        assert_eq!(plan.superseded, pieces);
    }

    #[test]
    fn nothing_new_changes_nothing() {
        let pieces = shipped_after(&[10, 5]);
        let plan = plan_file_pieces("keys", &pieces, 15, false, 9);
        assert!(plan.new_ranges.is_empty() && plan.superseded.is_empty());
        assert_eq!(plan.pieces, pieces);
    }
}
