//! `TrialsChunk`: the runs of a chunk of `eval` read by pfgen_core::trials_chunk (the GIL
//! released), and their scores once each question is scored (`QuestionScorer.score_chunk`).

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use pfgen_core::pfgen::trials_chunk::{ChunkError, TrialsFile};

use pfgen_core::common::py_sum::SumMode;

use super::run_summary::{QuestionStats, RunStats};
use crate::errors::CoreError;

/// The runs of a chunk: their answers grouped by question, and their scores.
#[pyclass(frozen, module = "pfgen_fast._core.pfgen")]
pub struct TrialsChunk {
    pub(crate) inner: pfgen_core::pfgen::trials_chunk::TrialsChunk,
}

#[pymethods]
impl TrialsChunk {
    /// Reads and hashes the trials files at `paths` (`compressed[i]`: file i is .xz) and reads
    /// the answers of those whose hash is not `current_hashes[i]`, against the data's question
    /// texts `questions` (questions are numbered in this order).
    #[new]
    fn new(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        compressed: Vec<bool>,
        current_hashes: Vec<Option<String>>,
        questions: Vec<String>,
    ) -> Self {
        let files: Vec<TrialsFile> = paths
            .iter()
            .zip(compressed)
            .zip(&current_hashes)
            .map(|((path, compressed), current_hash)| TrialsFile {
                path,
                compressed,
                current_hash: current_hash.as_deref(),
            })
            .collect();
        let inner =
            py.detach(|| pfgen_core::pfgen::trials_chunk::TrialsChunk::read(&files, &questions));
        TrialsChunk { inner }
    }

    /// Run `run`'s input hash (SHA-1 of its file, hexadecimal), or None when it is current or
    /// its file could not be read.
    fn input_hash(&self, run: usize) -> Option<&str> {
        self.inner.input_hash(run)
    }

    /// Whether run `run`'s file has its current result's hash (it was not read further).
    fn is_current(&self, run: usize) -> bool {
        self.inner.is_current(run)
    }

    /// The system's error number when run `run`'s file could not be read, else None.
    fn read_error(&self, run: usize) -> Option<i32> {
        self.inner.read_error(run)
    }

    /// The file's bytes as stored of run `run` when it is left to the caller's reader (else
    /// None).
    fn careful_bytes<'py>(&self, py: Python<'py>, run: usize) -> Option<Bound<'py, PyBytes>> {
        self.inner
            .careful(run)
            .map(|(_, bytes)| PyBytes::new(py, bytes))
    }

    /// The number of answers of run `run` to each question (of a marked run, the generated
    /// ones; empty for a run not read).
    fn counts<'py>(&self, py: Python<'py>, run: usize) -> Bound<'py, PyArray1<usize>> {
        PyArray1::from_vec(py, self.inner.counts(run))
    }

    /// Whether run `run`'s lines carry the runners' `generated` mark (false for a run not
    /// read).
    fn is_marked(&self, run: usize) -> bool {
        self.inner.is_marked(run)
    }

    /// The number of answers of run `run` the runner gave up on, per question (not among
    /// `counts`; empty for a run not read).
    fn given_up<'py>(&self, py: Python<'py>, run: usize) -> Bound<'py, PyArray1<usize>> {
        PyArray1::from_vec(py, self.inner.given_up(run))
    }

    /// The answers of `runs` to `question`, in run order, then file order.
    fn answers(&self, question: usize, runs: Vec<usize>) -> Vec<String> {
        let answers = self.inner.answers(question, &runs);
        answers.into_iter().map(str::to_string).collect()
    }

    /// The lines (without their line break) of run `run`'s answers `indices` (file order
    /// among its answers) to `question`.
    fn lines<'py>(
        &self,
        py: Python<'py>,
        run: usize,
        question: usize,
        indices: Vec<usize>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        bytes_of(py, indices, |index| self.inner.line(run, question, index))
    }

    /// The records (JSON text) of run `run`'s answers `indices` to `question`, once scored.
    fn records<'py>(
        &self,
        py: Python<'py>,
        run: usize,
        question: usize,
        indices: Vec<usize>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        bytes_of(py, indices, |index| self.inner.record(run, question, index))
    }

    /// The result.json numbers of run `run`'s answers to `question`.
    #[pyo3(signature = (run, question, legacy_sum=false))]
    fn question_stats(
        &self,
        run: usize,
        question: usize,
        legacy_sum: bool,
    ) -> PyResult<QuestionStats> {
        let stats = self
            .inner
            .question_stats(run, question, SumMode::from_legacy(legacy_sum))
            .map_err(CoreError::from)?;
        Ok(stats.into())
    }

    /// The top-level result.json numbers of run `run`, over `questions` in result.json's
    /// order.
    #[pyo3(signature = (run, questions, legacy_sum=false))]
    fn run_stats(&self, run: usize, questions: Vec<usize>, legacy_sum: bool) -> PyResult<RunStats> {
        let stats = self
            .inner
            .run_stats(run, &questions, SumMode::from_legacy(legacy_sum))
            .map_err(CoreError::from)?;
        Ok(stats.into())
    }

    /// The questions part of run `run`'s score cache: `key:[record,...]` per (question, key)
    /// of `keys` scored for the run, in that order, joined by commas.
    fn cache_questions<'py>(
        &self,
        py: Python<'py>,
        run: usize,
        keys: Vec<(usize, Vec<u8>)>,
    ) -> Bound<'py, PyBytes> {
        let keys: Vec<(usize, &[u8])> = keys.iter().map(|(q, key)| (*q, key.as_slice())).collect();
        let part = py.detach(|| self.inner.cache_questions(run, &keys));
        PyBytes::new(py, &part)
    }
}

/// The texts `get` gives for `indices`, as bytes.
fn bytes_of<'py, T: AsRef<[u8]>>(
    py: Python<'py>,
    indices: Vec<usize>,
    get: impl Fn(usize) -> Result<T, ChunkError>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    indices
        .into_iter()
        .map(|index| {
            let text = get(index).map_err(CoreError::from)?;
            Ok(PyBytes::new(py, text.as_ref()))
        })
        .collect()
}
