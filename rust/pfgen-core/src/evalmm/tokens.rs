//! Token ids of tokenizer output: each text split as Python's `str.split()` splits (on the
//! code points Python calls whitespace), each distinct token given one id.

use std::collections::HashMap;

/// The code points Python's `str.split()` without arguments splits on (`str.isspace`).
pub fn is_python_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// (ids, offsets): text i's tokens are `ids[offsets[i]..offsets[i + 1]]`; ids are numbered
/// in order of first appearance.
pub fn intern_tokens<S: AsRef<str>>(texts: &[S]) -> (Vec<u32>, Vec<u64>) {
    let mut vocabulary: HashMap<&str, u32> = HashMap::new();
    let mut ids = Vec::new();
    let mut offsets = Vec::with_capacity(texts.len() + 1);
    offsets.push(0);
    for text in texts {
        for token in text.as_ref().split(is_python_whitespace) {
            if token.is_empty() {
                continue;
            }
            let next = vocabulary.len() as u32;
            ids.push(*vocabulary.entry(token).or_insert(next));
        }
        offsets.push(ids.len() as u64);
    }
    (ids, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_python() {
        let (ids, offsets) = intern_tokens(&["a b\u{3000}c \n", "", "c\u{1f}a\u{a0}\u{200b}"]);
        // U+200B (zero width space) is not whitespace in Python.
        assert_eq!(ids, vec![0, 1, 2, 2, 0, 3]);
        assert_eq!(offsets, vec![0, 3, 3, 6]);
    }
}
