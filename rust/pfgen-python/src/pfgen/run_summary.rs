//! The numbers of a run's result.json (pfgen_core::run_summary): per question and per run.

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use pfgen_core::common::py_sum::SumMode;
use pfgen_core::pfgen::run_summary::ScoreColumns;

/// A question's part of result.json: score, length and their deviations, per-source fluency
/// and truthfulness means, helpfulness and average means (rounded as written), and the
/// file-order indices of the sampled answers, in sample order.
#[pyclass(frozen, get_all, module = "pfgen_fast._core.pfgen")]
pub(crate) struct QuestionStats {
    score: f64,
    score_std: f64,
    length: f64,
    length_std: f64,
    fluency: Vec<f64>,
    truthfulness: Vec<f64>,
    helpfulness: f64,
    average: f64,
    samples: Vec<usize>,
}

impl From<pfgen_core::pfgen::run_summary::QuestionStats> for QuestionStats {
    fn from(stats: pfgen_core::pfgen::run_summary::QuestionStats) -> Self {
        QuestionStats {
            score: stats.score,
            score_std: stats.score_std,
            length: stats.length,
            length_std: stats.length_std,
            fluency: stats.fluency,
            truthfulness: stats.truthfulness,
            helpfulness: stats.helpfulness,
            average: stats.average,
            samples: stats.samples,
        }
    }
}

/// A run's top-level result.json numbers.
#[pyclass(frozen, get_all, module = "pfgen_fast._core.pfgen")]
pub(crate) struct RunStats {
    num_trials: usize,
    score: f64,
    score_std: f64,
    length: f64,
    length_std: f64,
}

impl From<pfgen_core::pfgen::run_summary::RunStats> for RunStats {
    fn from(stats: pfgen_core::pfgen::run_summary::RunStats) -> Self {
        RunStats {
            num_trials: stats.num_trials,
            score: stats.score,
            score_std: stats.score_std,
            length: stats.length,
            length_std: stats.length_std,
        }
    }
}

/// The numbers of one question from its answers' scores (file order): fluency and
/// truthfulness (answers, sources), helpfulness, average and lengths (answers).
#[pyfunction]
#[pyo3(signature = (fluency, truthfulness, helpfulness, average, lengths, legacy_sum=false))]
fn question_stats(
    fluency: PyReadonlyArray2<'_, f64>,
    truthfulness: PyReadonlyArray2<'_, f64>,
    helpfulness: PyReadonlyArray1<'_, f64>,
    average: PyReadonlyArray1<'_, f64>,
    lengths: PyReadonlyArray1<'_, f64>,
    legacy_sum: bool,
) -> PyResult<QuestionStats> {
    let n = average.len();
    let k = fluency.shape()[1];
    let shapes_agree = n > 0
        && fluency.shape() == [n, k]
        && truthfulness.shape() == [n, k]
        && helpfulness.len() == n
        && lengths.len() == n;
    if !shapes_agree {
        return Err(PyValueError::new_err(
            "question_stats: the arrays must describe the same answers (at least one)",
        ));
    }
    // Copied in row-major order, whatever the arrays' strides.
    let fluency: Vec<f64> = fluency.as_array().iter().copied().collect();
    let truthfulness: Vec<f64> = truthfulness.as_array().iter().copied().collect();
    let helpfulness: Vec<f64> = helpfulness.as_array().iter().copied().collect();
    let average: Vec<f64> = average.as_array().iter().copied().collect();
    let lengths: Vec<f64> = lengths.as_array().iter().copied().collect();
    let columns = ScoreColumns {
        num_sources: k,
        fluency: &fluency,
        truthfulness: &truthfulness,
        helpfulness: &helpfulness,
        average: &average,
        lengths: &lengths,
    };
    let sum = SumMode::from_legacy(legacy_sum);
    Ok(pfgen_core::pfgen::run_summary::question_stats(&columns, sum).into())
}

/// A run's top-level numbers from each question's averages and lengths (file order), the
/// questions in result.json's order.
#[pyfunction]
#[pyo3(signature = (averages, lengths, legacy_sum=false))]
fn run_stats(
    averages: Vec<PyReadonlyArray1<'_, f64>>,
    lengths: Vec<PyReadonlyArray1<'_, f64>>,
    legacy_sum: bool,
) -> PyResult<RunStats> {
    let copy = |arrays: &[PyReadonlyArray1<'_, f64>]| -> Vec<Vec<f64>> {
        arrays
            .iter()
            .map(|array| array.as_array().iter().copied().collect())
            .collect()
    };
    let (averages, lengths) = (copy(&averages), copy(&lengths));
    if averages.is_empty() || averages.iter().chain(&lengths).any(Vec::is_empty) {
        return Err(PyValueError::new_err(
            "run_stats: every question needs at least one answer",
        ));
    }
    let averages: Vec<&[f64]> = averages.iter().map(Vec::as_slice).collect();
    let lengths: Vec<&[f64]> = lengths.iter().map(Vec::as_slice).collect();
    let sum = SumMode::from_legacy(legacy_sum);
    Ok(pfgen_core::pfgen::run_summary::run_stats(&averages, &lengths, sum).into())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<QuestionStats>()?;
    m.add_class::<RunStats>()?;
    m.add_function(wrap_pyfunction!(question_stats, m)?)?;
    m.add_function(wrap_pyfunction!(run_stats, m)?)
}
