//! `pfgen_fast._core`: the PyO3 face of pfgen-core, one submodule per area of the core
//! (`_core.common`, `_core.pfgen`, `_core.evalmm`). Only type conversion happens here; the work
//! runs with the GIL released.

use pyo3::prelude::*;

mod common;
mod errors;
mod evalmm;
mod pfgen;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_submodule(m, "common", common::register)?;
    add_submodule(m, "pfgen", pfgen::register)?;
    add_submodule(m, "evalmm", evalmm::register)?;
    Ok(())
}

/// Adds the submodule `name` that `register` fills, named `pfgen_fast._core.<name>` (the
/// `__module__` of its functions) and put in `sys.modules` under that name, so that
/// `from pfgen_fast._core.<name> import X` works (an extension module has no package path of
/// its own for the import system to find submodules in).
fn add_submodule(
    parent: &Bound<'_, PyModule>,
    name: &str,
    register: fn(&Bound<'_, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let py = parent.py();
    let qualified = format!("pfgen_fast._core.{name}");
    let module = PyModule::new(py, &qualified)?;
    register(&module)?;
    parent.add(name, &module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item(qualified, module)
}
