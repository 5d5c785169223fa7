//! Sentence BLEU as sacrebleu's `sentence_bleu` computes it with one reference, exponential
//! smoothing and no effective order, over token ids; the value returned is sacrebleu's score
//! divided by 100 (as jdocqa reports it).

const MAX_ORDER: usize = 4;
/// sacrebleu's log of a zero precision.
const LOG_OF_ZERO: f64 = -9999999999.0;

/// Matched (clipped) and total n-gram counts of a hypothesis, orders 1 to 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NgramCounts {
    pub correct: [u64; MAX_ORDER],
    pub total: [u64; MAX_ORDER],
}

/// The n-grams of one order as packed keys (four 32-bit ids fit in 128 bits), sorted.
fn sorted_ngrams(tokens: &[u32], n: usize) -> Vec<u128> {
    let mut keys: Vec<u128> = tokens
        .windows(n)
        .map(|gram| gram.iter().fold(0u128, |key, &id| (key << 32) | u128::from(id)))
        .collect();
    keys.sort_unstable();
    keys
}

/// Σ over distinct keys of min(count in a, count in b), both sorted.
fn clipped_matches(a: &[u128], b: &[u128]) -> u64 {
    let (mut i, mut j, mut matched) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                matched += 1;
                i += 1;
                j += 1;
            }
        }
    }
    matched
}

pub fn clipped_ngram_counts(hypothesis: &[u32], reference: &[u32]) -> NgramCounts {
    let mut counts = NgramCounts::default();
    for n in 1..=MAX_ORDER {
        let hyp = sorted_ngrams(hypothesis, n);
        let reference = sorted_ngrams(reference, n);
        counts.total[n - 1] = hyp.len() as u64;
        counts.correct[n - 1] = clipped_matches(&hyp, &reference);
    }
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
    for n in 0..MAX_ORDER {
        if counts.total[n] == 0 {
            break;
        }
        precisions[n] = if counts.correct[n] == 0 {
            smooth *= 2.0;
            100.0 / (smooth * counts.total[n] as f64)
        } else {
            100.0 * counts.correct[n] as f64 / counts.total[n] as f64
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
