//! The trust rules the server answers trust requests with: the data folder's `trust.toml`,
//! read once when the server starts.

use std::path::Path;

use cheesedb::TrustRules;

use crate::failure::Failure;

/// The rules of the data folder `folder` (every label `normal` without a `trust.toml`).
pub fn load(folder: &Path) -> Result<TrustRules, Failure> {
    crate::trust_rules::load(folder)
}
