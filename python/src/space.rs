//! `Space`: one member's handle to a space its store shares between agents, from Python.

use std::sync::Arc;

use cheesedb::Mode;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::agent_slot::AgentSlot;
use crate::convert::{self, Content, IdArgument, Legs, ModeArgument};
use crate::errors::{invalid_argument, IntoPython};
use crate::node::Node;

/// A member's handle to a space, from `agent.space(name)` or `store.create_space(name,
/// first_admin)`. Every call is bounded by the member's role at that moment: "read" reads and
/// builds on the space (share), "write" also adds to it, "admin" also recalls and grants. A
/// non-member, a revoked member and a wrong name get the same UnknownSpaceError. Closed with
/// the agent it came from.
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Space {
    /// The member's agent, whose handle reaches the space.
    slot: Arc<AgentSlot>,
    name: String,
}

impl Space {
    /// The handle of the member in `slot` to the space `name` (already checked to reach it).
    pub(crate) fn new(slot: Arc<AgentSlot>, name: String) -> Space {
        Space { slot, name }
    }

    /// Runs `action` on the member's handle to the space, with the GIL released.
    fn call<T: Send>(
        &self,
        py: Python<'_>,
        action: impl FnOnce(&cheesedb::Space) -> Result<T, cheesedb::Error> + Send,
    ) -> PyResult<T> {
        let handle = self.slot.handle()?;
        handle.check_same_process().into_python(py)?;
        py.detach(|| action(&handle.space(&self.name)?)).into_python(py)
    }
}

/// `{"space": [ids], "members": {name: [ids]}}`, what a recall in a space removed.
fn recall_dict<'py>(py: Python<'py>, reached: cheesedb::SpaceRecall) -> PyResult<Bound<'py, PyDict>> {
    let ids = |ids: Vec<cheesedb::Id>| ids.into_iter().map(cheesedb::Id::get).collect::<Vec<u64>>();
    let members = PyDict::new(py);
    for (name, removed) in reached.in_members {
        members.set_item(name, ids(removed))?;
    }
    let result = PyDict::new(py);
    result.set_item("space", ids(reached.in_space))?;
    result.set_item("members", members)?;
    Ok(result)
}

#[pymethods]
impl Space {
    /// The space's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Adds a source to the space, written by this member (needs "write"); returns its id.
    #[pyo3(text_signature = "(self, label, content)")]
    fn add_lot(&self, py: Python<'_>, label: String, content: Content) -> PyResult<u64> {
        self.call(py, |space| space.add_lot(&label, &content.0)).map(cheesedb::Id::get)
    }

    /// Adds a memory of the space learned through `legs` of the space's ids (needs "write").
    #[pyo3(text_signature = "(self, content, legs)")]
    fn remember(&self, py: Python<'_>, content: Content, legs: Legs) -> PyResult<u64> {
        self.call(py, |space| space.remember(&content.0, &legs.0)).map(cheesedb::Id::get)
    }

    /// The id, in this member's own memory, that stands for node `id` of the space: name it in
    /// the legs of the member's memories to build on the space's node. A recall of the node in
    /// the space then removes what the member built on it.
    #[pyo3(text_signature = "(self, id)")]
    fn share(&self, py: Python<'_>, id: IdArgument) -> PyResult<u64> {
        self.call(py, |space| space.share(id.0)).map(cheesedb::Id::get)
    }

    /// One lot or memory of the space.
    #[pyo3(text_signature = "(self, id)")]
    fn get(&self, py: Python<'_>, id: IdArgument) -> PyResult<Node> {
        self.call(py, |space| space.get(id.0)).map(Node::from)
    }

    /// The name of the member that wrote lot or memory `id`.
    #[pyo3(text_signature = "(self, id)")]
    fn author_of(&self, py: Python<'_>, id: IdArgument) -> PyResult<String> {
        self.call(py, |space| space.author_of(id.0))
    }

    /// Every lot and memory the member named `agent` wrote, alive or recalled, ascending.
    #[pyo3(text_signature = "(self, agent)")]
    fn written_by(&self, py: Python<'_>, agent: String) -> PyResult<Vec<u64>> {
        let ids = self.call(py, |space| space.written_by(&agent))?;
        Ok(ids.into_iter().map(cheesedb::Id::get).collect())
    }

    /// The alive lots and memories of the space, ascending by id.
    #[pyo3(text_signature = "(self)")]
    fn list(&self, py: Python<'_>) -> PyResult<Vec<Node>> {
        let nodes = self.call(py, |space| {
            let (lots, memories) = space.alive()?;
            let mut ids: Vec<cheesedb::Id> = lots.into_iter().chain(memories).collect();
            ids.sort_unstable();
            ids.into_iter().map(|id| space.get(id)).collect::<Result<Vec<_>, _>>()
        })?;
        Ok(nodes.into_iter().map(Node::from).collect())
    }

    /// Recalls `id` in the space (needs "admin") with what depends on it there and in every
    /// member's own memory, revoked members too; returns {"space": [ids], "members": {name:
    /// [ids]}}. With erase=True the text of all of it is off the disk when this returns (an
    /// encrypted member that is not open destroys the keys at its next open).
    #[pyo3(
        signature = (id, mode = ModeArgument(Mode::Fair), erase = false),
        text_signature = "(self, id, mode='fair', erase=False)"
    )]
    fn recall<'py>(
        &self,
        py: Python<'py>,
        id: IdArgument,
        mode: ModeArgument,
        erase: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let removal = convert::removal(erase);
        let reached = self.call(py, |space| space.recall(id.0, mode.0, removal))?;
        recall_dict(py, reached)
    }

    /// What recall(id, mode) would remove, in the space and in each member, writing nothing.
    #[pyo3(signature = (id, mode = ModeArgument(Mode::Fair)), text_signature = "(self, id, mode='fair')")]
    fn preview_recall<'py>(&self, py: Python<'py>, id: IdArgument, mode: ModeArgument) -> PyResult<Bound<'py, PyDict>> {
        let reached = self.call(py, |space| space.preview_recall(id.0, mode.0))?;
        recall_dict(py, reached)
    }

    /// The members holding a role now, as (name, role) pairs.
    #[pyo3(text_signature = "(self)")]
    fn members(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let members = self.call(py, cheesedb::Space::members)?;
        Ok(members.into_iter().map(|(name, role)| (name, role.name().to_string())).collect())
    }

    /// Gives the agent named `agent` the role "read", "write" or "admin" (needs "admin").
    #[pyo3(text_signature = "(self, agent, role)")]
    fn grant(&self, py: Python<'_>, agent: String, role: String) -> PyResult<()> {
        let role = cheesedb::Role::from_name(&role)
            .ok_or_else(|| invalid_argument(format!("{role:?} is not a role: 'read', 'write' or 'admin'")))?;
        self.call(py, |space| space.grant(&agent, role))
    }

    /// Takes every role from the agent named `agent` (needs "admin"); what it wrote stays, and
    /// later recalls still reach what it built on the space.
    #[pyo3(text_signature = "(self, agent)")]
    fn revoke(&self, py: Python<'_>, agent: String) -> PyResult<()> {
        self.call(py, |space| space.revoke(&agent))
    }

    fn __repr__(&self) -> String {
        format!("Space(name={:?})", self.name)
    }
}
