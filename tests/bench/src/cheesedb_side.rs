//! cheesedb under test: one store, one agent, every write durable before it returns.

use std::path::{Path, PathBuf};

use cheesedb::{Agent, Id, Io, Leg, Mode, Removal, Store, Token};

use crate::engine::{ConcurrentWriter, Engine, OpenFigures};
use crate::failure::Failure;
use crate::folder::{files_size_bytes, is_segment_file};
use crate::open_probe;
use crate::workload::PlannedNode;

/// The name of the only agent in the benchmark's store.
const AGENT_NAME: &str = "bench";

/// Where an open is measured: in a fresh process (what a user's program sees, and the only
/// honest place for the resident memory it costs) or in this one (for tests, where this
/// executable is not the `cheesedb` command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenMeasurement {
    /// Run `cheesedb-bench --open-probe` from this executable.
    InChildProcess(PathBuf),
    /// Open in this process.
    InThisProcess,
}

/// The cheesedb side of the benchmark.
pub struct CheesedbSide {
    name: &'static str,
    folder: PathBuf,
    io: Io,
    token: Token,
    store: Option<Store>,
    agent: Option<Agent>,
    open_measurement: OpenMeasurement,
}

impl CheesedbSide {
    /// Creates a store in `folder` (which must not hold one yet) with one agent.
    pub fn create(folder: &Path, io: Io, open_measurement: OpenMeasurement) -> Result<CheesedbSide, Failure> {
        let store = open_probe::bench_store(folder, io).open()?;
        let token = store.create_agent(AGENT_NAME)?;
        CheesedbSide::with_agent("cheesedb", folder, io, store, token, open_measurement)
    }

    /// Creates a store in `folder` (which must not hold one yet) with one encrypted agent,
    /// named `name` in reports.
    pub fn create_encrypted(
        name: &'static str,
        folder: &Path,
        io: Io,
        open_measurement: OpenMeasurement,
    ) -> Result<CheesedbSide, Failure> {
        let store = open_probe::bench_store(folder, io).open()?;
        let token = store.create_encrypted_agent(AGENT_NAME)?;
        CheesedbSide::with_agent(name, folder, io, store, token, open_measurement)
    }

    fn with_agent(
        name: &'static str,
        folder: &Path,
        io: Io,
        store: Store,
        token: Token,
        open_measurement: OpenMeasurement,
    ) -> Result<CheesedbSide, Failure> {
        let agent = store.open_agent(&token)?;
        Ok(CheesedbSide {
            name,
            folder: folder.to_path_buf(),
            io,
            token,
            store: Some(store),
            agent: Some(agent),
            open_measurement,
        })
    }

    /// The agent under test.
    pub fn agent(&self) -> Result<&Agent, Failure> {
        self.agent.as_ref().ok_or_else(|| Failure::new("the benchmark's agent is not open"))
    }

    /// Closes everything and opens it again, timing the open (where `open_measurement` says),
    /// then the first search for `first_query` if one is given.
    pub fn reopen_searching(&mut self, first_query: Option<&str>) -> Result<OpenFigures, Failure> {
        // Every handle goes, so the folder lock is free for a child process.
        self.agent = None;
        self.store = None;
        let from_child = match &self.open_measurement {
            OpenMeasurement::InChildProcess(executable) => {
                Some(open_probe::measure_in_child(executable, &self.folder, self.io, &self.token, first_query)?)
            }
            OpenMeasurement::InThisProcess => None,
        };
        // Without a child, this open is the one measured; with one, this process's agent only
        // needs to be open again, and a search of its own would build an index nobody times.
        let query_here = if from_child.is_some() { None } else { first_query };
        let (store, agent, in_this_process) =
            open_probe::open_measured(&self.folder, self.io, &self.token, query_here)?;
        self.store = Some(store);
        self.agent = Some(agent);
        Ok(from_child.unwrap_or(in_this_process))
    }

    /// Closes everything and opens it again in this process, untimed: a fresh agent whose
    /// search index is not built yet.
    pub fn reopen_here(&mut self) -> Result<(), Failure> {
        self.agent = None;
        self.store = None;
        let (store, agent, _) = open_probe::open_measured(&self.folder, self.io, &self.token, None)?;
        self.store = Some(store);
        self.agent = Some(agent);
        Ok(())
    }

    /// Bytes of the agent's log: the segment files.
    pub fn log_bytes(&self) -> Result<u64, Failure> {
        files_size_bytes(&self.folder, is_segment_file)
    }
}

/// The legs of a planned memory as the library takes them.
pub fn legs_of(legs: &[Vec<u64>]) -> Vec<Leg> {
    legs.iter().map(|leg| leg.iter().map(|parent| Id::from(*parent)).collect()).collect()
}

fn write_node(agent: &Agent, node: &PlannedNode) -> Result<u64, Failure> {
    let id = match node {
        PlannedNode::Lot { label, content } => agent.add_lot(label, content)?,
        PlannedNode::Memory { content, legs } => agent.remember(content, &legs_of(legs))?,
    };
    Ok(id.get())
}

impl Engine for CheesedbSide {
    fn name(&self) -> &'static str {
        self.name
    }

    fn write_batch(&mut self, nodes: &[PlannedNode]) -> Result<Vec<u64>, Failure> {
        let ids = self.agent()?.batch(|batch| {
            let mut ids = Vec::with_capacity(nodes.len());
            for node in nodes {
                let id = match node {
                    PlannedNode::Lot { label, content } => batch.add_lot(label, content)?,
                    PlannedNode::Memory { content, legs } => batch.remember(content, &legs_of(legs))?,
                };
                ids.push(id.get());
            }
            Ok(ids)
        })?;
        Ok(ids)
    }

    fn write_one(&mut self, node: &PlannedNode) -> Result<u64, Failure> {
        write_node(self.agent()?, node)
    }

    fn concurrent_writers(&mut self, count: usize) -> Result<Vec<Box<dyn ConcurrentWriter>>, Failure> {
        // Clones of one handle share the engine, which commits their writes together.
        let agent = self.agent()?;
        Ok((0..count).map(|_| Box::new(AgentWriter { agent: agent.clone() }) as Box<dyn ConcurrentWriter>).collect())
    }

    fn recall(&mut self, id: u64, mode: Mode, removal: Removal) -> Result<Vec<u64>, Failure> {
        let removed = self.agent()?.recall(Id::from(id), mode, removal)?;
        Ok(removed.into_iter().map(Id::get).collect())
    }

    fn preview_recall(&mut self, id: u64, mode: Mode) -> Result<Vec<u64>, Failure> {
        let removed = self.agent()?.preview_recall(Id::from(id), mode)?;
        Ok(removed.into_iter().map(Id::get).collect())
    }

    fn alive_memories(&mut self) -> Result<Vec<u64>, Failure> {
        Ok(self.agent()?.memories()?.into_iter().map(Id::get).collect())
    }

    fn reopen(&mut self) -> Result<OpenFigures, Failure> {
        self.reopen_searching(None)
    }

    fn verify(&mut self) -> Result<u64, Failure> {
        self.agent()?.verify()?;
        self.log_bytes()
    }

    fn compact(&mut self) -> Result<(), Failure> {
        Ok(self.agent()?.compact()?)
    }

    fn disk_bytes(&self) -> Result<u64, Failure> {
        files_size_bytes(&self.folder, |_| true)
    }
}

struct AgentWriter {
    agent: Agent,
}

impl ConcurrentWriter for AgentWriter {
    fn write_one(&mut self, node: &PlannedNode) -> Result<(), Failure> {
        write_node(&self.agent, node).map(|_| ())
    }
}
