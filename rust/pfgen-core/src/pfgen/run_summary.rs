//! The numbers of a run's result.json (scoring-spec.md §7) from its answers' scores, with the
//! official tool's float operations in its order: a question's means over its answers sorted
//! by average (best first, ties in file order), the trials' means across questions, and means
//! and population standard deviations added with its `sum()`.

use crate::common::py_float::py_round;
use crate::common::py_sum::{py_sum, SumMode};

/// Ranks of the answers shown as samples, in the answers sorted best first.
const SAMPLE_RANKS: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// The scores of one question's answers in file order (row-major per source, as
/// `ScoreBatch`), and their lengths in characters.
pub struct ScoreColumns<'a> {
    pub num_sources: usize,
    pub fluency: &'a [f64],
    pub truthfulness: &'a [f64],
    pub helpfulness: &'a [f64],
    pub average: &'a [f64],
    pub lengths: &'a [f64],
}

/// A question's part of result.json: score and length with their deviations (rounded to 4
/// and 1 decimals), the means of each measure (per source for fluency and truthfulness),
/// rounded to 5, and the file-order indices of the sampled answers, in sample order.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionStats {
    pub score: f64,
    pub score_std: f64,
    pub length: f64,
    pub length_std: f64,
    pub fluency: Vec<f64>,
    pub truthfulness: Vec<f64>,
    pub helpfulness: f64,
    pub average: f64,
    pub samples: Vec<usize>,
}

/// A run's top-level numbers: the trials counted (the fewest answers of a question), the
/// mean and deviation of the trials' scores (4 decimals) and of every answer's length (1).
#[derive(Clone, Debug, PartialEq)]
pub struct RunStats {
    pub num_trials: usize,
    pub score: f64,
    pub score_std: f64,
    pub length: f64,
    pub length_std: f64,
}

/// `sum(values) / len(values)`.
pub fn mean(values: &[f64], sum: SumMode) -> f64 {
    py_sum(values.iter().copied(), sum) / values.len() as f64
}

/// (mean, population standard deviation), each rounded to `digits`; the variance is the mean
/// of the squared deviations, added with the same `sum()`.
pub fn mean_std(values: &[f64], digits: u32, sum: SumMode) -> (f64, f64) {
    let average = mean(values, sum);
    let squares = values.iter().map(|&value| {
        let deviation = value - average;
        deviation * deviation
    });
    let variance = py_sum(squares, sum) / values.len() as f64;
    (py_round(average, digits), py_round(variance.sqrt(), digits))
}

/// File-order indices of the answers sorted by average, best first, ties in file order (the
/// order of a stable sort of the negated averages; NaN last, as numpy sorts).
pub fn best_first(average: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..average.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (-average[a], -average[b]);
        a.partial_cmp(&b)
            .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
    });
    order
}

/// The sampled answers: those at ranks 0, .25, .5, .75 and 1 of `order` (each rank's
/// position rounded half to even, as Python's `round`), without repeats.
pub fn sample_indices(order: &[usize]) -> Vec<usize> {
    let mut picked: Vec<usize> = Vec::with_capacity(SAMPLE_RANKS.len());
    let Some(last) = order.len().checked_sub(1) else {
        return picked;
    };
    for rank in SAMPLE_RANKS {
        let index = order[(rank * last as f64).round_ties_even() as usize];
        if !picked.contains(&index) {
            picked.push(index);
        }
    }
    picked
}

/// A question's numbers (at least one answer).
pub fn question_stats(scores: &ScoreColumns<'_>, sum: SumMode) -> QuestionStats {
    let order = best_first(scores.average);
    let sorted = |values: &[f64]| -> Vec<f64> { order.iter().map(|&i| values[i]).collect() };
    let averages = sorted(scores.average);
    let (score, score_std) = mean_std(&averages, 4, sum);
    let (length, length_std) = mean_std(&sorted(scores.lengths), 1, sum);
    let k = scores.num_sources;
    let column_means = |values: &[f64]| -> Vec<f64> {
        (0..k)
            .map(|source| {
                let column: Vec<f64> = order.iter().map(|&i| values[i * k + source]).collect();
                py_round(mean(&column, sum), 5)
            })
            .collect()
    };
    QuestionStats {
        score,
        score_std,
        length,
        length_std,
        fluency: column_means(scores.fluency),
        truthfulness: column_means(scores.truthfulness),
        helpfulness: py_round(mean(&sorted(scores.helpfulness), sum), 5),
        average: py_round(mean(&averages, sum), 5),
        samples: sample_indices(&order),
    }
}

/// A run's top-level numbers from its questions' averages and lengths (file order), the
/// questions in result.json's order (at least one, each with at least one answer). Trial t's
/// score is the mean of the t-th answer's average of every question.
pub fn run_stats(averages: &[&[f64]], lengths: &[&[f64]], sum: SumMode) -> RunStats {
    let num_trials = averages.iter().map(|a| a.len()).min().unwrap_or(0);
    let trial_scores: Vec<f64> = (0..num_trials)
        .map(|trial| {
            let row: Vec<f64> = averages.iter().map(|a| a[trial]).collect();
            mean(&row, sum)
        })
        .collect();
    let (score, score_std) = mean_std(&trial_scores, 4, sum);
    let all_lengths: Vec<f64> = lengths.iter().flat_map(|l| l.iter().copied()).collect();
    let (length, length_std) = mean_std(&all_lengths, 1, sum);
    RunStats {
        num_trials,
        score,
        score_std,
        length,
        length_std,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_stable_on_ties_and_skip_repeats() {
        let samples = |average: &[f64]| sample_indices(&best_first(average));
        assert_eq!(samples(&[0.3]), vec![0]);
        assert_eq!(samples(&[0.5, 0.9, 0.5]), vec![1, 0, 2]);
        // round(0.5) == 0 and round(1.5) == 2 (half to even).
        assert_eq!(samples(&[0.1, 0.2]), vec![1, 0]);
        let average = [0.1, 0.7, 0.4, 0.9, 0.2, 0.6, 0.3, 0.8, 0.5];
        assert_eq!(samples(&average), vec![3, 1, 8, 6, 0]);
        assert_eq!(best_first(&[0.0, f64::NAN, 1.0]), vec![2, 0, 1]);
    }

    #[test]
    fn question_and_run_numbers() {
        let scores = ScoreColumns {
            num_sources: 2,
            fluency: &[0.2, 0.4, 0.6, 0.8, 1.0, 0.0],
            truthfulness: &[0.1, 0.2, 0.3, 0.4, 0.5, 0.0],
            helpfulness: &[0.5, 0.5, 0.5],
            average: &[0.3, 0.7, 0.5],
            lengths: &[1.0, 2.0, 3.0],
        };
        let stats = question_stats(&scores, SumMode::Compensated);
        assert_eq!(stats.score, 0.5);
        assert_eq!(stats.score_std, py_round((0.08f64 / 3.0).sqrt(), 4));
        assert_eq!((stats.length, stats.length_std), (2.0, 0.8));
        assert_eq!(stats.fluency, vec![0.6, 0.4]);
        assert_eq!(stats.truthfulness, vec![0.3, 0.2]);
        assert_eq!((stats.helpfulness, stats.average), (0.5, 0.5));
        assert_eq!(stats.samples, vec![1, 2, 0]);
        let run = run_stats(
            &[&[0.3, 0.7, 0.5], &[0.1, 0.3]],
            &[&[1.0, 2.0, 3.0], &[4.0, 5.0]],
            SumMode::Legacy,
        );
        assert_eq!(run.num_trials, 2);
        assert_eq!((run.score, run.score_std), (0.35, 0.15));
        assert_eq!((run.length, run.length_std), (3.0, 1.4));
    }
}
