//! Conversions every binding uses (Python strings to Rust texts), and the core's common
//! pieces (`pfgen_fast._core.common`): Python's rounding and sums, returning freed memory.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

use pfgen_core::common::py_sum::SumMode;

pub(crate) mod arrow_stream;

/// Copies Python strings into Rust. `encode_utf8` makes a temporary bytes object instead of
/// the UTF-8 copy that `str` extraction would cache inside every string for its lifetime.
pub(crate) fn utf8_strings(strings: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    let mut copies = Vec::with_capacity(strings.len().unwrap_or(0));
    for (index, item) in strings.try_iter()?.enumerate() {
        let item = item?;
        let text = item
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err(format!("{what} {index} is not a string")))?;
        let bytes = text.encode_utf8().map_err(|_| {
            PyValueError::new_err(format!(
                "{what} {index} is not valid Unicode text (it holds a lone surrogate)"
            ))
        })?;
        let bytes = bytes.as_bytes().to_vec();
        // SAFETY: `encode_utf8` made these bytes from a str without lone surrogates: they are
        // valid UTF-8, and checking them again would only cost time.
        copies.push(unsafe { String::from_utf8_unchecked(bytes) });
    }
    Ok(copies)
}

/// The characters of many texts in one buffer, and where each text ends: read straight from
/// the strings' code points (`PyUnicode_AsUCS4`), without the UTF-8 round trip. A lone
/// surrogate (not a character) is refused; `what` names the texts in errors.
pub(crate) fn text_characters(
    strings: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<(Vec<char>, Vec<usize>)> {
    let py = strings.py();
    let mut characters: Vec<char> = Vec::new();
    let mut ends = Vec::with_capacity(strings.len().unwrap_or(0));
    let mut code_points: Vec<u32> = Vec::new();
    for (index, item) in strings.try_iter()?.enumerate() {
        let item = item?;
        let text = item
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err(format!("{what} {index} is not a string")))?;
        // SAFETY: `text` is a live str object.
        let length = unsafe { ffi::PyUnicode_GetLength(text.as_ptr()) };
        if length < 0 {
            return Err(PyErr::fetch(py));
        }
        code_points.clear();
        code_points.resize(length as usize, 0);
        if length > 0 {
            // SAFETY: the buffer holds exactly the string's `length` code points; no NUL added.
            let filled = unsafe {
                ffi::PyUnicode_AsUCS4(text.as_ptr(), code_points.as_mut_ptr(), length, 0)
            };
            if filled.is_null() {
                return Err(PyErr::fetch(py));
            }
        }
        // Checked all at once, then converted (a loop without early exits: vector code).
        let invalid = code_points.iter().fold(false, |invalid, &code_point| {
            invalid | char::from_u32(code_point).is_none()
        });
        if invalid {
            return Err(PyValueError::new_err(format!(
                "{what} {index} is not valid Unicode text (it holds a lone surrogate)"
            )));
        }
        characters.extend(
            code_points.iter().map(|&code_point| {
                char::from_u32(code_point).unwrap_or(char::REPLACEMENT_CHARACTER)
            }),
        );
        ends.push(characters.len());
    }
    Ok((characters, ends))
}

/// The texts of a buffer from `text_characters`.
pub(crate) fn slices<'a>(characters: &'a [char], ends: &[usize]) -> Vec<&'a [char]> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let text = &characters[start..end];
            start = end;
            text
        })
        .collect()
}

/// Table building frees large scratch buffers, which glibc keeps mapped (its mmap threshold
/// grows after such frees): after building many tables, hand them back so that only the tables
/// stay resident. (Not after each table: the next build reuses them.)
#[pyfunction]
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim only returns unused heap pages to the kernel.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// `round(x, digits)` as Python computes it (exposed for tests of the core's rounding).
#[pyfunction]
pub(crate) fn py_round(x: f64, digits: u32) -> PyResult<f64> {
    if digits > 22 {
        return Err(PyValueError::new_err("digits must be at most 22"));
    }
    Ok(pfgen_core::common::py_float::py_round(x, digits))
}

/// Python's `sum()` of floats: as Python >= 3.12 adds them (compensated), or with `legacy` as
/// Python <= 3.11 does (left to right).
#[pyfunction]
#[pyo3(signature = (values, legacy=false))]
pub(crate) fn py_sum(values: Vec<f64>, legacy: bool) -> f64 {
    pfgen_core::common::py_sum::py_sum(values, SumMode::from_legacy(legacy))
}

/// Fills `pfgen_fast._core.common`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_round, m)?)?;
    m.add_function(wrap_pyfunction!(py_sum, m)?)?;
    m.add_function(wrap_pyfunction!(release_free_memory, m)?)
}
