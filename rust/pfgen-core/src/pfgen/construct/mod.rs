//! Building reference sets (build-refs): rare n-grams of candidates, the candidate lines'
//! check, and the 3-gram coverage of texts by the reference answers.

pub mod candidate_lines;
pub mod rare_ngrams;
pub mod trigram_counts;
