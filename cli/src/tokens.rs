//! The tokens file: a 0600 JSON object in the data folder mapping agent names to their tokens,
//! so later commands can name an agent instead of pasting its secret.
//!
//! It is only ever changed through [`SavedTokens::update`], which holds a lock of its own
//! (`tokens.lock`) from reading to renaming: with a memory server holding the store, several
//! commands may create or delete agents at once, and none may lose another's entry. A rewrite goes through a temporary file, a sync and a rename, so a crash
//! leaves either the old file or the new one.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use cheesedb::Token;

use crate::failure::Failure;

/// The tokens file's name in the data folder.
pub const TOKENS_FILE: &str = "tokens";
const TOKENS_TEMPORARY_FILE: &str = "tokens.tmp";
/// The file whose lock one changer of the tokens file holds at a time.
const TOKENS_LOCK_FILE: &str = "tokens.lock";
/// Only the owner may read or write the tokens.
const TOKENS_FILE_MODE: u32 = 0o600;

/// The saved tokens of one data folder.
#[derive(Debug, Default)]
pub struct SavedTokens {
    by_name: BTreeMap<String, String>,
}

/// The path of the tokens file in `folder`.
pub fn tokens_path(folder: &Path) -> PathBuf {
    folder.join(TOKENS_FILE)
}

impl SavedTokens {
    /// Reads the tokens file of `folder`; a missing file holds no tokens.
    pub fn load(folder: &Path) -> Result<SavedTokens, Failure> {
        let path = tokens_path(folder);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(SavedTokens::default()),
            Err(error) => return Err(Failure::new(format!("cannot read {}: {error}", path.display()))),
        };
        let by_name: BTreeMap<String, String> = serde_json::from_str(&text).map_err(|error| {
            Failure::new(format!("{} is not a tokens file (a JSON object of name to token): {error}", path.display()))
        })?;
        Ok(SavedTokens { by_name })
    }

    /// The token saved for `name`, if any.
    pub fn token(&self, name: &str) -> Result<Option<Token>, Failure> {
        let Some(text) = self.by_name.get(name) else { return Ok(None) };
        let token = text
            .parse::<Token>()
            .map_err(|_| Failure::new(format!("the token saved for agent {name:?} is damaged")))?;
        Ok(Some(token))
    }

    /// Whether a token is saved for `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Remembers `token` for `name`.
    pub fn insert(&mut self, name: &str, token: &Token) {
        self.by_name.insert(name.to_owned(), token.to_string());
    }

    /// Forgets the token of `name`; returns whether one was saved.
    pub fn remove(&mut self, name: &str) -> bool {
        self.by_name.remove(name).is_some()
    }

    /// Reads the tokens file of `folder`, lets `change` change it, and writes it back, while no
    /// other process changes it.
    pub fn update(folder: &Path, change: impl FnOnce(&mut SavedTokens)) -> Result<(), Failure> {
        let lock_path = folder.join(TOKENS_LOCK_FILE);
        let failed = |error: std::io::Error| Failure::new(format!("cannot lock {}: {error}", lock_path.display()));
        // Never through a link: the lock file is created here, by us, and only ever locked.
        let lock = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(TOKENS_FILE_MODE)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&lock_path)
            .map_err(failed)?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).map_err(|error| failed(error.into()))?;
        let mut tokens = SavedTokens::load(folder)?;
        change(&mut tokens);
        tokens.save(folder)
        // The lock goes with the file when `lock` is dropped.
    }

    /// Writes the tokens file of `folder` durably, readable by its owner only.
    fn save(&self, folder: &Path) -> Result<(), Failure> {
        let path = tokens_path(folder);
        let temporary = folder.join(TOKENS_TEMPORARY_FILE);
        let failed = |error: std::io::Error| Failure::new(format!("cannot write {}: {error}", path.display()));
        let text = serde_json::to_string_pretty(&self.by_name).map_err(|error| Failure::new(error.to_string()))?;
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(TOKENS_FILE_MODE)
            .open(&temporary)
            .map_err(failed)?;
        // A temporary file left by an older version may have wider permissions: narrow them.
        file.set_permissions(fs::Permissions::from_mode(TOKENS_FILE_MODE)).map_err(failed)?;
        file.write_all(text.as_bytes()).map_err(failed)?;
        file.write_all(b"\n").map_err(failed)?;
        file.sync_all().map_err(failed)?;
        fs::rename(&temporary, &path).map_err(failed)?;
        File::open(folder).and_then(|directory| directory.sync_all()).map_err(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_survive_a_save_and_load_with_owner_only_permissions() {
        let folder = tempfile::tempdir().unwrap();
        let token = Token::from_bytes([7; 32]);
        let mut tokens = SavedTokens::default();
        tokens.insert("alice \"quoted\"\nname", &token);
        tokens.save(folder.path()).unwrap();
        let loaded = SavedTokens::load(folder.path()).unwrap();
        assert_eq!(loaded.token("alice \"quoted\"\nname").unwrap(), Some(token));
        let mode = fs::metadata(tokens_path(folder.path())).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, TOKENS_FILE_MODE);
    }

    #[test]
    fn a_missing_file_holds_no_tokens_and_a_damaged_one_is_an_error() {
        let folder = tempfile::tempdir().unwrap();
        assert!(SavedTokens::load(folder.path()).unwrap().token("alice").unwrap().is_none());
        fs::write(tokens_path(folder.path()), "not json").unwrap();
        assert!(SavedTokens::load(folder.path()).is_err());
    }
}
