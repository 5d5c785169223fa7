"""What every scorer shares: the options of a scoring run, the batch a scorer is given, what a
judged metric gives back, and the scorer itself (the registry of them is `scorers`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from pfgen_fast.common.llm import LLMClient

Doc = dict[str, Any]
Aggregate = dict[str, Any]


class JudgeErrors(Enum):
    """What a judge call that fails for good counts as."""

    EXCLUDE = "exclude"  # left out of the means, counted in the details
    ZERO = "zero"  # scored as llm-jp-eval-mm scores the empty reply it substitutes


@dataclass(frozen=True, kw_only=True)
class Options:
    """Choices of a scoring run. `judge`: the client the judge metrics ask; `judge_errors`: what
    an item the judge could not score counts as; `judge_max_tokens`: the judge's max_tokens
    (None: each metric's own, as the original sets it)."""

    use_neologdn: bool = False
    fix_quirks: bool = False
    judge: LLMClient | None = None
    judge_errors: JudgeErrors = JudgeErrors.EXCLUDE
    # llm-jp-eval-mm's files (judge prompts, JMMMU indicators); None: the default places.
    data_dir: Path | None = None
    judge_max_tokens: int | None = None


@dataclass(frozen=True)
class Batch:
    refs: Sequence[Any]
    preds: Sequence[str]
    docs: Sequence[Doc]
    options: Options = field(default_factory=Options)


@dataclass(frozen=True)
class Judged:
    """A judged metric's scores, and why the judge gave no verdict on some items (item index
    → reason)."""

    scores: list[Any]
    failures: dict[int, str]


@dataclass(frozen=True)
class Scorer:
    name: str
    # The items' scores; a judged metric's with its failures.
    score: Callable[[Batch], list[Any] | Judged]
    aggregate: Callable[[list[Any], Batch], Aggregate]
    _: KW_ONLY
    # Document fields each item must carry, with their JSON types.
    fields: tuple[tuple[str, type | tuple[type, ...]], ...] = ()
    # Further checks of one document (raising InputError naming `where` and the field).
    check: Callable[[Doc, str], None] | None = None
    # Reference types accepted (a list only where the original takes lists).
    ref_kinds: tuple[type, ...] = (str,)
    needs_judge: bool = False
    # What `ref` holds and fields needed by some items only, for the help.
    ref_help: str = "a string"
    fields_note: str = ""
