//! Where the `cheesedb` command is, for the figures that run it as users do (`cheesedb serve`):
//! the program `CHEESEDB_BIN` names, else the one cargo built beside this benchmark.

use std::path::{Path, PathBuf};

use crate::failure::Failure;

/// The environment variable that may name the `cheesedb` program to run.
pub const PROGRAM_VARIABLE: &str = "CHEESEDB_BIN";

/// The `cheesedb` program: the one [`PROGRAM_VARIABLE`] names, else the one in this
/// executable's folder (cargo puts every binary of a build in the same target folder).
pub fn locate() -> Result<PathBuf, Failure> {
    if let Some(named) = std::env::var_os(PROGRAM_VARIABLE) {
        let program = PathBuf::from(named);
        if !program.is_file() {
            return Err(Failure::new(format!("{PROGRAM_VARIABLE} names {}, which is no file", program.display())));
        }
        return Ok(program);
    }
    let executable = std::env::current_exe()
        .map_err(|error| Failure::new(format!("cannot find this program's own folder: {error}")))?;
    let folder = executable.parent().unwrap_or(Path::new("."));
    beside(folder).ok_or_else(|| {
        Failure::new(format!(
            "no cheesedb program in {}: build it in the same profile as this benchmark (`cargo build --release -p cheesedb-cli`), or name it in {PROGRAM_VARIABLE}",
            folder.display()
        ))
    })
}

/// The `cheesedb` program in `folder`, or in the folder above when `folder` is cargo's `deps`
/// (where a test binary runs from).
fn beside(folder: &Path) -> Option<PathBuf> {
    let name = format!("cheesedb{}", std::env::consts::EXE_SUFFIX);
    let candidates = [Some(folder), folder.parent().filter(|_| folder.ends_with("deps"))];
    candidates.into_iter().flatten().map(|folder| folder.join(&name)).find(|program| program.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_found_in_the_folder_or_above_deps() {
        let root = tempfile::tempdir().unwrap();
        let deps = root.path().join("deps");
        std::fs::create_dir(&deps).unwrap();
        assert_eq!(beside(&deps), None);
        let program = root.path().join(format!("cheesedb{}", std::env::consts::EXE_SUFFIX));
        std::fs::write(&program, b"").unwrap();
        assert_eq!(beside(&deps), Some(program.clone()));
        assert_eq!(beside(root.path()), Some(program));
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        assert_eq!(beside(&elsewhere), None);
    }
}
