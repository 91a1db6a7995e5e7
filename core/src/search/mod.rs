//! Search over an agent's alive lots and memories: keyword (BM25) and vector (exact cosine),
//! held in RAM and derived from the log, so recall and Erase reach it as they reach the log.

mod hit;

pub use hit::Hit;
mod fusion;
mod keyword;
mod vectors;
mod words;

pub use fusion::reciprocal_rank_fusion;
pub use keyword::KeywordIndex;
pub use vectors::VectorIndex;
pub use words::for_each_word;
