//! An object store in memory, for the replication part of a run: the core's [`Bucket`] with the
//! conditional writes of S3 and the faults of a network in between.
//!
//! Every call either happens whole or not at all. The faults each seed draws the odds of:
//!
//! - a put lost: nothing stored, the caller told `Unavailable`;
//! - a put whose reply is lost: stored, the caller told `Unavailable`;
//! - a put delayed: the caller told `Unavailable`, the put applied a few calls later, after
//!   calls made since (so writes arrive out of order);
//! - a put duplicated: applied now and once more a few calls later;
//! - a get, a list or a delete failing (a delete sometimes done with its reply lost).
//!
//! The store may also lie (a seed draws whether its LIST lies, the harness when a head does):
//!
//! - a LIST answer names foreign keys (objects planted outside the agent's replica) whatever the
//!   prefix asked for, or names every key of the bucket, as a store that ignores the prefix;
//! - a GET of one head returns it with an access fact altered (token hash, agent number or the
//!   encrypted flag) and its checksum recomputed.
//!
//! A put applied late is judged when it arrives: a create finds the key taken, a replacement
//! finds the tag moved, exactly as a late request would. Requests still in flight arrive at the
//! latest when the harness drains the network at the end of a ship (see docs/SIMULATION.md).

use std::collections::BTreeMap;

use cheesedb_core::replica::{Bucket, BucketError, ObjectTag, ReplicaHead};

use crate::random::Random;

/// How often each fault happens, per call of its kind.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BucketFaults {
    /// A put is lost before it is stored.
    pub put_lost: f64,
    /// A put is stored but its reply is lost.
    pub reply_lost: f64,
    /// A put arrives later, after other calls.
    pub put_delayed: f64,
    /// A put arrives twice, the second time later.
    pub put_duplicated: f64,
    /// A get, list or delete fails.
    pub read_failed: f64,
}

impl BucketFaults {
    /// A seed's mix: each fault off, rare or frequent.
    pub fn draw(random: &mut Random) -> BucketFaults {
        let mut odds = || *random.pick(&[0.0, 0.0, 0.02, 0.08]).unwrap_or(&0.0);
        BucketFaults {
            put_lost: odds(),
            reply_lost: odds(),
            put_delayed: odds(),
            put_duplicated: odds(),
            read_failed: odds(),
        }
    }
}

/// How a seed's LIST answers lie.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ListLie {
    /// They tell the truth.
    #[default]
    None,
    /// They also name the planted foreign keys, whatever the prefix.
    ForeignKeys,
    /// They name every key of the bucket, whatever the prefix.
    PrefixIgnored,
}

impl ListLie {
    /// A seed's choice: half the seeds are told the truth.
    pub fn draw(random: &mut Random) -> ListLie {
        *random
            .pick(&[ListLie::None, ListLie::None, ListLie::ForeignKeys, ListLie::PrefixIgnored])
            .unwrap_or(&ListLie::None)
    }
}

/// The access fact a lying head has altered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantLie {
    /// Its token hash is this one (another agent's).
    TokenHash([u8; 32]),
    /// Its agent number is this one (another agent's).
    AgentNumber(u64),
    /// Its encrypted flag is flipped.
    EncryptedFlipped,
}

/// Faults injected, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BucketFaultCounts {
    /// Puts lost.
    pub puts_lost: u64,
    /// Replies lost (puts and deletes).
    pub replies_lost: u64,
    /// Puts delayed.
    pub puts_delayed: u64,
    /// Puts duplicated.
    pub puts_duplicated: u64,
    /// Gets, lists and deletes failed.
    pub reads_failed: u64,
    /// LIST answers that named keys they should not have.
    pub lists_lied: u64,
    /// Heads returned with an access fact altered.
    pub heads_lied: u64,
}

impl BucketFaultCounts {
    /// Every fault.
    pub fn total(&self) -> u64 {
        self.puts_lost
            + self.replies_lost
            + self.puts_delayed
            + self.puts_duplicated
            + self.reads_failed
            + self.lists_lied
            + self.heads_lied
    }
}

/// A put on its way: what it asks, and how many calls pass before it arrives.
#[derive(Debug, Clone)]
struct InFlight {
    key: String,
    bytes: Vec<u8>,
    /// `None` for a create (`If-None-Match: *`), the tag required for a replacement.
    expected: Option<ObjectTag>,
    calls_left: u64,
}

/// The most calls a put stays in flight.
const DELAY_MAX_CALLS: u64 = 4;

/// The object store: objects, the tag of each, and the puts in flight.
#[derive(Debug, Clone)]
pub struct SimBucket {
    objects: BTreeMap<String, (Vec<u8>, ObjectTag)>,
    next_tag: u64,
    faults: BucketFaults,
    faults_on: bool,
    random: Random,
    in_flight: Vec<InFlight>,
    /// Calls that still succeed before the caller is cut off (a shipper that stops mid-ship).
    calls_before_cut: Option<u64>,
    counts: BucketFaultCounts,
    list_lie: ListLie,
    /// Objects of no replica of the primary, written by [`SimBucket::plant_foreign`]: no shipper
    /// may delete them.
    foreign: Vec<String>,
    /// The head key whose GET lies, and how.
    head_lie: Option<(String, GrantLie)>,
}

impl SimBucket {
    /// An empty bucket whose faults follow `faults` and whose choices come from `random`.
    pub fn new(faults: BucketFaults, random: Random) -> SimBucket {
        SimBucket {
            objects: BTreeMap::new(),
            next_tag: 1,
            faults,
            faults_on: true,
            random,
            in_flight: Vec::new(),
            calls_before_cut: None,
            counts: BucketFaultCounts::default(),
            list_lie: ListLie::None,
            foreign: Vec::new(),
            head_lie: None,
        }
    }

    /// How LIST answers lie.
    pub fn list_lie(&self) -> ListLie {
        self.list_lie
    }

    /// Makes LIST answers lie as `lie` says, from now on (faults on or off).
    pub fn set_list_lie(&mut self, lie: ListLie) {
        self.list_lie = lie;
    }

    /// Writes an object that belongs to no replica of the primary.
    pub fn plant_foreign(&mut self, key: &str, bytes: &[u8]) {
        self.overwrite(key, bytes.to_vec());
        self.foreign.push(key.to_string());
    }

    /// The planted foreign objects that are gone or changed: none, unless someone deleted what
    /// was not theirs.
    pub fn foreign_objects_lost(&self, bytes: &[u8]) -> Vec<String> {
        self.foreign.iter().filter(|key| self.object(key) != Some(bytes)).cloned().collect()
    }

    /// Makes every GET of `key` (a head) return it with `lie` told, until set to `None`.
    pub fn set_head_lie(&mut self, lie: Option<(String, GrantLie)>) {
        self.head_lie = lie;
    }

    /// Switches the faults on or off (readers that check the bucket see it without them).
    pub fn set_faults(&mut self, on: bool) {
        self.faults_on = on;
    }

    /// After `calls` more calls, every call fails until [`SimBucket::reconnect`]: the caller
    /// stopped partway (its process died).
    pub fn cut_after(&mut self, calls: u64) {
        self.calls_before_cut = Some(calls);
    }

    /// Whether the cut happened; clears it.
    pub fn reconnect(&mut self) -> bool {
        let cut = self.calls_before_cut == Some(0);
        self.calls_before_cut = None;
        cut
    }

    /// Delivers every put still in flight, in the order they were sent.
    pub fn drain(&mut self) {
        for put in std::mem::take(&mut self.in_flight) {
            let _ = self.apply_put(&put.key, put.bytes, put.expected.as_ref());
        }
    }

    /// Faults injected so far.
    pub fn fault_counts(&self) -> BucketFaultCounts {
        self.counts
    }

    /// The bytes at `key`, bypassing faults.
    pub fn object(&self, key: &str) -> Option<&[u8]> {
        self.objects.get(key).map(|(bytes, _)| bytes.as_slice())
    }

    /// Every object, bypassing faults.
    pub fn objects(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.objects.iter().map(|(key, (bytes, _))| (key.as_str(), bytes.as_slice()))
    }

    /// Writes `bytes` at `key` whatever is there, as someone with the bucket's keys could.
    pub fn overwrite(&mut self, key: &str, bytes: Vec<u8>) {
        let tag = self.fresh_tag();
        self.objects.insert(key.to_string(), (bytes, tag));
    }

    fn fresh_tag(&mut self) -> ObjectTag {
        let tag = ObjectTag(format!("\"{:016x}\"", self.next_tag));
        self.next_tag += 1;
        tag
    }

    /// A put as the store judges it on arrival.
    fn apply_put(&mut self, key: &str, bytes: Vec<u8>, expected: Option<&ObjectTag>) -> Result<ObjectTag, BucketError> {
        let current = self.objects.get(key).map(|(_, tag)| tag);
        let allowed = match expected {
            None => current.is_none(),
            Some(expected) => current == Some(expected),
        };
        if !allowed {
            return Err(BucketError::PreconditionFailed);
        }
        let tag = self.fresh_tag();
        self.objects.insert(key.to_string(), (bytes, tag.clone()));
        Ok(tag)
    }

    /// Counts one call: delivers the puts whose time came, and says whether the caller is cut
    /// off.
    fn begin_call(&mut self) -> Result<(), BucketError> {
        let mut arrived = Vec::new();
        self.in_flight.retain_mut(|put| {
            if put.calls_left == 0 {
                arrived.push(put.clone());
                false
            } else {
                put.calls_left -= 1;
                true
            }
        });
        for put in arrived {
            let _ = self.apply_put(&put.key, put.bytes, put.expected.as_ref());
        }
        match &mut self.calls_before_cut {
            Some(0) => Err(BucketError::Unavailable("the connection is gone".to_string())),
            Some(calls) => {
                *calls -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn chance(&mut self, odds: f64) -> bool {
        self.faults_on && odds > 0.0 && self.random.chance(odds)
    }

    fn unavailable(what: &str) -> BucketError {
        BucketError::Unavailable(format!("{what}: the request timed out"))
    }

    fn send_later(&mut self, key: &str, bytes: &[u8], expected: Option<&ObjectTag>) {
        let calls_left = self.random.between(0, DELAY_MAX_CALLS);
        self.in_flight.push(InFlight {
            key: key.to_string(),
            bytes: bytes.to_vec(),
            expected: expected.cloned(),
            calls_left,
        });
    }

    fn put(&mut self, key: &str, bytes: &[u8], expected: Option<&ObjectTag>) -> Result<ObjectTag, BucketError> {
        self.begin_call()?;
        if self.chance(self.faults.put_lost) {
            self.counts.puts_lost += 1;
            return Err(SimBucket::unavailable("put"));
        }
        if self.chance(self.faults.put_delayed) {
            self.counts.puts_delayed += 1;
            self.send_later(key, bytes, expected);
            return Err(SimBucket::unavailable("put"));
        }
        let applied = self.apply_put(key, bytes.to_vec(), expected);
        if self.chance(self.faults.put_duplicated) {
            self.counts.puts_duplicated += 1;
            self.send_later(key, bytes, expected);
        }
        if self.chance(self.faults.reply_lost) {
            self.counts.replies_lost += 1;
            return Err(SimBucket::unavailable("put"));
        }
        applied
    }

    fn read_fails(&mut self) -> bool {
        let fails = self.chance(self.faults.read_failed);
        if fails {
            self.counts.reads_failed += 1;
        }
        fails
    }
}

impl Bucket for SimBucket {
    fn put_new(&mut self, key: &str, bytes: &[u8]) -> Result<ObjectTag, BucketError> {
        self.put(key, bytes, None)
    }

    fn put_replacing(&mut self, key: &str, bytes: &[u8], expected: &ObjectTag) -> Result<ObjectTag, BucketError> {
        self.put(key, bytes, Some(expected))
    }

    fn get(&mut self, key: &str) -> Result<Option<(Vec<u8>, ObjectTag)>, BucketError> {
        self.begin_call()?;
        if self.read_fails() {
            return Err(SimBucket::unavailable("get"));
        }
        let found = self.objects.get(key).cloned();
        match (&self.head_lie, found) {
            (Some((lying_key, lie)), Some((bytes, tag))) if lying_key == key => {
                let Ok(mut head) = ReplicaHead::decode(&bytes) else { return Ok(Some((bytes, tag))) };
                match *lie {
                    GrantLie::TokenHash(token_hash) => head.token_hash = token_hash,
                    GrantLie::AgentNumber(agent) => head.agent = agent,
                    GrantLie::EncryptedFlipped => head.encrypted = !head.encrypted,
                }
                self.counts.heads_lied += 1;
                // Encoded anew: the checksum is right for the altered bytes.
                Ok(Some((head.encode(), tag)))
            }
            (_, found) => Ok(found),
        }
    }

    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        self.begin_call()?;
        if self.read_fails() {
            // Half the failed deletes happened, their reply lost.
            if self.random.chance(0.5) {
                self.objects.remove(key);
            }
            return Err(SimBucket::unavailable("delete"));
        }
        self.objects.remove(key);
        Ok(())
    }

    fn list(&mut self, prefix: &str) -> Result<Vec<String>, BucketError> {
        self.begin_call()?;
        if self.read_fails() {
            return Err(SimBucket::unavailable("list"));
        }
        let mut keys: Vec<String> = self.objects.keys().filter(|key| key.starts_with(prefix)).cloned().collect();
        let extra: Vec<String> = match self.list_lie {
            ListLie::None => Vec::new(),
            ListLie::ForeignKeys => self.foreign.iter().filter(|key| !key.starts_with(prefix)).cloned().collect(),
            ListLie::PrefixIgnored => self.objects.keys().filter(|key| !key.starts_with(prefix)).cloned().collect(),
        };
        if !extra.is_empty() {
            self.counts.lists_lied += 1;
            keys.extend(extra);
        }
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean() -> SimBucket {
        SimBucket::new(BucketFaults::default(), Random::seeded(1))
    }

    #[test]
    fn a_create_fails_when_the_key_exists() {
        let mut bucket = clean();
        assert!(bucket.put_new("a", b"one").is_ok());
        assert_eq!(bucket.put_new("a", b"two"), Err(BucketError::PreconditionFailed));
        assert_eq!(bucket.object("a"), Some(&b"one"[..]));
    }

    #[test]
    fn a_replacement_needs_the_current_tag() {
        let mut bucket = clean();
        let first = bucket.put_new("a", b"one").unwrap();
        let second = bucket.put_replacing("a", b"two", &first).unwrap();
        assert_ne!(first, second);
        assert_eq!(bucket.put_replacing("a", b"three", &first), Err(BucketError::PreconditionFailed));
        assert_eq!(bucket.get("a").unwrap(), Some((b"two".to_vec(), second.clone())));
        bucket.delete("a").unwrap();
        assert_eq!(bucket.put_replacing("a", b"four", &second), Err(BucketError::PreconditionFailed));
        assert_eq!(bucket.object("a"), None);
    }

    #[test]
    fn a_delayed_create_obeys_its_condition_when_it_arrives() {
        let faults = BucketFaults { put_delayed: 1.0, ..BucketFaults::default() };
        let mut bucket = SimBucket::new(faults, Random::seeded(2));
        assert!(matches!(bucket.put_new("a", b"late"), Err(BucketError::Unavailable(_))));
        assert_eq!(bucket.object("a"), None);
        bucket.set_faults(false);
        assert!(bucket.put_new("a", b"first").is_ok());
        bucket.drain();
        assert_eq!(bucket.object("a"), Some(&b"first"[..]), "the late create found the key taken");
    }

    #[test]
    fn a_delayed_replacement_fails_once_the_tag_moved() {
        let mut bucket = clean();
        let tag = bucket.put_new("a", b"one").unwrap();
        bucket.faults = BucketFaults { put_delayed: 1.0, ..BucketFaults::default() };
        assert!(bucket.put_replacing("a", b"late", &tag).is_err());
        bucket.set_faults(false);
        assert!(bucket.put_replacing("a", b"two", &tag).is_ok());
        bucket.drain();
        assert_eq!(bucket.object("a"), Some(&b"two"[..]));
    }

    #[test]
    fn a_lost_reply_still_stores_and_a_lost_put_does_not() {
        let faults = BucketFaults { reply_lost: 1.0, ..BucketFaults::default() };
        let mut bucket = SimBucket::new(faults, Random::seeded(3));
        assert!(bucket.put_new("a", b"kept").is_err());
        assert_eq!(bucket.object("a"), Some(&b"kept"[..]));
        bucket.faults = BucketFaults { put_lost: 1.0, ..BucketFaults::default() };
        assert!(bucket.put_new("b", b"lost").is_err());
        assert_eq!(bucket.object("b"), None);
    }

    #[test]
    fn a_duplicated_put_arrives_twice_and_the_second_is_judged_on_arrival() {
        let faults = BucketFaults { put_duplicated: 1.0, ..BucketFaults::default() };
        let mut bucket = SimBucket::new(faults, Random::seeded(4));
        assert!(bucket.put_new("a", b"one").is_ok());
        bucket.set_faults(false);
        bucket.delete("a").unwrap();
        bucket.drain();
        assert_eq!(bucket.object("a"), Some(&b"one"[..]), "the copy arrived after the delete");
    }

    #[test]
    fn a_lying_list_names_foreign_keys_or_ignores_the_prefix() {
        let mut bucket = clean();
        bucket.put_new("fleet/agents/a/head", b"head").unwrap();
        bucket.plant_foreign("victim/keep-me", b"theirs");
        bucket.put_new("other/x", b"x").unwrap();
        assert_eq!(bucket.list("fleet/").unwrap(), vec!["fleet/agents/a/head".to_string()]);
        bucket.set_list_lie(ListLie::ForeignKeys);
        assert_eq!(
            bucket.list("fleet/").unwrap(),
            vec!["fleet/agents/a/head".to_string(), "victim/keep-me".to_string()]
        );
        bucket.set_list_lie(ListLie::PrefixIgnored);
        assert_eq!(bucket.list("fleet/").unwrap().len(), 3);
        assert!(bucket.foreign_objects_lost(b"theirs").is_empty());
        bucket.delete("victim/keep-me").unwrap();
        assert_eq!(bucket.foreign_objects_lost(b"theirs"), vec!["victim/keep-me".to_string()]);
    }

    #[test]
    fn a_lying_head_has_its_grant_altered_and_a_valid_checksum() {
        use cheesedb_core::Fingerprint;
        let head = ReplicaHead {
            version: 1,
            agent: 1,
            name: "a".to_string(),
            token_hash: [1; 32],
            encrypted: false,
            space: false,
            fingerprint: Fingerprint { records: 0, chain: [0; 32] },
            pieces: Vec::new(),
        };
        let mut bucket = clean();
        bucket.put_new("h", &head.encode()).unwrap();
        bucket.set_head_lie(Some(("h".to_string(), GrantLie::TokenHash([2; 32]))));
        let (bytes, _) = bucket.get("h").unwrap().unwrap();
        assert_eq!(ReplicaHead::decode(&bytes).map(|lied| lied.token_hash), Ok([2; 32]));
        assert_eq!(bucket.object("h"), Some(head.encode().as_slice()), "the stored head is unchanged");
        bucket.set_head_lie(None);
        assert_eq!(bucket.get("h").unwrap().map(|(bytes, _)| bytes), Some(head.encode()));
    }

    #[test]
    fn a_cut_caller_fails_until_it_reconnects() {
        let mut bucket = clean();
        bucket.cut_after(1);
        assert!(bucket.put_new("a", b"one").is_ok());
        assert!(bucket.put_new("b", b"two").is_err());
        assert!(bucket.reconnect());
        assert!(bucket.put_new("b", b"two").is_ok());
        assert_eq!(bucket.list("").unwrap(), vec!["a".to_string(), "b".to_string()]);
    }
}
