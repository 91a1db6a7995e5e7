//! Paths of the simulated disk: names joined by `/`, relative to the root of the disk.

/// The path of the folder holding `path` (`""` for the root).
pub fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The last part of `path`.
pub fn base_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}
