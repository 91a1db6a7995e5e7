//! Shipping every agent and space of an open store to a bucket: [`Replicator::ship`] once, or again and
//! again from a loop (the `cheesedb replicate` command, or a thread of the memory server).

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use cheesedb_core::replica::{AgentEntry, AgentShipper, Bucket, Owner, ReplicaPrefix};
use cheesedb_core::{Error, Fingerprint, LocalOperation};

use crate::mutex::lock;
use crate::shared::{SharedStorage, StoreShared};
use crate::store::Store;

/// How far one agent's (or space's) replica is behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaStatus {
    /// The agent's or space's name.
    pub name: String,
    /// Whether it is a space's replica.
    pub space: bool,
    /// What the agent's files hold, as last read.
    pub primary: Fingerprint,
    /// What the bucket's head holds, as last written or read (`None`: nothing shipped yet).
    pub shipped: Option<Fingerprint>,
    /// Records the bucket lacks.
    pub records_behind: u64,
    /// How long the bucket has lacked some of them (zero when it lacks none).
    pub lag: Duration,
    /// Objects no head names that are not yet deleted: while any is, an erased text may still
    /// be in the bucket.
    pub deletions_pending: usize,
}

/// What one pass shipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShipReport {
    /// Agents whose head moved.
    pub agents_shipped: u64,
    /// Pieces written.
    pub pieces_uploaded: u64,
    /// Bytes in them.
    pub bytes_uploaded: u64,
    /// Objects deleted that no head names any more.
    pub objects_deleted: u64,
}

struct AgentState {
    shipper: AgentShipper,
    /// The engine last seen holding the agent, by address, and a count that moves whenever the
    /// engine or its count of rewrites does.
    engine_seen: Option<usize>,
    rewrites_seen: u64,
    generation: u64,
    primary: Fingerprint,
    behind_since: Option<Instant>,
}

/// Ships the agents and spaces of one store to one place in a bucket.
pub struct Replicator<B: Bucket, S: SharedStorage> {
    store: Arc<StoreShared<S>>,
    bucket: B,
    prefix: ReplicaPrefix,
    run: u64,
    /// Each agent's and space's state, by name and whether it is a space.
    agents: BTreeMap<(String, bool), AgentState>,
}

impl<B: Bucket, S: SharedStorage> std::fmt::Debug for Replicator<B, S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Replicator").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl<B: Bucket, S: SharedStorage> Replicator<B, S> {
    /// A replicator of `store`'s agents to `prefix` of `bucket`. Nothing is sent until
    /// [`Replicator::ship`].
    ///
    /// # Errors
    ///
    /// `Error::Io` when no random run number can be drawn; `Error::NeedsLocalStore` for a store
    /// reached through a memory server (the server replicates its own store).
    pub fn new(store: &Store<S>, bucket: B, prefix: &str) -> Result<Replicator<B, S>, Error> {
        let store = store.local(LocalOperation::Replication)?.clone();
        let mut run = [0u8; 8];
        getrandom::fill(&mut run).map_err(|error| Error::ObjectStore { detail: error.to_string() })?;
        Ok(Replicator {
            store,
            bucket,
            prefix: ReplicaPrefix::new(prefix),
            run: u64::from_le_bytes(run),
            agents: BTreeMap::new(),
        })
    }

    /// Ships what every agent and space committed and the bucket lacks: whole durable writes, the
    /// stretches an Erase or a compaction changed, and the deletions that follow. Returns when
    /// every agent's head is written and every deletion done.
    ///
    /// # Errors
    ///
    /// `Error::ReplicaFenced` when another store replicates an agent to the same prefix;
    /// `Error::ObjectStore` when the bucket fails (a later pass goes on where this one
    /// stopped); `Error::Corrupt` or `Error::Io` when an agent's files cannot be read.
    pub fn ship(&mut self) -> Result<ShipReport, Error> {
        let entries = self.store.catalog()?.replicated_entries();
        self.agents
            .retain(|(name, space), _| entries.iter().any(|entry| entry.owner() == Owner { name, space: *space }));
        let mut report = ShipReport::default();
        for entry in entries {
            let state = self.agents.entry((entry.name.clone(), entry.space)).or_insert_with(|| AgentState {
                shipper: AgentShipper::new(self.prefix.clone(), entry.clone(), self.run),
                engine_seen: None,
                rewrites_seen: 0,
                generation: 0,
                primary: Fingerprint { records: 0, chain: [0; 32] },
                behind_since: None,
            });
            state.shipper.load_head(&mut self.bucket)?;
            let plan = plan_with_writes_held(&self.store, &entry, state)?;
            if let Some(plan) = plan {
                let outcome = state.shipper.execute(&mut self.bucket, plan)?;
                report.agents_shipped += 1;
                report.pieces_uploaded += outcome.pieces_uploaded;
                report.bytes_uploaded += outcome.bytes_uploaded;
                report.objects_deleted += outcome.objects_deleted;
            } else {
                report.objects_deleted += state.shipper.delete_pending(&mut self.bucket)?;
            }
            let caught_up = state.shipper.shipped() == Some(state.primary);
            state.behind_since = if caught_up { None } else { state.behind_since.or(Some(Instant::now())) };
        }
        Ok(report)
    }

    /// How far each agent's replica is behind, as of the last pass.
    #[must_use]
    pub fn status(&self) -> Vec<ReplicaStatus> {
        self.agents
            .iter()
            .map(|((name, space), state)| {
                let shipped = state.shipper.shipped();
                ReplicaStatus {
                    name: name.clone(),
                    space: *space,
                    primary: state.primary,
                    shipped,
                    records_behind: state.primary.records.saturating_sub(shipped.map_or(0, |found| found.records)),
                    lag: state.behind_since.map_or(Duration::ZERO, |since| since.elapsed()),
                    deletions_pending: state.shipper.deletions_pending(),
                }
            })
            .collect()
    }
}

/// Plans one agent's or space's ship with its writes held: with the store's catalog locked (no
/// handle of it can be opened meanwhile) and, when an engine of it is open, that engine too.
fn plan_with_writes_held<S: SharedStorage>(
    store: &StoreShared<S>,
    entry: &AgentEntry,
    state: &mut AgentState,
) -> Result<Option<cheesedb_core::replica::ShipPlan>, Error> {
    let catalog = store.catalog()?;
    if entry.space {
        let open = store.open_space(entry.number)?;
        let engine = open.as_ref().map(|space| lock(&space.engine)).transpose()?;
        let seen = (open.as_ref().map(address), engine.as_ref().map_or(0, |engine| engine.rewrite_count()));
        plan_seen(catalog.storage(), state, seen)
    } else {
        let open = store.open_agents()?.get(&entry.number).and_then(Weak::upgrade);
        let engine = open.as_ref().map(|engine| lock(&engine.engine)).transpose()?;
        let seen = (open.as_ref().map(address), engine.as_ref().map_or(0, |engine| engine.rewrite_count()));
        plan_seen(catalog.storage(), state, seen)
    }
}

/// Where an engine lives: another address is another engine.
fn address<T>(engine: &Arc<T>) -> usize {
    Arc::as_ptr(engine) as usize
}

/// Plans a ship from the files, its writes held by the caller; `seen` is the engine holding it
/// (by address) and that engine's count of rewrites.
fn plan_seen<S: SharedStorage>(
    storage: &S,
    state: &mut AgentState,
    seen: (Option<usize>, u64),
) -> Result<Option<cheesedb_core::replica::ShipPlan>, Error> {
    if seen != (state.engine_seen, state.rewrites_seen) {
        // Another engine, or more rewrites: stretches already shipped may have changed.
        (state.engine_seen, state.rewrites_seen) = seen;
        state.generation += 1;
    }
    let plan = state.shipper.plan(storage, state.generation)?;
    // A plan carries what the files hold; the shipper learns it only once the plan is shipped.
    let held = plan.as_ref().map(cheesedb_core::replica::ShipPlan::local_fingerprint);
    state.primary = held.or(state.shipper.local_fingerprint()).unwrap_or(state.primary);
    Ok(plan)
}
