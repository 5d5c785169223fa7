//! `pfgen_fast._core`: the PyO3 face of pfgen-core, one module per area of the core. Only
//! type conversion happens here; the work runs with the GIL released.

use pyo3::prelude::*;

mod common;
mod errors;
mod evalmm;
mod pfgen;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    common::register(m)?;
    pfgen::register(m)?;
    evalmm::register(m)?;
    Ok(())
}
