//! Search over an agent's alive lots and memories: keyword (BM25) and vector (exact cosine),
//! held in RAM and derived from the log, so recall and Erase reach it as they reach the log.
//! Everything here is plain data structures, independent of the engine: the engine feeds them
//! the contents and vectors of alive nodes and removes what a recall removes.

mod ascii_words;
mod dictionary;
mod fusion;
mod hit;
mod keyword;
mod postings;
mod top;
mod vectors;
mod words;

pub use fusion::{reciprocal_rank_fusion, RECIPROCAL_RANK_K};
pub use hit::Hit;
pub use keyword::KeywordIndex;
pub use vectors::VectorIndex;
pub use words::for_each_word;
