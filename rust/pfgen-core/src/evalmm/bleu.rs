//! Sentence BLEU as sacrebleu's `sentence_bleu` computes it with one reference, exponential
//! smoothing and no effective order, over token ids; the value returned is sacrebleu's score
//! divided by 100 (as jdocqa reports it).

use std::cell::RefCell;

use super::table::Table;

const MAX_ORDER: usize = 4;
/// sacrebleu's log of a zero precision.
const LOG_OF_ZERO: f64 = -9999999999.0;

/// Matched (clipped) and total n-gram counts of a hypothesis, orders 1 to 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NgramCounts {
    pub correct: [u64; MAX_ORDER],
    pub total: [u64; MAX_ORDER],
}

thread_local! {
    static NGRAMS: RefCell<Table<u128>> = RefCell::new(Table::new());
}

/// An n-gram as one key (four 32-bit ids fit in 128 bits; orders are counted apart).
fn ngram_key(gram: &[u32]) -> u128 {
    gram.iter()
        .fold(0u128, |key, &id| (key << 32) | u128::from(id))
}

/// Clipped matches Σ_g min(count in hypothesis, count in reference) and the hypothesis's
/// n-gram count, orders 1 to 4: the reference's n-grams are counted in a table, then each
/// hypothesis n-gram takes one of its gram's remaining counts.
pub fn clipped_ngram_counts(hypothesis: &[u32], reference: &[u32]) -> NgramCounts {
    let mut counts = NgramCounts::default();
    NGRAMS.with(|table| {
        let table = &mut *table.borrow_mut();
        for n in 1..=MAX_ORDER {
            counts.total[n - 1] = hypothesis.len().saturating_sub(n - 1) as u64;
            if reference.len() < n || hypothesis.len() < n {
                continue;
            }
            table.reset(reference.len() + 1 - n);
            for gram in reference.windows(n) {
                *table.entry(ngram_key(gram), |_| 0) += 1;
            }
            for gram in hypothesis.windows(n) {
                if let Some(left) = table.get_mut(ngram_key(gram)) {
                    if *left > 0 {
                        *left -= 1;
                        counts.correct[n - 1] += 1;
                    }
                }
            }
        }
    });
    counts
}

/// BLEU / 100 of `hypothesis` against one `reference`, operation for operation as sacrebleu
/// (so the floating-point result is the same): brevity penalty, 0 when nothing matches,
/// precisions in percent with exponential smoothing of zero counts, the loop stopping at the
/// first order the hypothesis has no n-gram of (leaving that precision 0, whose log is
/// -9999999999), and the mean of the four logs.
pub fn sentence_bleu(hypothesis: &[u32], reference: &[u32]) -> f64 {
    let counts = clipped_ngram_counts(hypothesis, reference);
    let sys_len = hypothesis.len() as f64;
    let ref_len = reference.len() as f64;
    let mut brevity = 1.0;
    if sys_len < ref_len {
        brevity = if sys_len > 0.0 {
            (1.0 - ref_len / sys_len).exp()
        } else {
            0.0
        };
    }
    if counts.correct.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let mut precisions = [0.0f64; MAX_ORDER];
    let mut smooth = 1.0f64;
    let orders = counts.correct.iter().zip(&counts.total);
    for (precision, (&correct, &total)) in precisions.iter_mut().zip(orders) {
        if total == 0 {
            break;
        }
        *precision = if correct == 0 {
            smooth *= 2.0;
            100.0 / (smooth * total as f64)
        } else {
            100.0 * correct as f64 / total as f64
        };
    }
    let log_sum = precisions
        .iter()
        .map(|&p| if p == 0.0 { LOG_OF_ZERO } else { p.ln() })
        .fold(0.0, |sum, log| sum + log);
    brevity * (log_sum / MAX_ORDER as f64).exp() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clipped counts by sorting both n-gram lists and merging them.
    fn counts_by_sorting(hypothesis: &[u32], reference: &[u32]) -> NgramCounts {
        let mut counts = NgramCounts::default();
        for n in 1..=MAX_ORDER {
            let mut hyp: Vec<u128> = hypothesis.windows(n).map(ngram_key).collect();
            let mut reference: Vec<u128> = reference.windows(n).map(ngram_key).collect();
            hyp.sort_unstable();
            reference.sort_unstable();
            counts.total[n - 1] = hyp.len() as u64;
            let (mut i, mut j) = (0, 0);
            while i < hyp.len() && j < reference.len() {
                match hyp[i].cmp(&reference[j]) {
                    std::cmp::Ordering::Less => i += 1,
                    std::cmp::Ordering::Greater => j += 1,
                    std::cmp::Ordering::Equal => {
                        counts.correct[n - 1] += 1;
                        i += 1;
                        j += 1;
                    }
                }
            }
        }
        counts
    }

    #[test]
    fn counts_match_sorting() {
        let mut state = 99u64;
        for round in 0..400usize {
            let mut draw = |n: usize| -> Vec<u32> {
                (0..n)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        ((state >> 33) % 4) as u32
                    })
                    .collect()
            };
            let a = draw(round % 23);
            let b = draw(round * 5 % 19);
            assert_eq!(clipped_ngram_counts(&a, &b), counts_by_sorting(&a, &b));
        }
    }

    #[test]
    fn clipped_counts() {
        let counts = clipped_ngram_counts(&[1, 1, 1, 2], &[1, 1, 2]);
        assert_eq!(counts.total, [4, 3, 2, 1]);
        assert_eq!(counts.correct, [3, 2, 1, 0]);
    }

    #[test]
    fn short_hypotheses_score_zero() {
        assert_eq!(sentence_bleu(&[1, 2, 3], &[1, 2, 3]), 0.0);
        assert_eq!(sentence_bleu(&[], &[1]), 0.0);
        assert_eq!(sentence_bleu(&[5, 6, 7, 8], &[1, 2, 3, 4]), 0.0);
    }

    #[test]
    fn identical_long_text_slightly_above_one() {
        let tokens = [1, 2, 3, 4, 5];
        assert_eq!(sentence_bleu(&tokens, &tokens), 1.0000000000000004);
    }

    #[test]
    fn large_ids_do_not_collide() {
        let a = [u32::MAX, 0, 0, 0];
        let b = [0, u32::MAX, 0, 0];
        let counts = clipped_ngram_counts(&a, &b);
        assert_eq!(counts.correct, [4, 2, 1, 0]);
    }
}
