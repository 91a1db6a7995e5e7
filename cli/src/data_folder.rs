//! Where the command keeps its data: `--dir`, else `CHEESEDB_DIR`, else `~/.cheesedb`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::failure::Failure;

/// The environment variable naming the data folder.
pub const DATA_FOLDER_VARIABLE: &str = "CHEESEDB_DIR";
/// The data folder's name inside the home folder, when nothing else names one.
pub const DEFAULT_FOLDER_NAME: &str = ".cheesedb";

/// Picks the data folder from the `--dir` option, the environment, or the home folder.
pub fn resolve(option: Option<PathBuf>) -> Result<PathBuf, Failure> {
    let from_environment = std::env::var_os(DATA_FOLDER_VARIABLE);
    let home = std::env::var_os("HOME");
    choose(option, from_environment, home)
}

fn choose(
    option: Option<PathBuf>,
    from_environment: Option<OsString>,
    home: Option<OsString>,
) -> Result<PathBuf, Failure> {
    if let Some(folder) = option {
        return Ok(folder);
    }
    if let Some(folder) = from_environment.filter(|value| !value.is_empty()) {
        return Ok(PathBuf::from(folder));
    }
    match home.filter(|value| !value.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(DEFAULT_FOLDER_NAME)),
        None => Err(Failure::new(format!(
            "no data folder: HOME is not set; pass --dir FOLDER or set {DATA_FOLDER_VARIABLE}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_wins_over_the_environment_and_home() {
        let chosen = choose(Some("/a".into()), Some("/b".into()), Some("/home/x".into()));
        assert_eq!(chosen, Ok(PathBuf::from("/a")));
    }

    #[test]
    fn the_environment_wins_over_home() {
        assert_eq!(choose(None, Some("/b".into()), Some("/home/x".into())), Ok(PathBuf::from("/b")));
    }

    #[test]
    fn home_is_the_fallback() {
        assert_eq!(choose(None, Some("".into()), Some("/home/x".into())), Ok(PathBuf::from("/home/x/.cheesedb")));
        assert!(choose(None, None, None).is_err());
    }
}
