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

from typing import TYPE_CHECKING, Any

from pfgen_fast.common.errors import DataError, InputError, PfgenError

if TYPE_CHECKING:
    from pfgen_fast.pfgen.data import Question, load_questions
    from pfgen_fast.pfgen.scorer import QuestionScorer, ReferenceData, ScoreArrays, build_scorers

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

# Imported when first asked for: the scorer pulls in numpy and the compiled core, and
# `python -m pfgen_fast` imports this package before its SIGTERM handler is in place.
_LAZY = {
    "Question": "pfgen_fast.pfgen.data",
    "load_questions": "pfgen_fast.pfgen.data",
    "QuestionScorer": "pfgen_fast.pfgen.scorer",
    "ReferenceData": "pfgen_fast.pfgen.scorer",
    "ScoreArrays": "pfgen_fast.pfgen.scorer",
    "build_scorers": "pfgen_fast.pfgen.scorer",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pfgen_fast' has no attribute {name!r}")
