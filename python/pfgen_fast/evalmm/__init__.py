"""llm-jp-eval-mm's scorers, computed exactly as its `eval_mm` package does (quirks included by
default), with the per-pair work in the Rust core. See docs/evalmm.md."""
