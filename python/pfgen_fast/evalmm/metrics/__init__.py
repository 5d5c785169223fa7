"""llm-jp-eval-mm's metrics: the scorers of its `eval_mm.metrics`, their tokenisers, and the
registry (`scorers`) that names them."""
