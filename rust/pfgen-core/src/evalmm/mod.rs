//! The per-pair work of the llm-jp-eval-mm scorers, over texts already split into tokens (one
//! `u32` id per token or character, ids assigned by the caller). Each function compares two
//! id sequences; `score_pairs` applies one of them to a batch of pairs on every thread of the
//! rayon pool.

pub mod bleu;
pub mod sequences;
mod table;
pub mod tokens;

pub use bleu::{clipped_ngram_counts, sentence_bleu, NgramCounts};
pub use sequences::{bag_overlap, lcs_length, levenshtein, rouge_l_f, Texts, TextsError};
pub use tokens::intern_tokens;

use rayon::prelude::*;

/// Pairs per rayon task: small pairs are cheap, so tasks take several.
const PAIRS_PER_TASK: usize = 64;

/// `score(texts[left[i]], texts[right[i]])` for every i, computed in parallel, in order.
/// Err if an index is out of range.
pub fn score_pairs<T, F>(
    texts: &Texts<'_>,
    left: &[u64],
    right: &[u64],
    score: F,
) -> Result<Vec<T>, TextsError>
where
    T: Send + Default + Clone,
    F: Fn(&[u32], &[u32]) -> T + Sync,
{
    if left.len() != right.len() {
        return Err(TextsError(format!(
            "{} left indexes but {} right indexes",
            left.len(),
            right.len()
        )));
    }
    for &index in left.iter().chain(right) {
        texts.check(index)?;
    }
    let mut out = vec![T::default(); left.len()];
    out.par_chunks_mut(PAIRS_PER_TASK)
        .enumerate()
        .for_each(|(chunk, slots)| {
            let start = chunk * PAIRS_PER_TASK;
            for (offset, slot) in slots.iter_mut().enumerate() {
                let i = start + offset;
                *slot = score(texts.text(left[i]), texts.text(right[i]));
            }
        });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_in_order_and_bad_indexes_refused() {
        let ids = [1, 2, 3, 1, 3];
        let offsets = [0, 3, 5, 5];
        let texts = Texts::new(&ids, &offsets).unwrap();
        let lcs = score_pairs(&texts, &[0, 1, 2], &[1, 0, 0], lcs_length).unwrap();
        assert_eq!(lcs, vec![2, 2, 0]);
        assert!(score_pairs(&texts, &[0], &[3], lcs_length).is_err());
        assert!(score_pairs(&texts, &[0, 1], &[1], lcs_length).is_err());
    }

    #[test]
    fn many_pairs_match_one_at_a_time() {
        let ids: Vec<u32> = (0..500).map(|i| (i * 7 % 13) as u32).collect();
        let offsets: Vec<u64> = (0..=50).map(|i| i * 10).collect();
        let texts = Texts::new(&ids, &offsets).unwrap();
        let left: Vec<u64> = (0..1000).map(|i| i % 50).collect();
        let right: Vec<u64> = (0..1000).map(|i| (i * 3) % 50).collect();
        let all = score_pairs(&texts, &left, &right, rouge_l_f).unwrap();
        for i in 0..1000 {
            let one = rouge_l_f(texts.text(left[i]), texts.text(right[i]));
            assert_eq!(all[i].to_bits(), one.to_bits());
        }
    }
}
