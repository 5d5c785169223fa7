//! The numbers of pfgen-bench's scoring (`scoring-spec.md`), defined
//! once here; the Python package reads them from `pfgen_fast._core`.

/// Longest character n-gram of Fluency (Truthfulness uses 3-grams).
pub const MAX_N: usize = 10;
/// The scores have no length discount up to this length: there Fluency's total only grows.
pub const FLAT: usize = 100;
/// Fluency looks at the first 200 characters, but past 150 its length discount is <= 0 and a
/// non-positive value never replaces the best (which starts at 0.0): the walk stops at 150.
pub const FLUENCY_USEFUL: usize = 150;
/// Truthfulness reads ("^" + answer + "$")[:202].
pub const TRUTH_CUT: usize = 202;
/// Helpfulness reads the first 200 characters of an answer.
pub const HELPFULNESS_CUT: usize = 200;
/// Past 150 characters Helpfulness's length discount is <= 0.
pub const HELPFULNESS_USEFUL: usize = 150;
/// The value of a keyword leaf whose pattern is absent from an answer.
pub const NOT_FOUND: u32 = 9999;
