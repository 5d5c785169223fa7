//! Bindings of pfgen_core::pfgen's scorer: the scorer of one question (tables, rules, scores)
//! and the scores of a batch.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use pfgen_core::common::py_sum::SumMode;
use pfgen_core::pfgen::helpfulness::WeightedRule;
use pfgen_core::pfgen::reference::{ReferenceTables, Source};

use crate::common::{slices, text_characters, utf8_strings};
use crate::errors::CoreError;
use crate::pfgen::answer_lines;
use crate::pfgen::helpfulness::KeywordRule;
use crate::pfgen::trials_chunk;

/// Top-level rules with their factors (1 - importance), copied out of their Python objects.
fn convert_rules(rules: &[(PyRef<'_, KeywordRule>, f64)]) -> Vec<WeightedRule> {
    rules
        .iter()
        .map(|(rule, factor)| WeightedRule {
            rule: rule.rule.clone(),
            factor: *factor,
        })
        .collect()
}

/// Scores of a batch (`QuestionScorer.score`), rounded as in the per-answer record: 2-D arrays
/// (answers, sources), 1-D arrays per answer, and the optional per-answer lists (or None).
#[pyclass(frozen, get_all, module = "pfgen_fast._core.pfgen")]
pub(crate) struct Scores {
    fluency: Py<PyAny>,
    truthfulness: Py<PyAny>,
    helpfulness: Py<PyAny>,
    average: Py<PyAny>,
    lengths: Py<PyAny>,
    helpfulness_results: Py<PyAny>,
    records_json: Py<PyAny>,
}

/// The n-gram tables and keyword rules of one question.
#[pyclass(frozen, module = "pfgen_fast._core.pfgen")]
pub(crate) struct QuestionScorer {
    inner: pfgen_core::pfgen::QuestionScorer,
    sources: Vec<String>,
}

impl QuestionScorer {
    /// The match-end matrix as a flat row-major vector, checked against the rules.
    fn external_values(
        &self,
        num_answers: usize,
        external: Option<PyReadonlyArray2<'_, u32>>,
    ) -> PyResult<Vec<u32>> {
        match &external {
            Some(array) => {
                let shape = array.shape();
                if shape != [num_answers, self.inner.num_external] {
                    return Err(PyValueError::new_err(format!(
                        "external must have shape ({num_answers}, {}), got {shape:?}",
                        self.inner.num_external
                    )));
                }
                Ok(array.as_array().iter().copied().collect())
            }
            None if self.inner.num_external > 0 => Err(PyValueError::new_err(
                "this question has regex rules: pass external",
            )),
            None => Ok(Vec::new()),
        }
    }
}

#[pymethods]
impl QuestionScorer {
    /// sources: [(key, [reference answers])]; rules: [(rule, 1 - importance)];
    /// num_external: columns of the match-end matrix `score` takes for "external" leaves.
    #[new]
    fn new(
        py: Python<'_>,
        sources: Vec<(String, Bound<'_, PyAny>)>,
        rules: Vec<(PyRef<'_, KeywordRule>, f64)>,
        num_external: usize,
    ) -> PyResult<Self> {
        let sources = sources
            .into_iter()
            .map(|(key, answers)| Ok((key, utf8_strings(&answers, "reference answer")?)))
            .collect::<PyResult<Vec<_>>>()?;
        let rules = convert_rules(&rules);
        let inner = py
            .detach(|| {
                let sources: Vec<Source> = sources
                    .iter()
                    .map(|(key, answers)| Source { key, answers })
                    .collect();
                pfgen_core::pfgen::QuestionScorer::new(&sources, rules, num_external)
            })
            .map_err(CoreError::from)?;
        let sources = sources.into_iter().map(|(key, _)| key).collect();
        Ok(QuestionScorer { inner, sources })
    }

    /// A scorer whose tables are read from `path` (written by `save_tables`) instead of
    /// built; `sources`, `rules` and `num_external` as for the constructor (the sources' keys
    /// only). ValueError if the file is not a valid table file of these sources.
    #[staticmethod]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        sources: Vec<String>,
        rules: Vec<(PyRef<'_, KeywordRule>, f64)>,
        num_external: usize,
    ) -> PyResult<Self> {
        let rules = convert_rules(&rules);
        let references = py.detach(|| -> PyResult<ReferenceTables> {
            let file = File::open(&path)?;
            let length = file.metadata()?.len();
            let input = BufReader::with_capacity(1 << 20, file);
            Ok(ReferenceTables::read_from(input, length).map_err(CoreError::table_file(&path))?)
        })?;
        if references.num_sources() != sources.len() {
            return Err(PyValueError::new_err(format!(
                "{}: tables of {} sources, not {}",
                path.display(),
                references.num_sources(),
                sources.len()
            )));
        }
        Ok(QuestionScorer {
            inner: pfgen_core::pfgen::QuestionScorer {
                references,
                rules,
                num_external,
            },
            sources,
        })
    }

    /// Writes the n-gram tables to `path` (see pfgen_core::table_file).
    fn save_tables(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| {
            let file = BufWriter::with_capacity(1 << 20, File::create(&path)?);
            self.inner.references.write_to(file)?;
            Ok(())
        })
    }

    /// Scores answers. `external`: (len(answers), num_external) uint32 match ends (NOT_FOUND
    /// when absent). `with_results`, `with_json`: also each answer's `helpfulness_results`, its
    /// record as JSON text. `legacy_sum`: the average's sums as Python <= 3.11 adds.
    #[pyo3(signature = (answers, external=None, with_results=false, with_json=false, legacy_sum=false))]
    fn score(
        &self,
        py: Python<'_>,
        answers: Bound<'_, PyAny>,
        external: Option<PyReadonlyArray2<'_, u32>>,
        with_results: bool,
        with_json: bool,
        legacy_sum: bool,
    ) -> PyResult<Scores> {
        let (characters, ends) = text_characters(&answers, "answer")?;
        let answers = slices(&characters, &ends);
        let lengths: Vec<f64> = answers.iter().map(|answer| answer.len() as f64).collect();
        let n = answers.len();
        let external_values = self.external_values(n, external)?;
        let (batch, records) = py.detach(|| {
            let batch = self.inner.score_batch(
                &answers,
                &external_values,
                with_results || with_json,
                SumMode::from_legacy(legacy_sum),
            );
            let records = with_json.then(|| batch.records_json(&self.sources));
            (batch, records)
        });
        let k = batch.num_sources;
        let records_json = match records {
            Some(records) => {
                PyList::new(py, records.iter().map(|r| PyBytes::new(py, r.as_bytes())))?.into_any()
            }
            None => py.None().into_bound(py),
        };
        let helpfulness_results = match batch.helpfulness_results.as_ref().filter(|_| with_results)
        {
            Some(all) => {
                let rows = all.iter().map(|results| {
                    results
                        .iter()
                        .map(|(name, factor)| (name.to_string(), *factor))
                        .collect::<Vec<_>>()
                });
                PyList::new(py, rows)?.into_any()
            }
            None => py.None().into_bound(py),
        };
        Ok(Scores {
            fluency: PyArray1::from_vec(py, batch.fluency)
                .reshape([n, k])?
                .into_any()
                .unbind(),
            truthfulness: PyArray1::from_vec(py, batch.truthfulness)
                .reshape([n, k])?
                .into_any()
                .unbind(),
            helpfulness: PyArray1::from_vec(py, batch.helpfulness)
                .into_any()
                .unbind(),
            average: PyArray1::from_vec(py, batch.average).into_any().unbind(),
            lengths: PyArray1::from_vec(py, lengths).into_any().unbind(),
            helpfulness_results: helpfulness_results.unbind(),
            records_json: records_json.unbind(),
        })
    }

    /// Scores the answers of the lines of `lines.questions[question]` and keeps their records
    /// for `lines.write`. `external` and `legacy_sum` as for `score`, a row per line of the
    /// question.
    #[pyo3(signature = (lines, question, external=None, legacy_sum=false))]
    fn score_lines(
        &self,
        py: Python<'_>,
        mut lines: PyRefMut<'_, answer_lines::AnswerLines>,
        question: usize,
        external: Option<PyReadonlyArray2<'_, u32>>,
        legacy_sum: bool,
    ) -> PyResult<()> {
        let indices = lines.lines.lines_of(question);
        let external_values = self.external_values(indices.len(), external)?;
        let block = lines.block(py);
        let block = block.as_bytes();
        let read = &lines.lines;
        let records = py.detach(|| {
            let texts: Vec<&str> = indices
                .iter()
                .map(|&line| read.answer(block, line).unwrap_or_default())
                .collect();
            // At most a character per byte: no growing while decoding.
            let mut characters = Vec::with_capacity(texts.iter().map(|text| text.len()).sum());
            let mut ends = Vec::with_capacity(indices.len());
            for text in texts {
                characters.extend(text.chars());
                ends.push(characters.len());
            }
            let answers = slices(&characters, &ends);
            let batch = self.inner.score_batch(
                &answers,
                &external_values,
                true,
                SumMode::from_legacy(legacy_sum),
            );
            batch.records_json(&self.sources)
        });
        for (line, record) in indices.into_iter().zip(records) {
            lines.records[line] = Some(record);
        }
        Ok(())
    }

    /// Scores the answers of `runs` of `chunk` to `question` in one batch and keeps their
    /// scores and records in the chunk. `external` and `legacy_sum` as for `score`, a row per
    /// answer (`chunk.answers(question, runs)`).
    #[pyo3(signature = (chunk, question, runs, external=None, legacy_sum=false))]
    fn score_chunk(
        &self,
        py: Python<'_>,
        chunk: &Bound<'_, trials_chunk::TrialsChunk>,
        question: usize,
        runs: Vec<usize>,
        external: Option<PyReadonlyArray2<'_, u32>>,
        legacy_sum: bool,
    ) -> PyResult<()> {
        let chunk = &chunk.get().inner;
        let external_values = self.external_values(chunk.num_answers(question, &runs), external)?;
        py.detach(|| {
            chunk.score_question(
                question,
                &runs,
                &self.inner,
                &self.sources,
                &external_values,
                SumMode::from_legacy(legacy_sum),
            )
        })
        .map_err(CoreError::from)?;
        Ok(())
    }

    #[getter]
    fn baselines(&self) -> Vec<f64> {
        self.inner.references.baselines().to_vec()
    }

    #[getter]
    fn num_nodes(&self) -> usize {
        self.inner.references.num_nodes()
    }

    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.references.memory_bytes()
    }
}
