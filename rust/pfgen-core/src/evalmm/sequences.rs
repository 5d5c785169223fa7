//! Texts as token-id sequences, and the comparisons on them: longest common subsequence
//! (ROUGE-L), the overlap of two bags (character F1) and the edit distance.

use std::cell::RefCell;
use std::fmt;

use super::table::Table;

/// A problem with the arrays describing a batch of texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextsError(pub String);

impl fmt::Display for TextsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TextsError {}

/// Texts stored back to back: text i is `ids[offsets[i]..offsets[i + 1]]`.
pub struct Texts<'a> {
    ids: &'a [u32],
    offsets: &'a [u64],
}

impl<'a> Texts<'a> {
    /// Err unless the offsets start at 0, never decrease and end at `ids.len()`.
    pub fn new(ids: &'a [u32], offsets: &'a [u64]) -> Result<Self, TextsError> {
        let well_formed = offsets.first() == Some(&0)
            && offsets.windows(2).all(|pair| pair[0] <= pair[1])
            && offsets.last().copied() == Some(ids.len() as u64);
        if !well_formed {
            return Err(TextsError(
                "offsets must start at 0, not decrease and end at the number of ids".into(),
            ));
        }
        Ok(Texts { ids, offsets })
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Err unless `index` names a text.
    pub fn check(&self, index: u64) -> Result<(), TextsError> {
        if index < self.len() as u64 {
            Ok(())
        } else {
            Err(TextsError(format!(
                "text index {index} out of range ({} texts)",
                self.len()
            )))
        }
    }

    /// Text `index`, which `check` accepted.
    pub fn text(&self, index: u64) -> &'a [u32] {
        let i = index as usize;
        &self.ids[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// Reused buffers of the bit-parallel LCS, one set per thread.
#[derive(Default)]
struct LcsScratch {
    rows: Table<u32>,
    masks: Vec<u64>,
    columns: Vec<u64>,
}

thread_local! {
    static LCS_SCRATCH: RefCell<LcsScratch> = RefCell::new(LcsScratch::default());
}

/// The length of a longest common subsequence, computed bit-parallel (Hyyrö's column
/// recurrence V' = (V + (V & M)) | (V & !M) over the shorter sequence's positions, 64 per
/// word): the LCS is the number of zero bits left in V.
pub fn lcs_length(a: &[u32], b: &[u32]) -> usize {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return 0;
    }
    LCS_SCRATCH.with(|scratch| {
        let scratch = &mut *scratch.borrow_mut();
        let words = short.len().div_ceil(64);
        scratch.rows.reset(short.len());
        scratch.masks.clear();
        for (position, &token) in short.iter().enumerate() {
            let next_row = scratch.masks.len() / words;
            let row = *scratch.rows.entry(token, |_| next_row as u32) as usize;
            if row == next_row {
                scratch.masks.resize((row + 1) * words, 0);
            }
            scratch.masks[row * words + position / 64] |= 1 << (position % 64);
        }
        let v = &mut scratch.columns;
        v.clear();
        v.resize(words, !0);
        for &token in long {
            let Some(&mut row) = scratch.rows.get_mut(token) else {
                continue;
            };
            let matches = &scratch.masks[row as usize * words..(row as usize + 1) * words];
            let mut carry = false;
            for (word, &m) in v.iter_mut().zip(matches) {
                let old = *word;
                let (sum, overflow_a) = old.overflowing_add(old & m);
                let (sum, overflow_b) = sum.overflowing_add(u64::from(carry));
                carry = overflow_a || overflow_b;
                *word = sum | (old & !m);
            }
        }
        let full_words = short.len() / 64;
        let mut zeros: usize = v[..full_words]
            .iter()
            .map(|w| w.count_zeros() as usize)
            .sum();
        let rest = short.len() % 64;
        if rest > 0 {
            zeros += (!v[full_words] & ((1u64 << rest) - 1)).count_ones() as usize;
        }
        zeros
    })
}

/// ROUGE-L F-measure times 100 of a prediction against a reference, as rouge-score computes
/// it: P = LCS/|prediction|, R = LCS/|reference|, F = 2PR/(P+R); 0 if either is empty or
/// nothing is shared.
pub fn rouge_l_f(reference: &[u32], prediction: &[u32]) -> f64 {
    if reference.is_empty() || prediction.is_empty() {
        return 0.0;
    }
    let lcs = lcs_length(reference, prediction) as f64;
    let precision = lcs / prediction.len() as f64;
    let recall = lcs / reference.len() as f64;
    let f = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    f * 100.0
}

/// Σ over distinct ids of min(count in a, count in b).
pub fn bag_overlap(a: &[u32], b: &[u32]) -> u64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut shared) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

/// The edit distance (insertions, deletions, substitutions of one id each).
pub fn levenshtein(a: &[u32], b: &[u32]) -> u64 {
    let (outer, inner) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut row: Vec<u64> = (0..=inner.len() as u64).collect();
    for (i, &x) in outer.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i as u64 + 1;
        for (j, &y) in inner.iter().enumerate() {
            let above = row[j + 1];
            let substitution = diagonal + u64::from(x != y);
            row[j + 1] = substitution.min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[inner.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcs_by_table(a: &[u32], b: &[u32]) -> usize {
        let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                table[i][j] = if a[i - 1] == b[j - 1] {
                    table[i - 1][j - 1] + 1
                } else {
                    table[i - 1][j].max(table[i][j - 1])
                };
            }
        }
        table[a.len()][b.len()]
    }

    #[test]
    fn lcs_matches_the_full_table() {
        let mut state = 12345u64;
        for round in 0..300usize {
            let mut draw = |n: usize| -> Vec<u32> {
                (0..n)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        ((state >> 33) % 5) as u32
                    })
                    .collect()
            };
            let a = draw(round % 17 + if round % 3 == 0 { 120 } else { 0 });
            let b = draw(round * 7 % 13 + if round % 5 == 0 { 70 } else { 0 });
            assert_eq!(lcs_length(&a, &b), lcs_by_table(&a, &b));
            assert_eq!(lcs_length(&b, &a), lcs_by_table(&a, &b));
        }
    }

    #[test]
    fn rouge_l_cases() {
        assert_eq!(rouge_l_f(&[1, 2, 3], &[1, 2, 3]), 100.0);
        assert_eq!(rouge_l_f(&[], &[]), 0.0);
        assert_eq!(rouge_l_f(&[1], &[2]), 0.0);
        // LCS 2, |ref| 4, |pred| 2: P 1, R 0.5.
        assert!((rouge_l_f(&[1, 2, 3, 4], &[1, 3]) - 200.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn bags_and_edits() {
        assert_eq!(bag_overlap(&[1, 1, 2, 3], &[1, 2, 2]), 2);
        assert_eq!(bag_overlap(&[], &[1]), 0);
        assert_eq!(levenshtein(&[1, 2, 3], &[1, 3]), 1);
        assert_eq!(levenshtein(&[], &[4, 5]), 2);
        assert_eq!(levenshtein(&[1, 2, 3, 4], &[2, 1, 3, 5]), 3);
    }

    #[test]
    fn malformed_offsets_refused() {
        assert!(Texts::new(&[1, 2], &[0, 1]).is_err());
        assert!(Texts::new(&[1, 2], &[0, 2, 1, 2]).is_err());
        assert!(Texts::new(&[], &[]).is_err());
        let texts = Texts::new(&[1, 2], &[0, 2]).unwrap();
        assert!(texts.check(1).is_err());
        assert_eq!(texts.text(0), &[1, 2]);
    }
}
