//! `pfgen_fast._core.RareNgramCounter`: the rare n-gram filter of reference-set construction
//! (pfgen_core::pfgen::construct::rare_ngrams), and the strict check of candidate lines
//! (pfgen_core::pfgen::construct::candidate_lines). Type conversion only; the work runs with the GIL released.
//!
//! Candidates come as a sequence of str, or as any object exporting an Arrow C stream of string
//! views (`__arrow_c_stream__` of a polars Series of strings): then the counter reads the Arrow
//! buffers in place, with no Python string made or re-encoded.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::PathBuf;
use std::ptr::NonNull;

use numpy::PyArray1;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyCapsule, PyDict, PyString};

use pfgen_core::pfgen::construct::candidate_lines;
use pfgen_core::pfgen::construct::rare_ngrams::{self, RareNgramError};

fn to_py_error(error: RareNgramError) -> PyErr {
    match error {
        RareNgramError::Io(..) => PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
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

// The Arrow C data interface (https://arrow.apache.org/docs/format/CDataInterface.html).

#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct ArrowArrayStream {
    get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    private_data: *mut c_void,
}

impl ArrowSchema {
    fn empty() -> Box<ArrowSchema> {
        Box::new(ArrowSchema {
            format: std::ptr::null(),
            name: std::ptr::null(),
            metadata: std::ptr::null(),
            flags: 0,
            n_children: 0,
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        })
    }
}

impl Drop for ArrowSchema {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: the producer filled this schema and we own it; release is called once.
            unsafe { release(self) };
        }
    }
}

impl ArrowArray {
    fn empty() -> Box<ArrowArray> {
        Box::new(ArrowArray {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: std::ptr::null_mut(),
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        })
    }
}

impl Drop for ArrowArray {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: the producer filled this array and we own it; release is called once.
            unsafe { release(self) };
        }
    }
}

/// A stream moved out of its capsule: ours to read and release.
struct OwnedStream(ArrowArrayStream);

impl Drop for OwnedStream {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: we moved the stream out of the capsule (its release there is cleared).
            unsafe { release(&mut self.0) };
        }
    }
}

impl OwnedStream {
    /// Takes the stream of `object.__arrow_c_stream__()`, as the PyCapsule interface says a
    /// consumer does: copy the struct and mark the capsule's as released.
    fn take(object: &Bound<'_, PyAny>) -> PyResult<OwnedStream> {
        let capsule = object.call_method0("__arrow_c_stream__")?;
        let capsule = capsule.cast::<PyCapsule>()?;
        let pointer: NonNull<ArrowArrayStream> =
            capsule.pointer_checked(Some(c"arrow_array_stream"))?.cast();
        // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream, alive while
        // the capsule is; we move it out and clear its release so only we release it.
        unsafe {
            let stream = std::ptr::read(pointer.as_ptr());
            (*pointer.as_ptr()).release = None;
            Ok(OwnedStream(stream))
        }
    }

    fn error(&mut self, what: &str) -> PyErr {
        let detail = self
            .0
            .get_last_error
            // SAFETY: the stream is alive; the message (if any) is valid until the next call.
            .map(|get| unsafe { get(&mut self.0) })
            .filter(|message| !message.is_null())
            // SAFETY: a non-null message is a NUL-terminated string owned by the stream.
            .map(|message| {
                unsafe { CStr::from_ptr(message) }
                    .to_string_lossy()
                    .into_owned()
            })
            .unwrap_or_default();
        PyValueError::new_err(format!("Arrow stream: {what} {detail}"))
    }

    fn format(&mut self) -> PyResult<String> {
        let mut schema = ArrowSchema::empty();
        let get_schema = self
            .0
            .get_schema
            .ok_or_else(|| self.error("no get_schema"))?;
        // SAFETY: the stream is alive and `schema` is a valid out-pointer.
        if unsafe { get_schema(&mut self.0, &mut *schema) } != 0 || schema.format.is_null() {
            return Err(self.error("cannot read the schema"));
        }
        // SAFETY: a filled schema's format is a NUL-terminated string.
        let format = unsafe { CStr::from_ptr(schema.format) };
        Ok(format.to_string_lossy().into_owned())
    }

    /// The next array, or None at the end of the stream.
    fn next(&mut self) -> PyResult<Option<Box<ArrowArray>>> {
        let mut array = ArrowArray::empty();
        let get_next = self.0.get_next.ok_or_else(|| self.error("no get_next"))?;
        // SAFETY: the stream is alive and `array` is a valid out-pointer.
        if unsafe { get_next(&mut self.0, &mut *array) } != 0 {
            return Err(self.error("cannot read the next array"));
        }
        Ok(array.release.is_some().then_some(array))
    }
}

/// Checks that the stream holds string (or binary) view arrays, the layout polars exports.
fn check_view_format(format: &str) -> PyResult<()> {
    match format {
        "vu" | "vz" => Ok(()),
        _ => Err(PyTypeError::new_err(format!(
            "candidates must be an Arrow stream of string views, as a polars Series of strings \
             exports (got format {format:?})"
        ))),
    }
}

/// The byte strings of a string view array, borrowed from its buffers: 16-byte views, each a
/// length, then the bytes inline if at most 12, else a prefix, a data buffer index and an
/// offset; the last buffer holds the data buffers' sizes, to check every view against.
///
/// # Safety
/// `array` must be a live view array, as its producer filled it.
unsafe fn view_strings(array: &ArrowArray) -> PyResult<Vec<&[u8]>> {
    let length = usize::try_from(array.length).unwrap_or(0);
    let offset = usize::try_from(array.offset).unwrap_or(0);
    let n_buffers = usize::try_from(array.n_buffers).unwrap_or(0);
    if length == 0 {
        return Ok(Vec::new());
    }
    // Validity, views, data buffers (maybe none), their sizes.
    if array.buffers.is_null() || n_buffers < 3 {
        return Err(PyValueError::new_err("Arrow array: missing buffers"));
    }
    let buffers = std::slice::from_raw_parts(array.buffers, n_buffers);
    if array.null_count != 0 && !buffers[0].is_null() {
        return Err(PyValueError::new_err("candidates must not be null"));
    }
    let data_buffers = &buffers[2..n_buffers - 1];
    let sizes =
        std::slice::from_raw_parts(buffers[n_buffers - 1] as *const i64, data_buffers.len());
    let views = buffers[1] as *const u8;
    let mut strings = Vec::with_capacity(length);
    for i in offset..offset + length {
        let view = std::slice::from_raw_parts(views.add(16 * i), 16);
        let word = |at: usize| {
            let mut bytes = [0u8; 4];
            bytes.copy_from_slice(&view[at..at + 4]);
            u32::from_le_bytes(bytes) as usize
        };
        let size = word(0);
        if size <= 12 {
            strings.push(&view[4..4 + size]);
            continue;
        }
        let (buffer, start) = (word(8), word(12));
        let within = sizes
            .get(buffer)
            .is_some_and(|&bytes| start + size <= usize::try_from(bytes).unwrap_or(0));
        if !within {
            return Err(PyValueError::new_err(
                "Arrow array: a view out of its buffer",
            ));
        }
        let data = data_buffers[buffer] as *const u8;
        strings.push(std::slice::from_raw_parts(data.add(start), size));
    }
    Ok(strings)
}

/// Counts the character n-grams of one question's candidates, added in batches, to find those
/// that fewer than `min_count` candidates contain; spills to `spill_dir` beyond `memory_budget`
/// bytes of n-gram tables and texts.
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
        stats.set_item("alphabet", result.stats.alphabet)?;
        stats.set_item("wide", result.stats.wide)?;
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

/// Checks the candidate lines in `buffer[:length]` (JSON lines; see
/// pfgen_core::pfgen::construct::candidate_lines). Returns (usable, line_indices, lines, problems): the usable
/// lines joined by "\n", the 0-based index in the block of each, the number of lines in the
/// block, and (index, message) for each unusable line.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn check_candidate_lines<'py>(
    py: Python<'py>,
    buffer: Bound<'py, PyByteArray>,
    length: usize,
) -> PyResult<(
    Bound<'py, PyBytes>,
    Bound<'py, PyArray1<u32>>,
    usize,
    Vec<(usize, String)>,
)> {
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
    Ok((
        joined,
        PyArray1::from_vec(py, checked.line_indices),
        checked.lines,
        problems,
    ))
}

/// Bytes of the usable lines, each with a line break.
fn checked_length(checked: &candidate_lines::CheckedLines) -> usize {
    checked
        .usable
        .iter()
        .map(|(start, end)| end - start + 1)
        .sum()
}
