//! pfgen-core: the benchmarks' scores, computed exactly as the published tools do, without
//! Python. `pfgen-python` wraps it.
//!
//! * `common`: JSON lines, Python's float formatting and rounding, prefetching;
//! * `pfgen`: pfgen-bench (see docs/scoring-spec.md of the project).

pub mod common;
pub mod evalmm;
pub mod pfgen;
