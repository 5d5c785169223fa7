//! `pfgen_fast._core.pfgen.RareNgramCounter`: the rare n-gram filter of reference-set construction
//! (pfgen_core::pfgen::construct::rare_ngrams), and the strict check of candidate lines
//! (pfgen_core::pfgen::construct::candidate_lines). Type conversion only; the work runs with the GIL released.
//!
//! Candidates come as a sequence of str, or as any object exporting an Arrow C stream of string
//! views (`__arrow_c_stream__` of a polars Series of strings): then the counter reads the Arrow
//! buffers in place, with no Python string made or re-encoded.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};

use pfgen_core::pfgen::construct::rare_ngrams::{self, RareNgramError};
use pfgen_core::pfgen::construct::{candidate_lines, trigram_counts};

use crate::common::arrow_stream::{check_view_format, view_strings, OwnedStream};
use crate::common::{slices, text_characters, utf8_strings};
use crate::errors::CoreError;

fn to_py_error(error: RareNgramError) -> PyErr {
    CoreError::from(error).into()
}

/// A batch of Python strings copied into one buffer, so that counting runs without the GIL.
struct Batch {
    text: String,
    ends: Vec<usize>,
}

impl Batch {
    fn copy(strings: &Bound<'_, PyAny>) -> PyResult<Batch> {
        let mut batch = Batch {
            text: String::new(),
            ends: Vec::with_capacity(strings.len().unwrap_or(0)),
        };
        for (index, item) in strings.try_iter()?.enumerate() {
            let item = item?;
            let string = item
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err(format!("candidate {index} is not a string")))?;
            // CPython's cached UTF-8 form: the strings are temporaries, so caching costs little.
            let text = string.to_str().map_err(|_| {
                PyValueError::new_err(format!(
                    "candidate {index} is not valid Unicode text (it holds a lone surrogate)"
                ))
            })?;
            batch.text.push_str(text);
            batch.ends.push(batch.text.len());
        }
        Ok(batch)
    }

    fn texts(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let text = &self.text[start..end];
                start = end;
                text
            })
            .collect()
    }
}

/// `RareNgramCounter.finish`: per candidate, whether it holds an n-gram fewer than `min_count`
/// candidates hold (`rare`, bool) and its length in code points (`lengths`, uint32); `stats`:
/// n-gram occurrences, distinct and rare n-grams, alphabet size, wide keys, bytes spilled.
#[pyclass(frozen, get_all, module = "pfgen_fast._core.pfgen")]
pub struct RareNgrams {
    rare: Py<PyAny>,
    lengths: Py<PyAny>,
    stats: Py<PyAny>,
}

/// `check_candidate_lines`: the usable lines joined by "\n" (`usable`), the 0-based index in
/// the block of each (`line_indices`, uint32), the number of lines in the block (`num_lines`)
/// and (index, message) of each unusable line (`problems`).
#[pyclass(frozen, get_all, module = "pfgen_fast._core.pfgen")]
pub struct CheckedLines {
    usable: Py<PyAny>,
    line_indices: Py<PyAny>,
    num_lines: usize,
    problems: Vec<(usize, String)>,
}

/// Counts the character n-grams of one question's candidates, added in batches, to find those
/// that fewer than `min_count` candidates contain; spills to `spill_dir` beyond `memory_budget`
/// bytes of n-gram tables and texts.
#[pyclass(module = "pfgen_fast._core.pfgen")]
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

    /// Adds a batch of candidates: a sequence of str, or an Arrow stream of string views (a
    /// polars Series of dtype String), read in place.
    fn add(&mut self, py: Python<'_>, candidates: Bound<'_, PyAny>) -> PyResult<()> {
        if !candidates.hasattr("__arrow_c_stream__")? {
            let batch = Batch::copy(&candidates)?;
            let texts = batch.texts();
            let inner = &mut self.inner;
            return py.detach(|| inner.add(&texts)).map_err(to_py_error);
        }
        let mut stream = OwnedStream::take(&candidates)?;
        check_view_format(&stream.format()?)?;
        while let Some(array) = stream.next()? {
            // SAFETY: the array came from the stream, whose format is views; it stays alive (and
            // its buffers valid) until dropped after counting.
            let texts = unsafe { view_strings(&array)? };
            let inner = &mut self.inner;
            py.detach(|| inner.add(&texts)).map_err(to_py_error)?;
        }
        Ok(())
    }

    /// Writes the n-gram tables and texts to the spill files, freeing their memory.
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

    /// Which candidates hold a rare n-gram, their lengths, and counts of the work done.
    fn finish(&mut self, py: Python<'_>) -> PyResult<RareNgrams> {
        let inner = &mut self.inner;
        let result = py.detach(|| inner.finish()).map_err(to_py_error)?;
        let stats = PyDict::new(py);
        stats.set_item("occurrences", result.stats.occurrences)?;
        stats.set_item("distinct", result.stats.distinct)?;
        stats.set_item("rare", result.stats.rare)?;
        stats.set_item("alphabet", result.stats.alphabet)?;
        stats.set_item("wide", result.stats.wide)?;
        stats.set_item("spilled_bytes", result.stats.spilled_bytes)?;
        Ok(RareNgrams {
            rare: PyArray1::from_vec(py, result.rare).into_any().unbind(),
            lengths: PyArray1::from_vec(py, result.lengths).into_any().unbind(),
            stats: stats.into_any().unbind(),
        })
    }

    /// The texts of the candidates at `indices`, in that order.
    fn texts(&self, py: Python<'_>, indices: Vec<usize>) -> PyResult<Vec<String>> {
        let inner = &self.inner;
        py.detach(|| inner.texts(&indices)).map_err(to_py_error)
    }
}

/// Checks the candidate lines in `buffer[:length]` (JSON lines; see
/// pfgen_core::pfgen::construct::candidate_lines).
#[pyfunction]
pub fn check_candidate_lines(
    py: Python<'_>,
    buffer: Bound<'_, PyByteArray>,
    length: usize,
) -> PyResult<CheckedLines> {
    // SAFETY: the GIL stays held while the bytes are read, so no Python code can resize or
    // change the bytearray meanwhile (the checking threads touch no Python object).
    let bytes = unsafe { buffer.as_bytes() };
    let block = bytes
        .get(..length)
        .ok_or_else(|| PyValueError::new_err("length beyond the buffer"))?;
    let checked = candidate_lines::check_lines(block);
    let joined = PyBytes::new_with(py, checked_length(&checked), |out| {
        let mut at = 0;
        for &(start, end) in &checked.usable {
            out[at..at + end - start].copy_from_slice(&block[start..end]);
            out[at + end - start] = b'\n';
            at += end - start + 1;
        }
        Ok(())
    })?;
    let problems = checked
        .problems
        .into_iter()
        .map(|problem| (problem.line, problem.message))
        .collect();
    Ok(CheckedLines {
        usable: joined.into_any().unbind(),
        line_indices: PyArray1::from_vec(py, checked.line_indices)
            .into_any()
            .unbind(),
        num_lines: checked.lines,
        problems,
    })
}

/// Bytes of the usable lines, each with a line break.
fn checked_length(checked: &candidate_lines::CheckedLines) -> usize {
    checked
        .usable
        .iter()
        .map(|(start, end)| end - start + 1)
        .sum()
}

/// For every character of every text, in order: the largest number of `references` (a
/// question's reference answers, all sources) holding a 3-gram of its text that covers it.
#[pyfunction]
pub(crate) fn trigram_coverage<'py>(
    py: Python<'py>,
    references: Bound<'py, PyAny>,
    texts: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let references = utf8_strings(&references, "reference answer")?;
    let (characters, ends) = text_characters(&texts, "text")?;
    let coverage =
        py.detach(|| trigram_counts::trigram_coverage(&references, &slices(&characters, &ends)));
    Ok(PyArray1::from_vec(py, coverage))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RareNgramCounter>()?;
    m.add_class::<RareNgrams>()?;
    m.add_class::<CheckedLines>()?;
    m.add_function(wrap_pyfunction!(check_candidate_lines, m)?)?;
    m.add_function(wrap_pyfunction!(trigram_coverage, m)?)
}
