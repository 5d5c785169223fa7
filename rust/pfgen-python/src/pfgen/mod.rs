//! Bindings of pfgen_core::pfgen (`pfgen_fast._core.pfgen`): the scorer of one question and its
//! keyword rules, the answer lines of `score`, the trials chunks and summaries of `eval`, and
//! reference-set construction.

use pyo3::prelude::*;

use pfgen_core::pfgen::answer_lines::{BLANK, OTHER};
use pfgen_core::pfgen::spec::{HELPFULNESS_CUT, NOT_FOUND};

pub(crate) mod answer_lines;
pub(crate) mod construct;
pub(crate) mod helpfulness;
pub(crate) mod run_summary;
pub(crate) mod scorer;
pub(crate) mod trials_chunk;

/// Fills `pfgen_fast._core.pfgen`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HELPFULNESS_CUT", HELPFULNESS_CUT)?;
    m.add("NOT_FOUND", NOT_FOUND)?;
    m.add("BLANK_LINE", BLANK)?;
    m.add("OTHER_LINE", OTHER)?;
    m.add_class::<scorer::QuestionScorer>()?;
    m.add_class::<scorer::Scores>()?;
    m.add_class::<helpfulness::KeywordRule>()?;
    m.add_class::<answer_lines::AnswerLines>()?;
    m.add_class::<trials_chunk::TrialsChunk>()?;
    run_summary::register(m)?;
    construct::register(m)
}
