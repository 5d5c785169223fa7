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
/// rounded as in the per-answer record (scoring-spec.md §6). Result names borrow the scorer's
/// rules.
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

    /// Completes one answer's record: rounds its fluency and truthfulness in place
    /// (scoring-spec.md §6), returns (rounded helpfulness, average, helpfulness_results if
    /// asked for).
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
        let help = helpfulness(&self.rules, answer, external, with_results);
        let rounded_help = py_round(help.value, 5);
        let average = record_average(fluency, truthfulness, rounded_help, sum);
        (rounded_help, average, help.results)
    }
}

/// The record's `average` from its rounded values: the official
/// `round((sum(fluency.values()) + sum(truthfulness.values()) + helpfulness) / 3, 5)`.
/// The helpfulness is the record's, rounded to 5 digits (scoring-spec.md §6 says the
/// unrounded one, which gives a last digit off by one for some over-length answers).
pub fn record_average(
    fluency: &[f64],
    truthfulness: &[f64],
    helpfulness: f64,
    sum: SumMode,
) -> f64 {
    let fluency_sum = py_sum(fluency.iter().copied(), sum);
    let truthfulness_sum = py_sum(truthfulness.iter().copied(), sum);
    py_round((fluency_sum + truthfulness_sum + helpfulness) / 3.0, 5)
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

    /// The record of answer `i` as JSON text (scoring-spec.md §6 key order); `sources` are the
    /// keys.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounded fluency and truthfulness (one to three sources), the excess length, and the
    /// average: made-up values whose exact decimal average is a tie at the fifth digit, so
    /// that the helpfulness's last bits (`1 - excess / 50` unrounded) decide it.
    const OVER_LENGTH_TIES: [(&[f64], &[f64], usize, f64); 6] = [
        (&[0.247252], &[0.127883], 41, 0.18504),
        (&[0.157593], &[0.170972], 48, 0.12285),
        (&[0.289486, 0.333658], &[0.157469, 0.299422], 33, 0.47335),
        (&[0.331928, 0.188302], &[0.342423, 0.236322], 41, 0.42632),
        (
            &[0.322284, 0.23964, 0.321223],
            &[0.255065, 0.127284, 0.273789],
            17,
            0.7331,
        ),
        (
            &[0.063723, 0.060009, 0.108778],
            &[0.278574, 0.212496, 0.303565],
            9,
            0.61571,
        ),
    ];

    #[test]
    fn over_length_averages_take_the_rounded_helpfulness() {
        for (fluency, truthfulness, excess, average) in OVER_LENGTH_TIES {
            let unrounded = 1.0 - excess as f64 / 50.0;
            for sum in [SumMode::Compensated, SumMode::Legacy] {
                let rounded = py_round(unrounded, 5);
                assert_eq!(record_average(fluency, truthfulness, rounded, sum), average);
                // The unrounded helpfulness lands on the other side of the tie.
                assert_ne!(
                    record_average(fluency, truthfulness, unrounded, sum),
                    average
                );
            }
        }
    }

    #[test]
    fn records_of_over_length_answers_round_the_helpfulness_before_averaging() {
        // One source, one keyword ending at 100 + excess: helpfulness 1 - excess / 50.
        let answers = ["あいうえお".to_string(), "かきくけこ".to_string()];
        let sources = [Source {
            key: "R",
            answers: &answers,
        }];
        let rule = crate::pfgen::helpfulness::Rule::Leaf {
            pattern: crate::pfgen::helpfulness::Pattern::Literal(vec!['鍵']),
            name: "鍵".to_string(),
        };
        let rules = vec![WeightedRule { rule, factor: 0.0 }];
        let scorer = QuestionScorer::new(&sources, rules, 0).expect("tables");
        for excess in 1..50 {
            let answer: Vec<char> = format!("{}鍵{}", "ん".repeat(99 + excess), "ん".repeat(60))
                .chars()
                .collect();
            for sum in [SumMode::Compensated, SumMode::Legacy] {
                let batch = scorer.score_batch(&[answer.as_slice()], &[], true, sum);
                let unrounded = 1.0 - excess as f64 / 50.0;
                assert_eq!(batch.helpfulness[0], py_round(unrounded, 5));
                let expected = record_average(
                    &batch.fluency,
                    &batch.truthfulness,
                    batch.helpfulness[0],
                    sum,
                );
                assert_eq!(batch.average[0], expected);
                let results = batch.helpfulness_results.as_ref().expect("results");
                assert_eq!(results[0].len(), 1);
                assert_eq!(results[0][0].0.to_string(), format!("{excess}字超過"));
                assert_eq!(results[0][0].1.to_bits(), unrounded.to_bits());
            }
        }
    }
}
