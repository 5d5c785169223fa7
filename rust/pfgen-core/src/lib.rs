//! pfgen-core: the benchmarks' scores, computed exactly as the published tools do, without
//! Python. `pfgen-python` wraps it.
//!
//! * `common`: JSON lines, Python's float formatting and rounding, prefetching;
//! * `pfgen`: pfgen-bench's scores, its run summaries and reference-set construction
//!   (scoring-spec.md, construction.md);
//! * `evalmm`: llm-jp-eval-mm's text metrics over token ids: ROUGE-L's LCS, BLEU's n-gram
//!   counts, character F1 and edit similarity (evalmm-spec.md).

pub mod common;
pub mod evalmm;
pub mod pfgen;
