//! [`SeededRandom`]: any storage with its random bytes drawn from a fixed seed instead, so that
//! the same operations write the same bytes on every backend.

use std::sync::{Arc, Mutex};

use cheesedb::Storage;
use cheesedb_sim::random::SplitMix64;

/// `inner` with a deterministic [`Storage::fill_random`]; clones share one stream.
#[derive(Debug, Clone)]
pub struct SeededRandom<S> {
    inner: S,
    stream: Arc<Mutex<SplitMix64>>,
}

impl<S> SeededRandom<S> {
    /// `inner`, drawing random bytes from a stream seeded with `seed`.
    pub fn new(inner: S, seed: u64) -> SeededRandom<S> {
        SeededRandom { inner, stream: Arc::new(Mutex::new(SplitMix64::new(seed))) }
    }
}

impl<S: Storage> Storage for SeededRandom<S> {
    type File = S::File;
    type Error = S::Error;

    fn open_file(&self, path: &str, create: bool) -> Result<S::File, S::Error> {
        self.inner.open_file(path, create)
    }
    fn exists(&self, path: &str) -> Result<bool, S::Error> {
        self.inner.exists(path)
    }
    fn holds(&self, path: &str, kind: cheesedb::NameKind) -> Result<bool, S::Error> {
        self.inner.holds(path, kind)
    }
    fn list(&self, folder: &str) -> Result<Vec<String>, S::Error> {
        self.inner.list(folder)
    }
    fn create_folder(&self, path: &str) -> Result<(), S::Error> {
        self.inner.create_folder(path)
    }
    fn remove_folder(&self, path: &str) -> Result<(), S::Error> {
        self.inner.remove_folder(path)
    }
    fn rename(&self, from: &str, to: &str) -> Result<(), S::Error> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &str) -> Result<(), S::Error> {
        self.inner.remove_file(path)
    }
    fn sync_folder(&self, folder: &str) -> Result<(), S::Error> {
        self.inner.sync_folder(folder)
    }
    fn fill_random(&self, out: &mut [u8]) -> Result<(), S::Error> {
        let mut stream = self.stream.lock().unwrap();
        for chunk in out.chunks_mut(8) {
            let word = stream.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}
