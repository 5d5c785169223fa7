//! Scoring batches of answers to one question: tables, rules, and the per-answer records.

use rayon::prelude::*;

use crate::common::py_float::py_round;
use crate::common::py_sum::{py_sum, SumMode};
use crate::pfgen::helpfulness::{helpfulness, HelpfulnessName, WeightedRule};
use crate::pfgen::record_json;
use crate::pfgen::reference::{ReferenceError, ReferenceTables, Scratch, Source, GROUP};

/// Batches smaller than this are scored on the calling thread.
const PARALLEL_MIN_ANSWERS: usize = 512;
const CHUNK_ANSWERS: usize = 128;

/// Everything needed to score answers to one question.
pub struct QuestionScorer {
    pub references: ReferenceTables,
    pub rules: Vec<WeightedRule>,
    /// Number of External leaves in `rules` (columns of the caller's match-end matrix).
    pub num_external: usize,
}

/// Scores of a batch, row-major: `fluency[i * K + k]` for answer i and source k. Values are
/// rounded as in the per-answer record (spec §6). Result names borrow the scorer's rules.
pub struct ScoreBatch<'a> {
    pub num_sources: usize,
    pub fluency: Vec<f64>,
    pub truthfulness: Vec<f64>,
    pub helpfulness: Vec<f64>,
    pub average: Vec<f64>,
    /// Per answer, `helpfulness_results` as (name, factor), when asked for.
    pub helpfulness_results: Option<Vec<HelpfulnessResults<'a>>>,
}

/// One answer's `helpfulness_results`: (name, factor) of each entry.
pub type HelpfulnessResults<'a> = Vec<(HelpfulnessName<'a>, f64)>;

impl QuestionScorer {
    pub fn new(
        sources: &[Source],
        rules: Vec<WeightedRule>,
        num_external: usize,
    ) -> Result<Self, ReferenceError> {
        Ok(QuestionScorer {
            references: ReferenceTables::build(sources)?,
            rules,
            num_external,
        })
    }

    pub fn num_sources(&self) -> usize {
        self.references.num_sources()
    }

    /// Scores `answers` (each as its characters); `external[i * num_external + j]` is the value
    /// of External leaf j for answer i; `sum` the `sum()` of the per-answer average. Large
    /// batches use every thread of the rayon pool.
    pub fn score_batch<'s, S: AsRef<[char]> + Sync>(
        &'s self,
        answers: &[S],
        external: &[u32],
        with_results: bool,
        sum: SumMode,
    ) -> ScoreBatch<'s> {
        let n = answers.len();
        let k = self.num_sources();
        let mut fluency = vec![0.0; n * k];
        let mut truthfulness = vec![0.0; n * k];
        let mut helpfulness = vec![0.0; n];
        let mut average = vec![0.0; n];
        // Empty vectors: no allocation unless results are asked for.
        let mut results: Vec<HelpfulnessResults> = (0..n).map(|_| Vec::new()).collect();
        let score_chunk = |scratch: &mut Scratch, first: usize, out: ChunkOut<'_, 's>| {
            let chunk = out.helpfulness.len();
            for group_first in (0..chunk).step_by(GROUP) {
                let group = group_first..(group_first + GROUP).min(chunk);
                self.references.score_answers(
                    &answers[first + group.start..first + group.end],
                    scratch,
                    &mut out.fluency[group.start * k..group.end * k],
                    &mut out.truthfulness[group.start * k..group.end * k],
                );
                for offset in group {
                    let i = first + offset;
                    let answer = answers[i].as_ref();
                    let fluency = &mut out.fluency[offset * k..(offset + 1) * k];
                    let truthfulness = &mut out.truthfulness[offset * k..(offset + 1) * k];
                    let external_row = external
                        .get(i * self.num_external..(i + 1) * self.num_external)
                        .unwrap_or(&[]);
                    let (help, average, results) = self.finish_record(
                        answer,
                        external_row,
                        fluency,
                        truthfulness,
                        with_results,
                        sum,
                    );
                    out.helpfulness[offset] = help;
                    out.average[offset] = average;
                    out.results[offset] = results;
                }
            }
        };
        if n < PARALLEL_MIN_ANSWERS {
            let out = ChunkOut {
                fluency: &mut fluency,
                truthfulness: &mut truthfulness,
                helpfulness: &mut helpfulness,
                average: &mut average,
                results: &mut results,
            };
            score_chunk(&mut Scratch::default(), 0, out);
        } else {
            fluency
                .par_chunks_mut(CHUNK_ANSWERS * k)
                .zip(truthfulness.par_chunks_mut(CHUNK_ANSWERS * k))
                .zip(helpfulness.par_chunks_mut(CHUNK_ANSWERS))
                .zip(average.par_chunks_mut(CHUNK_ANSWERS))
                .zip(results.par_chunks_mut(CHUNK_ANSWERS))
                .enumerate()
                .for_each_init(
                    Scratch::default,
                    |scratch, (index, ((((fluency, truthfulness), helpfulness), average), results))| {
                        let out = ChunkOut {
                            fluency,
                            truthfulness,
                            helpfulness,
                            average,
                            results,
                        };
                        score_chunk(scratch, index * CHUNK_ANSWERS, out)
                    },
                );
        }
        ScoreBatch {
            num_sources: k,
            fluency,
            truthfulness,
            helpfulness,
            average,
            helpfulness_results: with_results.then_some(results),
        }
    }

    /// Completes one answer's record: rounds its fluency and truthfulness in place (spec §6),
    /// returns (rounded helpfulness, average, helpfulness_results if asked for).
    fn finish_record(
        &self,
        answer: &[char],
        external: &[u32],
        fluency: &mut [f64],
        truthfulness: &mut [f64],
        with_results: bool,
        sum: SumMode,
    ) -> (f64, f64, HelpfulnessResults<'_>) {
        let k = fluency.len() as f64;
        for value in fluency.iter_mut().chain(truthfulness.iter_mut()) {
            *value = py_round(*value / k, 6);
        }
        // The official `sum(fluency.values())` and `sum(truthfulness.values())`.
        let fluency_sum = py_sum(fluency.iter().copied(), sum);
        let truthfulness_sum = py_sum(truthfulness.iter().copied(), sum);
        let help = helpfulness(&self.rules, answer, external, with_results);
        let average = py_round((fluency_sum + truthfulness_sum + help.value) / 3.0, 5);
        (py_round(help.value, 5), average, help.results)
    }
}

impl ScoreBatch<'_> {
    /// Every answer's record as JSON text (see `record_json`), large batches on every thread
    /// of the rayon pool.
    pub fn records_json(&self, sources: &[String]) -> Vec<String> {
        let n = self.helpfulness.len();
        if n < PARALLEL_MIN_ANSWERS {
            (0..n).map(|i| self.record_json(i, sources)).collect()
        } else {
            (0..n)
                .into_par_iter()
                .map(|i| self.record_json(i, sources))
                .collect()
        }
    }

    /// The record of answer `i` as JSON text (spec §6 key order); `sources` are the keys.
    pub fn record_json(&self, i: usize, sources: &[String]) -> String {
        let k = self.num_sources;
        let no_results = Vec::new();
        let results = self
            .helpfulness_results
            .as_ref()
            .map_or(&no_results, |all| &all[i]);
        let mut out = String::with_capacity(256);
        record_json::Record {
            sources,
            fluency: &self.fluency[i * k..(i + 1) * k],
            truthfulness: &self.truthfulness[i * k..(i + 1) * k],
            helpfulness: self.helpfulness[i],
            helpfulness_results: results,
            average: self.average[i],
        }
        .write_json(&mut out);
        out
    }
}

/// The slices of a batch's outputs that one chunk of answers writes (result names borrow
/// the rules, for `'r`).
struct ChunkOut<'a, 'r> {
    fluency: &'a mut [f64],
    truthfulness: &'a mut [f64],
    helpfulness: &'a mut [f64],
    average: &'a mut [f64],
    results: &'a mut [HelpfulnessResults<'r>],
}
