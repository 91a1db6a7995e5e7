//! Encrypting a plaintext agent: a rewrite into a new agent folder, a switch of the catalog, and
//! the plaintext files overwritten with zeros and removed.
//!
//! The crash argument, step by step:
//! 1. The encrypted copy is written under a new agent number, in a folder the catalog does not
//!    name. A crash here leaves the plaintext agent whole and the copy an orphan, which the next
//!    open removes.
//! 2. The catalog is rewritten (temporary file, sync, rename, folder sync) with the same entry
//!    (name, token hash, place in the list) now naming the new number, encrypted. The rename is
//!    atomic: after a crash the catalog names one folder or the other, whole.
//! 3. The plaintext folder's files are overwritten with zeros where they lie, synced, and
//!    removed. A crash here leaves that folder an orphan; the next open overwrites what is left
//!    of it with zeros too before removing it, so its text never merely becomes free blocks.

use super::{remove_agent_files, stage_catalog, FileRemoval, StoreEngine};
use crate::engine::{io_error, outcome_unknown, AgentEngine};
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::fingerprint::Fingerprint;
use crate::log::names::{agent_folder, CATALOG_FILE, CATALOG_TEMPORARY_FILE};
use crate::seal::AgentSecrets;
use crate::storage::Storage;
use crate::token::Token;

impl<S: Storage + Clone> StoreEngine<S> {
    /// Converts the plaintext agent that `token` opens into an encrypted one, as if it had been
    /// created with [`StoreEngine::create_encrypted_agent`]: same name, same token, same ids and
    /// the same history, every content still present sealed under keys the token yields. What
    /// an Erase or a compaction took stays gone (a lot whose content is gone also loses its
    /// label, which an encrypted agent keeps inside the sealed bytes). The plaintext files are
    /// overwritten with zeros and removed before this returns. Returns the new head fingerprint:
    /// the history is written again under a new chain, so fingerprints kept before no longer
    /// match.
    ///
    /// No engine of the agent may be open meanwhile (the `cheesedb` crate's store refuses with
    /// `Error::AgentInUse`). A crash at any point leaves either the plaintext agent whole or the
    /// encrypted one whole; the next open removes the other.
    ///
    /// # Errors
    ///
    /// - `Error::UnknownToken` when no agent of this store has that token.
    /// - `Error::AlreadyEncrypted` when the agent is encrypted already.
    /// - `Error::Corrupt` when the agent's log fails a check while it is copied (nothing changes).
    /// - `Error::Io` when the storage fails before the switch: the plaintext agent stays as it
    ///   was. `Error::OutcomeUnknown` when the catalog's rename may not be durable: this store
    ///   goes on with the encrypted agent, and after a crash the next open finds one of the two.
    ///   `Error::Io` after the switch, while the plaintext files are overwritten: the agent is
    ///   encrypted, and the next open finishes the overwrite.
    pub fn encrypt_agent(&mut self, token: &Token) -> Result<Fingerprint, Error> {
        let old = self.authenticate(token)?.number();
        let name = self.agent_name(old)?;
        if self.is_encrypted(old) {
            return Err(Error::AlreadyEncrypted { name });
        }
        let new = self.catalog.next_number;
        let head = match self.write_encrypted_copy(old, new, token) {
            Ok(head) => head,
            Err(error) => {
                self.discard_copy(new);
                return Err(error);
            }
        };
        self.switch_to_copy(old, new)?;
        let left = remove_agent_files(&self.storage, &agent_folder(old), FileRemoval::ZerosFirst)?;
        self.left_behind.extend(left);
        self.storage.sync_folder("").map_err(|error| io_error(StorageOperation::Syncing, "", error))?;
        Ok(head)
    }

    /// Writes the encrypted copy of agent `old` as agent `new`, durably, and closes both.
    fn write_encrypted_copy(&self, old: u64, new: u64, token: &Token) -> Result<Fingerprint, Error> {
        let (storage, options) = (self.storage.clone(), self.options.clone());
        // Opening finishes what a crash left of the plaintext agent (a torn end, an Erase) first.
        let source = AgentEngine::open(storage.clone(), old, options.clone())?;
        let secrets = AgentSecrets::from_token(token.as_bytes());
        let mut copy = AgentEngine::create_encrypted(storage, new, options, secrets)?;
        copy.copy_sealed_from(&source)?;
        let head = copy.head();
        copy.close()?;
        // The plaintext agent's snapshot is a cache about to be overwritten: its failure is none
        // of the conversion's.
        let _ = source.close();
        Ok(head)
    }

    /// Removes the folder of a copy that did not finish; what cannot be removed now, the next
    /// open removes (the catalog never named it).
    fn discard_copy(&mut self, new: u64) {
        if let Ok(left) = remove_agent_files(&self.storage, &agent_folder(new), FileRemoval::Unlink) {
            self.left_behind.extend(left);
        }
        let _ = self.storage.sync_folder("");
    }

    /// Puts the copy in force: the catalog entry of agent `old` names `new`, encrypted, and the
    /// next number passes `new`.
    fn switch_to_copy(&mut self, old: u64, new: u64) -> Result<(), Error> {
        let mut next = self.catalog.clone();
        next.next_number = new + 1;
        for entry in next.entries.iter_mut().filter(|entry| entry.number == old) {
            entry.number = new;
            entry.encrypted = true;
        }
        if let Err(error) = stage_catalog(&self.storage, &next) {
            self.discard_copy(new);
            return Err(error);
        }
        if let Err(error) = self.storage.rename(CATALOG_TEMPORARY_FILE, CATALOG_FILE) {
            self.discard_copy(new);
            return Err(io_error(StorageOperation::Renaming, CATALOG_TEMPORARY_FILE, error));
        }
        // From the rename on, the files name the copy: this store goes on with it. Whether the
        // rename is durable, only a successful folder sync says; until then both folders stay.
        self.catalog = next;
        let synced = self.storage.sync_folder("");
        synced.map_err(|error| outcome_unknown(io_error(StorageOperation::Syncing, "", error)))
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use crate::error::Error;
    use crate::id::{Id, Leg, Mode, Removal};
    use crate::limits::Options;
    use crate::node::{Node, NodeKind};
    use crate::ram_storage::RamStorage;
    use crate::read_set::ReadSet;
    use crate::store::StoreEngine;
    use crate::token::Token;

    fn contains(storage: &RamStorage, needle: &[u8]) -> bool {
        storage.files().iter().any(|(_, bytes)| bytes.windows(needle.len()).any(|window| window == needle))
    }

    /// Every node as `audit` shows it, a lot whose content is gone without its label: an
    /// encrypted agent keeps labels inside the sealed bytes.
    fn every_node(store: &StoreEngine<RamStorage>, token: &Token) -> Vec<Node> {
        let agent = store.open_agent(store.authenticate(token).unwrap()).unwrap();
        (1..=agent.node_count())
            .map(|id| {
                let mut node = agent.audit(Id::from(id)).unwrap();
                if node.content.is_none() {
                    if let NodeKind::Lot { label } = &mut node.kind {
                        label.clear();
                    }
                }
                node
            })
            .collect()
    }

    /// A plaintext agent with every kind of record: lots, memories with two legs and with tracked
    /// parents, vectors, a recall that hides, one that erases, and a compaction.
    fn plaintext_history(store: &mut StoreEngine<RamStorage>) -> Token {
        let token = store.create_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let a = alice.add_lot("label-user", b"canary-alpha lives in Pune").unwrap();
        let b = alice.add_lot("label-web", b"canary-beta profile page").unwrap();
        let c = alice.add_lot("label-tool", b"rain over the city").unwrap();
        let m1 = alice.remember(b"canary-derived from alpha", &[Leg::from([a])]).unwrap();
        let m2 = alice.remember(b"umbrella weather memory", &[Leg::from([b]), Leg::from([c])]).unwrap();
        let mut reads = ReadSet::new();
        reads.note(c);
        let m3 = alice.remember_tracked(b"tracked rain memory", &[Leg::from([m2])], &reads).unwrap();
        alice.set_vector(c, &[1.0, 0.0]).unwrap();
        alice.set_vector(m2, &[0.0, 1.0]).unwrap();
        alice.set_vector(m1, &[0.5, 0.5]).unwrap();
        let d = alice.add_lot("label-temporary", b"canary-gamma hidden then compacted").unwrap();
        alice.recall(d, Mode::Fair, Removal::Untrusted).unwrap();
        alice.compact().unwrap();
        alice.recall(b, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(alice.recall(a, Mode::Strict, Removal::Erase).unwrap(), vec![m1]);
        let _ = m3;
        token
    }

    #[test]
    fn an_encrypted_agent_keeps_the_history_and_no_text_in_the_clear() {
        let storage = RamStorage::default();
        let mut store = StoreEngine::open(storage.clone(), Options::default()).unwrap();
        let token = plaintext_history(&mut store);
        let bob = store.create_agent("bob").unwrap();
        let before = every_node(&store, &token);
        let (lots, memories) = {
            let alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
            (alice.alive_lots(), alice.alive_memories())
        };
        assert!(contains(&storage, b"canary-beta"), "the hidden text is in the plaintext files");

        let head = store.encrypt_agent(&token).unwrap();
        assert_eq!(store.agent_names(), ["alice", "bob"]);
        let old_folder = crate::log::names::agent_folder(1);
        assert!(storage.files().iter().all(|(path, _)| !path.starts_with(&old_folder)), "the plaintext files are gone");
        let key = store.authenticate(&token).unwrap();
        assert!(store.is_encrypted(key.number()));
        assert!(!store.is_encrypted(store.authenticate(&bob).unwrap().number()));
        for needle in [&b"canary"[..], b"label-", b"rain over", b"umbrella"] {
            assert!(!contains(&storage, needle), "{:?} is in a file", core::str::from_utf8(needle));
        }
        assert_eq!(every_node(&store, &token), before);
        let mut alice = store.open_agent(key).unwrap();
        assert!(alice.is_encrypted());
        assert_eq!((alice.alive_lots(), alice.alive_memories()), (lots, memories));
        assert_eq!(alice.verify().unwrap(), head);
        let mut found: Vec<u64> = alice.search("rain", 10).unwrap().iter().map(|hit| hit.id.get()).collect();
        found.sort_unstable();
        assert_eq!(found, [3, 6]);
        let nearest = alice.search_vector(&[0.0, 1.0], 1).unwrap();
        assert_eq!(nearest.first().map(|hit| hit.id.get()), Some(5));
        assert!(alice.has_vector(Id::from(5)).unwrap());

        // It goes on as an encrypted agent: writes, an Erase, a reopen.
        let e = alice.add_lot("label-new", b"canary-delta after the conversion").unwrap();
        assert!(!contains(&storage, b"canary-delta"));
        assert_eq!(alice.recall(Id::from(3), Mode::Fair, Removal::Erase).unwrap(), [Id::from(5), Id::from(6)]);
        drop(alice);
        let alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        assert_eq!(alice.get(e).unwrap().content(), Some(&b"canary-delta after the conversion"[..]));
        assert_eq!(alice.audit(Id::from(5)).unwrap().content(), None);
        alice.verify().unwrap();
    }

    #[test]
    fn an_agent_encrypted_already_or_an_unknown_token_is_refused() {
        let mut store = StoreEngine::open(RamStorage::default(), Options::default()).unwrap();
        let token = store.create_encrypted_agent("alice").unwrap();
        let refused = store.encrypt_agent(&token);
        assert_eq!(refused, Err(Error::AlreadyEncrypted { name: "alice".into() }));
        assert_eq!(store.encrypt_agent(&Token::from_bytes([7; 32])), Err(Error::UnknownToken));
        let plain = store.create_agent("bob").unwrap();
        store.encrypt_agent(&plain).unwrap();
        assert_eq!(store.encrypt_agent(&plain), Err(Error::AlreadyEncrypted { name: "bob".into() }));
    }

    #[test]
    fn an_empty_agent_and_a_many_segment_agent_convert() {
        let storage = RamStorage::default();
        let options = Options::default().segment_size_max_bytes(4096).preallocate_bytes(0).snapshot_after_bytes(3000);
        let mut store = StoreEngine::open(storage.clone(), options).unwrap();
        let empty = store.create_agent("empty").unwrap();
        store.encrypt_agent(&empty).unwrap();
        assert_eq!(store.open_agent(store.authenticate(&empty).unwrap()).unwrap().node_count(), 0);
        let token = store.create_agent("big").unwrap();
        let mut big = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let first = big.add_lot("source", b"the first source").unwrap();
        for index in 0..200u32 {
            let text = alloc::format!("canary memory number {index}");
            big.remember(text.as_bytes(), &[Leg::from([first])]).unwrap();
        }
        assert!(big.report().segments > 3, "{:?}", big.report());
        drop(big);
        let before = every_node(&store, &token);
        store.encrypt_agent(&token).unwrap();
        assert!(!contains(&storage, b"canary"));
        assert_eq!(every_node(&store, &token), before);
        let big = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        assert!(big.report().segments > 3);
        big.verify().unwrap();
    }
}
