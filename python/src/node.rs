//! `Node` and `Hit`: what reads and searches return, as frozen Python values.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use cheesedb::NodeKind;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// How many bytes of content a repr shows before it cuts.
const REPR_CONTENT_BYTES: usize = 60;

/// One lot or memory, as `Agent.get` and `Agent.list` return it. Frozen: a value, not a view
/// of the store; read it again to see a later recall.
#[pyclass(module = "cheesedb", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct Node {
    id: u64,
    is_lot: bool,
    /// A node standing for a space's node (neither lot nor memory of the agent's own).
    is_shared: bool,
    alive: bool,
    content: Option<Vec<u8>>,
    label: Option<String>,
    legs: Vec<Vec<u64>>,
    tracked_parents: Vec<u64>,
}

impl From<cheesedb::Node> for Node {
    fn from(node: cheesedb::Node) -> Node {
        let content = node.content().map(<[u8]>::to_vec);
        let alive = node.is_alive();
        let tracked_parents = node.tracked_parents().iter().map(|parent| parent.get()).collect();
        let is_shared = matches!(node.kind, NodeKind::Shared { .. });
        let (is_lot, label, legs) = match node.kind {
            NodeKind::Lot { label } => (true, Some(label), Vec::new()),
            NodeKind::Shared { .. } => (false, None, Vec::new()),
            NodeKind::Memory { legs } => (
                false,
                None,
                legs.iter().map(|leg| leg.parents().iter().map(|parent| parent.get()).collect()).collect(),
            ),
        };
        Node { id: node.id.get(), is_lot, is_shared, alive, content, label, legs, tracked_parents }
    }
}

#[pymethods]
impl Node {
    /// The id: per agent, from 1 up, never reused.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    /// "lot" for a source, "memory" for something learned from sources, "shared" for a node
    /// standing for a shared space's node.
    #[getter]
    fn kind(&self) -> &'static str {
        if self.is_lot {
            "lot"
        } else if self.is_shared {
            "shared"
        } else {
            "memory"
        }
    }

    /// False once it was recalled.
    #[getter]
    fn alive(&self) -> bool {
        self.alive
    }

    /// The content as bytes, or None for a recalled node (its text is withheld, and gone from
    /// disk after an Erase or a compaction).
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.content.as_deref().map(|content| PyBytes::new(py, content))
    }

    /// The label of a lot; None for a memory.
    #[getter]
    fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// The legs of a memory: each a list of parent ids that must all be alive for the leg to
    /// hold, ascending. Empty for a lot.
    #[getter]
    fn legs(&self) -> Vec<Vec<u64>> {
        self.legs.clone()
    }

    /// The parents a memory got from read tracking rather than from the legs its writer
    /// declared (they are in every leg as well), ascending. Empty for a lot and for a memory
    /// written without tracking.
    #[getter]
    fn tracked_parents(&self) -> Vec<u64> {
        self.tracked_parents.clone()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let content = match &self.content {
            None => "None".to_owned(),
            Some(content) => {
                let shown: Vec<u8> = content.iter().take(REPR_CONTENT_BYTES).copied().collect();
                let more = if content.len() > REPR_CONTENT_BYTES { "..." } else { "" };
                format!("b'{}'{more}", shown.escape_ascii())
            }
        };
        let alive = if self.alive { "True" } else { "False" };
        let (id, kind) = (self.id, self.kind());
        match &self.label {
            Some(label) => {
                let label = python_repr(py, label);
                format!("Node(id={id}, kind='{kind}', alive={alive}, label={label}, content={content})")
            }
            None => format!("Node(id={id}, kind='{kind}', alive={alive}, legs={:?}, content={content})", self.legs),
        }
    }
}

/// `text` as Python's repr shows a str.
pub(crate) fn python_repr(py: Python<'_>, text: &str) -> String {
    pyo3::types::PyString::new(py, text).repr().map(|repr| repr.to_string()).unwrap_or_else(|_| format!("{text:?}"))
}

/// One answer of a search: the id of a lot or memory and how well it matched (higher is
/// better: BM25 for text, the cosine for a vector, the fused rank score for hybrid).
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Hit {
    id: u64,
    score: f64,
}

impl From<cheesedb::Hit> for Hit {
    fn from(hit: cheesedb::Hit) -> Hit {
        Hit { id: hit.id.get(), score: f64::from(hit.score) }
    }
}

#[pymethods]
impl Hit {
    /// The id of the lot or memory found.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    /// How well it matched; higher is better.
    #[getter]
    fn score(&self) -> f64 {
        self.score
    }

    fn __repr__(&self) -> String {
        format!("Hit(id={}, score={:.6})", self.id, self.score)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Hit>().is_ok_and(|other| {
            let other = other.get();
            other.id == self.id && other.score.to_bits() == self.score.to_bits()
        })
    }

    fn __hash__(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        (self.id, self.score.to_bits()).hash(&mut hasher);
        hasher.finish()
    }
}
