//! Erase on an encrypted agent: the keys of the erased nodes are destroyed where they lie, and
//! the epoch rotates, so that no copy of a segment, taken before or after, can be opened for
//! them again. The sealed bytes stay in the segments until compaction; without keys they are
//! noise.

use alloc::vec::Vec;

use super::AgentEngine;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::storage::Storage;

impl<S: Storage> AgentEngine<S> {
    /// Destroys the keys of every node an Erase covers that still has one (the slots of nodes
    /// whose vectors are covered too), and of every node in `covered`, then starts a new epoch
    /// and destroys the older ones. Returns how many lots and memories lost their keys.
    ///
    /// `covered` names the nodes of an Erase whose sealed bytes may be gone from the files
    /// already (a compaction dropped them): their slots still hold keys that open copies of the
    /// segments taken before, so they go too.
    ///
    /// The order is the crash argument: the recall record is already durable; every slot is
    /// made durable before any epoch key goes (so no node still alive depends on a record's copy
    /// of its secret); slots are zeroed, synced and read back; then the rotation.
    pub(crate) fn erase_by_destroying_keys(&mut self, covered: &[u64]) -> Result<u64, Error> {
        let doomed: Vec<u64> = self.graph.content_to_remove(false).collect();
        let doomed_vectors: Vec<u64> = self.graph.vectors_to_remove(false).collect();
        let mut slots: Vec<u64> = doomed.iter().chain(doomed_vectors.iter()).chain(covered.iter()).copied().collect();
        slots.sort_unstable();
        slots.dedup();
        let next_sequence = self.log.sequence() + 1;
        let sealing =
            self.sealing.as_mut().ok_or(Error::Internal { what: InternalRule::KeysDestroyedOnlyWhenEncrypted })?;
        sealing.sync_key_table()?;
        // The mutant leaves the keys where they are: the text stays readable with the token.
        if !mutant!(SkipKeyDestruction) {
            sealing.destroy_slots(&slots)?;
        }
        if !mutant!(SkipEpochRotation) {
            sealing.start_epoch(&self.storage, next_sequence)?;
            sealing.destroy_older_epochs()?;
        }
        for id in &doomed {
            let location = self.graph.location(*id)?;
            self.graph.set_location(*id, location, false);
            self.lot_labels.forget(*id);
        }
        for id in doomed_vectors {
            self.graph.set_vector_on_disk(id, false);
            if let Some(index) = self.search.as_mut() {
                index.vector_records_erased(id);
            }
        }
        self.snapshot_stale = true;
        Ok(doomed.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use crate::id::{Leg, Mode, Removal};
    use crate::limits::Options;
    use crate::ram_storage::RamStorage;
    use crate::store::StoreEngine;

    #[test]
    fn trust_resting_on_an_erased_encrypted_lot_is_the_same_before_and_after_a_reopen() {
        let mut store = StoreEngine::open(RamStorage::default(), Options::default()).unwrap();
        let token = store.create_encrypted_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let mut rules = crate::trust::TrustRules::new();
        rules.set("web_page", crate::trust::TrustLevel::Low);
        let web = alice.add_lot("web_page", b"rumour").unwrap();
        let memory = alice.remember(b"derived", &[Leg::from([web])]).unwrap();
        assert_eq!(alice.trust(memory, &rules).unwrap(), crate::trust::TrustLevel::Low);
        alice.recall(web, Mode::Fair, Removal::Erase).unwrap();
        let in_session = alice.trust(memory, &rules).unwrap();
        drop(alice);
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        assert_eq!(alice.trust(memory, &rules).unwrap(), in_session);
    }

    fn contains(storage: &RamStorage, needle: &[u8]) -> bool {
        storage.files().iter().any(|(_, bytes)| bytes.windows(needle.len()).any(|window| window == needle))
    }

    #[test]
    fn an_encrypted_agent_keeps_no_text_in_the_clear_and_an_erase_destroys_its_keys() {
        let storage = RamStorage::default();
        let mut store = StoreEngine::open(storage.clone(), Options::default()).unwrap();
        let token = store.create_encrypted_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let a = alice.add_lot("secret-label", b"canary-one-two").unwrap();
        let b = alice.add_lot("web", b"kept text").unwrap();
        let m = alice.remember(b"canary derived", &[Leg::from([a])]).unwrap();
        assert_eq!(alice.get(a).unwrap().content(), Some(&b"canary-one-two"[..]));
        assert!(!contains(&storage, b"canary"));
        assert!(!contains(&storage, b"secret-label"));
        let fingerprint = alice.verify().unwrap();
        drop(alice);
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        assert_eq!(alice.verify().unwrap(), fingerprint);
        assert_eq!(alice.get(m).unwrap().content(), Some(&b"canary derived"[..]));
        assert_eq!(alice.recall(a, Mode::Fair, Removal::Erase).unwrap(), alloc::vec![m]);
        assert_eq!(alice.audit(a).unwrap().content(), None);
        assert_eq!(alice.audit(m).unwrap().content(), None);
        assert_eq!(alice.get(b).unwrap().content(), Some(&b"kept text"[..]));
        alice.verify().unwrap();
        drop(alice);
        let alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        assert_eq!(alice.audit(a).unwrap().content(), None);
        assert_eq!(alice.get(b).unwrap().content(), Some(&b"kept text"[..]));
        alice.verify().unwrap();
    }
}
