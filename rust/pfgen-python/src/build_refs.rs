//! `pfgen_fast._core.RareNgramCounter`: the rare n-gram filter of reference-set construction
//! (pfgen_core::rare_ngrams). Type conversion only; the counting runs with the GIL released.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use pfgen_core::rare_ngrams::{self, RareNgramError};

fn to_py_error(error: RareNgramError) -> PyErr {
    match error {
        RareNgramError::Io(..) => PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// Counts the character n-grams of one question's candidates, added in batches, to find those
/// that fewer than `min_count` candidates contain; spills to `spill_dir` beyond `memory_budget`
/// bytes.
#[pyclass(module = "pfgen_fast._core")]
pub struct RareNgramCounter {
    inner: rare_ngrams::RareNgramCounter,
}

#[pymethods]
impl RareNgramCounter {
    #[new]
    fn new(n: usize, min_count: u32, spill_dir: PathBuf, memory_budget: usize) -> PyResult<Self> {
        let inner = rare_ngrams::RareNgramCounter::new(n, min_count, &spill_dir, memory_budget)
            .map_err(to_py_error)?;
        Ok(RareNgramCounter { inner })
    }

    /// Adds a batch of candidates.
    fn add(&mut self, py: Python<'_>, candidates: Bound<'_, PyAny>) -> PyResult<()> {
        let candidates = crate::utf8_strings(&candidates, "candidate")?;
        let inner = &mut self.inner;
        py.detach(|| inner.add(&candidates)).map_err(to_py_error)
    }

    /// Writes the buffered n-grams and texts to the spill files, freeing their memory.
    fn spill(&mut self, py: Python<'_>) -> PyResult<()> {
        let inner = &mut self.inner;
        py.detach(|| inner.spill()).map_err(to_py_error)
    }

    #[getter]
    fn buffered_bytes(&self) -> usize {
        self.inner.buffered_bytes()
    }

    #[getter]
    fn num_candidates(&self) -> usize {
        self.inner.num_candidates()
    }

    /// Returns (rare: bool array, lengths: uint32 array in code points, stats dict).
    #[allow(clippy::type_complexity)]
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyDict>,
    )> {
        let inner = &mut self.inner;
        let result = py.detach(|| inner.finish()).map_err(to_py_error)?;
        let stats = PyDict::new(py);
        stats.set_item("occurrences", result.stats.occurrences)?;
        stats.set_item("distinct", result.stats.distinct)?;
        stats.set_item("rare", result.stats.rare)?;
        stats.set_item("spilled_bytes", result.stats.spilled_bytes)?;
        Ok((
            PyArray1::from_vec(py, result.rare),
            PyArray1::from_vec(py, result.lengths),
            stats,
        ))
    }

    /// The texts of the candidates at `indices`, in that order.
    fn texts(&self, py: Python<'_>, indices: Vec<usize>) -> PyResult<Vec<String>> {
        let inner = &self.inner;
        py.detach(|| inner.texts(&indices)).map_err(to_py_error)
    }
}
