"""LCTG Bench's published files: fetched from the benchmark's repository at the pinned commit,
checked against the SHA-256 manifest in `reference_data/lctg-bench.json` (hashes only; the
files are CC BY-NC-SA 4.0 and never shipped), and the prompt sets loaded from them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.jsonl import iter_json_lines, require
from pfgen_fast.common.published_data import PublishedData

TASKS = ("summary", "ad_text", "pros_and_cons")
# The four constraints, in the benchmark's column order; each is generated separately.
CONSTRAINTS = ("format", "char_count", "keyword", "prohibited_word")
FETCH_HINT = "run `python -m pfgen_fast lctg data fetch`, or pass --data DIR (a checkout)"


@dataclass(frozen=True)
class PromptRow:
    """One prompt of a task: the source text, the generation prompt of each constraint and
    the answers the checks use."""

    prompt_id: int
    base_text: str
    prompts: dict[str, str]  # constraint -> the stored generation prompt
    char_range: tuple[int, int]  # inclusive
    keyword: str
    prohibited_word: str


PUBLISHED = PublishedData(
    name="LCTG Bench",
    manifest="lctg-bench.json",
    cached="lctg/LCTG-Bench",
    hint=FETCH_HINT,
    variable="LCTG_BENCH_DIR",
)


def resolve_data_dir(data_dir: str | Path | None) -> Path:
    """The directory given or the default one; a DataError with the fetch hint when the
    benchmark's files are not there."""
    return PUBLISHED.find_dir(None if data_dir is None else Path(data_dir))


def require_verified(data_dir: Path, names: list[str]) -> None:
    """A DataError listing the problems, with the fetch hint, unless the files match."""
    problems = PUBLISHED.verify(data_dir, names)
    if problems:
        listing = "\n  ".join(problems)
        raise DataError(f"{data_dir} does not match LCTG Bench ({FETCH_HINT}):\n  {listing}")


def prompts_file(task: str) -> str:
    return f"datasets/{task}/prompts_v1.jsonl"


def load_prompts(data_dir: Path, task: str) -> dict[int, PromptRow]:
    """The task's prompts by `prompt_id`, from the verified `prompts_v1.jsonl`."""
    name = prompts_file(task)
    require_verified(data_dir, [name])
    rows: dict[int, PromptRow] = {}
    for line in iter_json_lines(data_dir / name):
        obj, where = line.value, line.where
        prompt_id = require(obj, "prompt_id", int, where)
        low, high = require(obj, "char_count_answer", list, where)
        rows[prompt_id] = PromptRow(
            prompt_id=prompt_id,
            base_text=require(obj, "base_text", str, where),
            prompts={c: require(obj, f"prompt_{c}", str, where) for c in CONSTRAINTS},
            char_range=(int(low), int(high)),
            keyword=require(obj, "keyword_answer", str, where),
            prohibited_word=require(obj, "prohibited_word_answer", str, where),
        )
    return rows
