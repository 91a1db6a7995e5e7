//! The native part of the `cheesedb` Python package: the `cheesedb` crate's `Store`, `Agent`
//! and `Client` (of a memory server) as Python classes, its errors as Python exceptions.
//!
//! Every call that reaches the engine converts its arguments first, then lets go of the GIL
//! while the engine works (and waits on the disk or a lock), so other Python threads run
//! meanwhile. The Python package `cheesedb` re-exports all of it; see its README.

mod agent;
mod agent_slot;
mod batch;
mod client;
mod convert;
mod errors;
mod node;
mod report;
mod search_page;
mod space;
mod store;

use pyo3::prelude::*;

/// The module `cheesedb._native`.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<store::Store>()?;
    module.add_class::<agent::Agent>()?;
    module.add_class::<batch::Batch>()?;
    module.add_class::<client::Client>()?;
    module.add_function(wrap_pyfunction!(client::connect, module)?)?;
    module.add_class::<node::Node>()?;
    module.add_class::<node::Hit>()?;
    module.add_class::<search_page::SearchPage>()?;
    module.add_class::<search_page::Found>()?;
    module.add_class::<space::Space>()?;
    errors::register(module)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
