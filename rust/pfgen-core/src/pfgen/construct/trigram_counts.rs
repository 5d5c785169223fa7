//! How many of a question's reference answers hold each 3-gram of some texts (all sources
//! together): what the per-run report pages mark in sample text (scoring-spec.md §8).
//!
//! Only the 3-grams of the given texts are counted: they go into a small hash map, and one
//! pass over the reference answers counts the answers holding each of them. A report's samples
//! hold a few tens of thousands of distinct 3-grams per question, so the map stays in cache.

/// The key of a 3-gram: its code points, 21 bits each (exact).
#[inline]
fn key(gram: &[char]) -> u64 {
    gram.iter().fold(0, |key, &c| (key << 21) | c as u64)
}

const EMPTY: u64 = u64::MAX;

/// Per 3-gram key: the number of answers holding it, and the last answer counted.
struct Counts {
    keys: Vec<u64>,
    counts: Vec<(u32, u32)>,
    mask: usize,
}

impl Counts {
    fn with_keys(grams: impl Iterator<Item = u64>, expected: usize) -> Self {
        let size = (expected * 2).next_power_of_two().max(16);
        let mut counts = Counts {
            keys: vec![EMPTY; size],
            counts: vec![(0, u32::MAX); size],
            mask: size - 1,
        };
        for gram in grams {
            let slot = counts.slot(gram);
            counts.keys[slot] = gram;
        }
        counts
    }

    /// The slot of `gram`, or the empty slot where it would go.
    #[inline]
    fn slot(&self, gram: u64) -> usize {
        let mut slot = (gram.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as usize & self.mask;
        while self.keys[slot] != gram && self.keys[slot] != EMPTY {
            slot = (slot + 1) & self.mask;
        }
        slot
    }

    #[inline]
    fn count(&self, gram: u64) -> u32 {
        let slot = self.slot(gram);
        if self.keys[slot] == gram {
            self.counts[slot].0
        } else {
            0
        }
    }
}

/// For every character of every text, in order: the largest number of reference answers
/// (`references`, all sources) holding a 3-gram of its text that covers it (0 when none does).
pub fn trigram_coverage<S: AsRef<str>>(references: &[S], texts: &[&[char]]) -> Vec<u32> {
    let grams = texts.iter().flat_map(|text| text.windows(3).map(key));
    let expected: usize = texts.iter().map(|text| text.len()).sum();
    let mut counts = Counts::with_keys(grams, expected);
    let mut chars = Vec::new();
    for (answer, reference) in references.iter().enumerate() {
        chars.clear();
        chars.extend(reference.as_ref().chars());
        for gram in chars.windows(3) {
            let slot = counts.slot(key(gram));
            if counts.keys[slot] != EMPTY {
                let (count, last) = &mut counts.counts[slot];
                if *last != answer as u32 {
                    *last = answer as u32;
                    *count += 1;
                }
            }
        }
    }
    let mut coverage = Vec::with_capacity(expected);
    for text in texts {
        let start = coverage.len();
        coverage.resize(start + text.len(), 0);
        let own = &mut coverage[start..];
        for (at, gram) in text.windows(3).enumerate() {
            let count = counts.count(key(gram));
            for covered in &mut own[at..at + 3] {
                *covered = (*covered).max(count);
            }
        }
    }
    coverage
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> Vec<char> {
        text.chars().collect()
    }

    #[test]
    fn counts_answers_not_occurrences() {
        let references = ["abcd", "xabc", "bcd", "abcabc"];
        let (first, second, short) = (chars("abcdx"), chars("zabcz"), chars("ab"));
        let coverage = trigram_coverage(&references, &[&first, &short, &second]);
        // abc: 3 answers, bcd: 2, cdx: none; ab: no 3-gram; zab, bcz: none.
        assert_eq!(coverage, [3, 3, 3, 2, 0, 0, 0, 0, 3, 3, 3, 0]);
    }

    #[test]
    fn astral_and_control_characters() {
        let references = ["𠮷\u{0}😀", "\u{0}😀\u{10FFFF}"];
        let text = chars("𠮷\u{0}😀\u{10FFFF}");
        assert_eq!(trigram_coverage(&references, &[&text]), [1, 1, 1, 1]);
        assert_eq!(trigram_coverage::<&str>(&[], &[&text]), [0, 0, 0, 0]);
    }
}
