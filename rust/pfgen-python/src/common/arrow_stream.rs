//! Reading an Arrow C stream of string views (what `__arrow_c_stream__` of a polars Series of
//! strings exports) in place, through the Arrow C data interface
//! (https://arrow.apache.org/docs/format/CDataInterface.html) and the PyCapsule interface.
//!
//! Written here rather than taken from arrow-rs (`arrow-array`'s `ffi` feature) or pyo3-arrow:
//! only the string-view layout is read, which takes the few structs below, while those crates
//! add the whole Arrow array library to the extension's build (docs/performance.md has the
//! build times measured).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::NonNull;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

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
pub(crate) struct ArrowArray {
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
pub(crate) struct OwnedStream(ArrowArrayStream);

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
    pub(crate) fn take(object: &Bound<'_, PyAny>) -> PyResult<OwnedStream> {
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

    pub(crate) fn format(&mut self) -> PyResult<String> {
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
    pub(crate) fn next(&mut self) -> PyResult<Option<Box<ArrowArray>>> {
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
pub(crate) fn check_view_format(format: &str) -> PyResult<()> {
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
pub(crate) unsafe fn view_strings(array: &ArrowArray) -> PyResult<Vec<&[u8]>> {
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
