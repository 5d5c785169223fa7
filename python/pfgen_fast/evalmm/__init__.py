"""llm-jp-eval-mm: its tasks' items as its Task classes build them (`tasks/`), its scorers
computed exactly as its `eval_mm` package does, with the per-pair work in the Rust core
(`metrics/`), and a model's run over the tasks (`runner`). See docs/evalmm.md."""
