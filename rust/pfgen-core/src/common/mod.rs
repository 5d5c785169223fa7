//! Pieces shared by every benchmark: JSON lines, Python's float formatting and rounding,
//! software prefetching.

pub mod json_lines;
pub mod page_buffer;
pub(crate) mod prefetch;
pub mod py_float;
pub mod py_json;
pub mod py_sum;
#[cfg(test)]
pub(crate) mod test_dir;
#[cfg(test)]
pub(crate) mod test_texts;
