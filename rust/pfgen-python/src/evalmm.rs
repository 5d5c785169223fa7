//! Bindings of pfgen_core::evalmm: batches of token-id texts in, one value per pair out.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use pfgen_core::evalmm::{self, Texts};

use crate::errors::CoreError;

/// Runs `score` over the pairs (texts[left[i]], texts[right[i]]) without the GIL.
fn pairs<T, F>(
    py: Python<'_>,
    ids: PyReadonlyArray1<'_, u32>,
    offsets: PyReadonlyArray1<'_, u64>,
    left: PyReadonlyArray1<'_, u64>,
    right: PyReadonlyArray1<'_, u64>,
    score: F,
) -> PyResult<Vec<T>>
where
    T: Send + Default + Clone,
    F: Fn(&[u32], &[u32]) -> T + Sync + Send,
{
    let ids = ids.as_slice()?;
    let offsets = offsets.as_slice()?;
    let left = left.as_slice()?;
    let right = right.as_slice()?;
    py.detach(|| {
        let texts = Texts::new(ids, offsets)?;
        evalmm::score_pairs(&texts, left, right, score)
    })
    .map_err(|error| CoreError::from(error).into())
}

/// ROUGE-L F-measure × 100 of texts[right[i]] (prediction) against texts[left[i]] (reference).
#[pyfunction]
pub(crate) fn rouge_l<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, u64>,
    left: PyReadonlyArray1<'py, u64>,
    right: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let out = pairs(py, ids, offsets, left, right, evalmm::rouge_l_f)?;
    Ok(PyArray1::from_vec(py, out))
}

/// sacrebleu sentence BLEU / 100 of texts[left[i]] (hypothesis) against texts[right[i]].
#[pyfunction]
pub(crate) fn sentence_bleu<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, u64>,
    left: PyReadonlyArray1<'py, u64>,
    right: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let out = pairs(py, ids, offsets, left, right, evalmm::sentence_bleu)?;
    Ok(PyArray1::from_vec(py, out))
}

/// Σ over ids of min(count in texts[left[i]], count in texts[right[i]]).
#[pyfunction]
pub(crate) fn bag_overlap<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, u64>,
    left: PyReadonlyArray1<'py, u64>,
    right: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let out = pairs(py, ids, offsets, left, right, evalmm::bag_overlap)?;
    Ok(PyArray1::from_vec(py, out))
}

/// The edit distance between texts[left[i]] and texts[right[i]].
#[pyfunction]
pub(crate) fn levenshtein<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, u64>,
    left: PyReadonlyArray1<'py, u64>,
    right: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let out = pairs(py, ids, offsets, left, right, evalmm::levenshtein)?;
    Ok(PyArray1::from_vec(py, out))
}

/// Token ids and each text's offset into them.
type TokenArrays<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u64>>);

/// Token ids of tokenizer outputs split as Python's `str.split()`: (ids uint32, offsets
/// uint64), text i's tokens being ids[offsets[i]..offsets[i + 1]].
#[pyfunction]
pub(crate) fn token_ids<'py>(py: Python<'py>, texts: Vec<String>) -> PyResult<TokenArrays<'py>> {
    let (ids, offsets) = py.detach(|| evalmm::intern_tokens(&texts));
    Ok((PyArray1::from_vec(py, ids), PyArray1::from_vec(py, offsets)))
}

/// Fills `pfgen_fast._core.evalmm`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rouge_l, m)?)?;
    m.add_function(wrap_pyfunction!(sentence_bleu, m)?)?;
    m.add_function(wrap_pyfunction!(bag_overlap, m)?)?;
    m.add_function(wrap_pyfunction!(levenshtein, m)?)?;
    m.add_function(wrap_pyfunction!(token_ids, m)?)?;
    Ok(())
}
