//! `SearchPage` and `Found`: what `Agent.search_page` returns, as frozen Python values, and the
//! arguments only it takes (a least trust level, the ids a search keeps to).

use cheesedb::{FoundKind, Id, Ranking, TrustLevel};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::convert;
use crate::errors::{invalid_argument, to_python};
use crate::node::python_repr;

/// The least trust level of a hit: "low" (every hit), "normal" or "high".
pub(crate) struct LeastTrust(pub(crate) TrustLevel);

impl<'a, 'py> FromPyObject<'a, 'py> for LeastTrust {
    type Error = PyErr;

    fn extract(value: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<LeastTrust> {
        let word = convert::text(&value, "least_trust")?;
        word.parse()
            .map(LeastTrust)
            .map_err(|_| invalid_argument(format!("least_trust is \"low\", \"normal\" or \"high\", not {word:?}")))
    }
}

/// The ids a search keeps to: an iterable of ids (a str or bytes is refused: its items are not
/// ids).
pub(crate) struct Among(pub(crate) Vec<Id>);

impl<'a, 'py> FromPyObject<'a, 'py> for Among {
    type Error = PyErr;

    fn extract(value: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Among> {
        if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err("among must be an iterable of ids, not a string"));
        }
        let ids = value.try_iter()?.map(|id| convert::id(&id?)).collect::<PyResult<Vec<Id>>>()?;
        Ok(Among(ids))
    }
}

/// One page of search hits: `found`, best first, and how they were ranked.
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct SearchPage {
    found: Vec<Py<Found>>,
    hybrid: bool,
    vector_refused: Option<Py<PyAny>>,
}

/// `page` as its Python value; the error that kept a vector out becomes the exception it would
/// have raised, with its facts.
///
/// # Errors
///
/// A failure to make a Python object (out of memory).
pub(crate) fn python_page(py: Python<'_>, page: cheesedb::SearchPage) -> PyResult<SearchPage> {
    let found = page.found.into_iter().map(|found| Py::new(py, Found::from(found))).collect::<PyResult<Vec<_>>>()?;
    let (hybrid, vector_refused) = match page.ranking {
        Ranking::Keyword => (false, None),
        Ranking::Hybrid => (true, None),
        Ranking::KeywordInstead { refused } => (false, Some(to_python(py, refused).into_value(py).into_any())),
    };
    Ok(SearchPage { found, hybrid, vector_refused })
}

#[pymethods]
impl SearchPage {
    /// The hits, best first: at most the limit asked for, fewer only when no more match.
    #[getter]
    fn found(&self, py: Python<'_>) -> Vec<Py<Found>> {
        self.found.iter().map(|found| found.clone_ref(py)).collect()
    }

    /// "hybrid" when words and vector were fused, "keyword" when words alone ranked the hits.
    #[getter]
    fn ranking(&self) -> &'static str {
        if self.hybrid {
            "hybrid"
        } else {
            "keyword"
        }
    }

    /// Why the vector given was not used, as the exception it would have raised
    /// (InvalidVectorError for another dimension, say); None when it was used or none was given.
    #[getter]
    fn vector_refused(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.vector_refused.as_ref().map(|error| error.clone_ref(py))
    }

    fn __len__(&self) -> usize {
        self.found.len()
    }

    fn __repr__(&self) -> String {
        format!("SearchPage(ranking='{}', found={} hits)", self.ranking(), self.found.len())
    }
}

/// One alive lot or memory a page search found, with what is shown of it.
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Found {
    id: u64,
    score: f64,
    label: Option<String>,
    tracked_parents: Vec<u64>,
    content: Vec<u8>,
    trust: TrustLevel,
    has_vector: bool,
}

impl From<cheesedb::Found> for Found {
    fn from(found: cheesedb::Found) -> Found {
        let (label, tracked_parents) = match found.kind {
            FoundKind::Lot { label } => (Some(label), Vec::new()),
            FoundKind::Memory { tracked_parents } => (None, tracked_parents.iter().map(|id| id.get()).collect()),
        };
        Found {
            id: found.id.get(),
            score: f64::from(found.score),
            label,
            tracked_parents,
            content: found.content,
            trust: found.trust,
            has_vector: found.has_vector,
        }
    }
}

#[pymethods]
impl Found {
    /// The id of the lot or memory.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    /// How well it matched; higher is better.
    #[getter]
    fn score(&self) -> f64 {
        self.score
    }

    /// "lot" or "memory".
    #[getter]
    fn kind(&self) -> &'static str {
        if self.label.is_some() {
            "lot"
        } else {
            "memory"
        }
    }

    /// The label of a lot; None for a memory.
    #[getter]
    fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// The parents a memory got from read tracking, ascending; empty for a lot.
    #[getter]
    fn tracked_parents(&self) -> Vec<u64> {
        self.tracked_parents.clone()
    }

    /// The content as bytes.
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.content)
    }

    /// "low", "normal" or "high", under the trust rules (as trust() says).
    #[getter]
    fn trust(&self) -> &'static str {
        self.trust.as_str()
    }

    /// Whether it has a vector.
    #[getter]
    fn has_vector(&self) -> bool {
        self.has_vector
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let shown = match &self.label {
            Some(label) => format!("label={}", python_repr(py, label)),
            None => format!("tracked_parents={:?}", self.tracked_parents),
        };
        format!(
            "Found(id={}, score={:.6}, kind='{}', {shown}, trust='{}', has_vector={})",
            self.id,
            self.score,
            self.kind(),
            self.trust(),
            if self.has_vector { "True" } else { "False" }
        )
    }
}
