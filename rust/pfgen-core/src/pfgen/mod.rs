//! pfgen-bench: the n-gram tables of a question's reference answers (built, stored, read),
//! the Fluency/Truthfulness walk, Helpfulness, the per-answer record, the answer lines of
//! `score`, and reference-set construction.

pub mod answer_lines;
pub mod construct;
pub mod helpfulness;
pub mod ngram_build;
pub mod ngram_table;
pub mod record_json;
pub mod reference;
pub mod run_summary;
mod scorer;
pub mod spec;
pub mod table_file;
pub mod trials_chunk;

pub use scorer::{HelpfulnessResults, QuestionScorer, ScoreBatch};
