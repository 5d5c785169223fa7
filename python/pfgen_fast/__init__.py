"""pfgen_fast: exact, fast evaluation of Japanese text generation (pfgen-bench, LCTG Bench,
llm-jp-eval-mm's scorers, pairwise judging). The package exports pfgen-bench's scorer; the
other benchmarks are used through `python -m pfgen_fast lctg|mm|judge`.

Example::

    from pfgen_fast import QuestionScorer, ReferenceData

    refs = ReferenceData.load("pfgen-bench/data")
    scorer = QuestionScorer(refs.by_text("つるかめ算について教えて。"))
    records = scorer.score(["つるかめ算は、..."])  # per-answer records, as the benchmark's
    arrays = scorer.score_arrays(many_answers)  # numpy arrays, no dict per answer
"""

from __future__ import annotations

from typing import Any

from pfgen_fast.common.errors import DataError, InputError, PfgenError
from pfgen_fast.pfgen.data import Question, load_questions

__all__ = [
    "DataError",
    "InputError",
    "PfgenError",
    "Question",
    "QuestionScorer",
    "ReferenceData",
    "ScoreArrays",
    "build_scorers",
    "load_questions",
]
__version__ = "0.1.0"

_SCORER_NAMES = {"QuestionScorer", "ReferenceData", "ScoreArrays", "build_scorers"}


def __getattr__(name: str) -> Any:
    # The scorer pulls in numpy and the compiled core; commands that need neither stay light.
    if name in _SCORER_NAMES:
        from pfgen_fast.pfgen import scorer

        return getattr(scorer, name)
    raise AttributeError(f"module 'pfgen_fast' has no attribute {name!r}")
