//! `AnswerLines`: a block of `score`'s input read by pfgen_core::answer_lines, and the scored
//! block written back.

use numpy::PyArray1;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use pfgen_core::pfgen::answer_lines::{read_answer_lines, scored_line};

/// The lines of a block of JSON lines with `question` and `answer`.
#[pyclass(module = "pfgen_fast._core.pfgen")]
pub struct AnswerLines {
    block: Py<PyBytes>,
    pub(crate) lines: pfgen_core::pfgen::answer_lines::AnswerLines,
    /// Per line: its scores record (JSON text), once scored.
    pub(crate) records: Vec<Option<String>>,
}

impl AnswerLines {
    pub(crate) fn block<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.block.bind(py).clone()
    }
}

#[pymethods]
impl AnswerLines {
    #[new]
    fn new(py: Python<'_>, block: Bound<'_, PyBytes>) -> Self {
        let bytes = block.as_bytes();
        let lines = py.detach(|| read_answer_lines(bytes));
        let records = vec![None; lines.ranges.len()];
        AnswerLines {
            block: block.unbind(),
            lines,
            records,
        }
    }

    /// The question texts of the lines read, each once, in order of first appearance.
    #[getter]
    fn questions(&self) -> Vec<String> {
        self.lines.questions.clone()
    }

    /// Per line: the index of its question in `questions`; -1 for a blank line, -2 for a line
    /// left to the caller.
    #[getter]
    fn question_of_line<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        PyArray1::from_slice(py, &self.lines.question_of_line)
    }

    /// Line `index`, without its line break.
    fn line<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyBytes>> {
        let &(start, end) = self
            .lines
            .ranges
            .get(index)
            .ok_or_else(|| PyIndexError::new_err(format!("no line {index}")))?;
        Ok(PyBytes::new(py, &self.block(py).as_bytes()[start..end]))
    }

    /// The answers of the lines of `questions[question]`, in order.
    fn answers(&self, py: Python<'_>, question: usize) -> Vec<String> {
        let block = self.block(py);
        let block = block.as_bytes();
        self.lines
            .lines_of(question)
            .into_iter()
            .filter_map(|line| self.lines.answer(block, line).map(str::to_string))
            .collect()
    }

    /// The block's output, line by line: a line scored by `QuestionScorer.score_lines` with its
    /// record added as its last field, a line given in `outputs` (index, bytes) as given; the
    /// other lines are left out.
    fn write<'py>(
        &self,
        py: Python<'py>,
        outputs: Vec<(usize, Bound<'py, PyBytes>)>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let block = self.block(py);
        let block = block.as_bytes();
        let mut given: Vec<Option<&[u8]>> = vec![None; self.records.len()];
        for (index, output) in &outputs {
            let slot = given
                .get_mut(*index)
                .ok_or_else(|| PyIndexError::new_err(format!("no line {index}")))?;
            *slot = Some(output.as_bytes());
        }
        let pieces = |line: usize| -> [&[u8]; 4] {
            match (given[line], &self.records[line]) {
                (Some(output), _) => [output, &[], &[], &[]],
                (None, Some(record)) => {
                    let (start, end) = self.lines.ranges[line];
                    scored_line(&block[start..end], record)
                }
                (None, None) => [&[]; 4],
            }
        };
        let length = (0..given.len())
            .map(|line| pieces(line).iter().map(|piece| piece.len()).sum::<usize>())
            .sum();
        PyBytes::new_with(py, length, |out| {
            let mut at = 0;
            for line in 0..given.len() {
                for piece in pieces(line) {
                    out[at..at + piece.len()].copy_from_slice(piece);
                    at += piece.len();
                }
            }
            Ok(())
        })
    }
}
