"""What the pfgen-bench room reads and writes, and how other rooms read it: the benchmark's
question files (`data/Qxx.json`, defined in `pfgen.data`), a run folder (its
trials file, the `config.json` `generate` writes, the `result.json` and `cache/scores.json`
`eval` writes), result.json read and checked (`load_result`, the checks the leaderboard and the
pages apply), and the run's figures as every output shows them (`RunFigures`: the README
leaderboard, `report`'s exports, `eval`'s summary and the site).

The files of a run folder `{out}/{model's folder}/{first 7 hex digits of the SHA-1 of
config_text}`, each written and read in one module:
* `config.json` (here: `config_text`, `write_config`, `read_config`): the run's parameters
  sorted by name. `generate` writes `engine`, `model`, `mode`, `num_examples`, `stop`,
  `max_tokens`, `temperature`, `enable_thinking`, the keys of `--extra-body`, and `top_p`,
  `prefix`, `seed`, `strip_reasoning` when set; `lm-eval-import` writes `engine`, `model`,
  `mode`, `num_examples`, `stop`, `max_tokens`, `lm_eval_model`, `lm_eval_task`, lm-eval's
  other sampling settings and `system_instruction` when set. `eval` copies it into result.json
  as it is; readers take `model` and `mode`, and the site shows the others as they are.
* `trial_NNN.jsonl` and `trials.jsonl.xz` (`pfgen.trials`; the Rust core reads them too).
* `result.json` and `cache/scores.json` (`pfgen.results`), which `eval` writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import read_json
from pfgen_fast.common.model_folders import model_folder
from pfgen_fast.pfgen.data import (
    DATA_DEFAULT,
    QUESTION_FILE,
    Question,
    default_data_dir,
    load_question,
    load_questions,
    question_files,
    resolve_data_dir,
)
from pfgen_fast.pfgen.exactness import py_sum
from pfgen_fast.pfgen.results import (
    CACHE_PATH,
    RESULT_NAME,
    ResultChecker,
    RunResult,
    ValidTrials,
    cached_legacy_sum,
    load_result,
    load_results,
    result_path,
)
from pfgen_fast.pfgen.trials import TRIALS_NAMES, trials_file, write_file

__all__ = [
    "CACHE_PATH",
    "CONFIG_NAME",
    "DATA_DEFAULT",
    "QUESTION_FILE",
    "RESULT_NAME",
    "TOTAL_PLACES",
    "FIGURE_CAPTION",
    "FIGURE_COLUMNS",
    "FIGURE_LABELS",
    "TRIALS_NAMES",
    "Question",
    "ResultChecker",
    "RunFigures",
    "RunResult",
    "ValidTrials",
    "cached_legacy_sum",
    "config_text",
    "criterion_total",
    "default_data_dir",
    "load_question",
    "load_questions",
    "load_result",
    "load_results",
    "question_files",
    "read_config",
    "resolve_data_dir",
    "result_path",
    "run_figures",
    "trials_file",
    "write_config",
]

# --- a run folder -------------------------------------------------------------------------

CONFIG_NAME = "config.json"


def config_text(config: Mapping[str, Any]) -> str:
    """`json.dumps` of the parameters sorted by name, as config.json holds it (without its final
    newline): the text whose SHA-1 names the run folder."""
    return json.dumps(dict(sorted(config.items())), ensure_ascii=False)


def run_folder(out: Path, config: Mapping[str, Any]) -> Path:
    """The run folder of a config: {out}/{the model's folder}/{the first 7 hex digits of the
    SHA-1 of `config_text`}."""
    digest = hashlib.sha1(config_text(config).encode("utf-8")).hexdigest()[:7]
    return out / model_folder(str(config["model"])) / digest


def write_config(run_dir: Path, config: Mapping[str, Any]) -> None:
    """config.json: `config_text` and a newline, written atomically."""
    write_file(run_dir / CONFIG_NAME, (config_text(config) + "\n").encode("utf-8"))


def read_config(run_dir: Path) -> dict[str, Any] | None:
    """The run's config.json, when it exists (copied into result.json as is)."""
    path = run_dir / CONFIG_NAME
    if not path.is_file():
        return None
    config = read_json(path)
    if not isinstance(config, dict):
        raise InputError(f"{path}: expected a JSON object")
    return config


# --- a run's figures ----------------------------------------------------------------------

# Totals are sums of values with 5 decimals: rounded to 5 places they lose only the float
# noise of the addition (tables, exports, `eval --json`, the site).
TOTAL_PLACES = 5


def criterion_total(by_source: Mapping[str, float], legacy_sum: bool = False) -> float:
    """Fluency or Truthfulness over all sources: the values added in result.json's key order
    with the benchmark's `sum()` (see `pfgen_fast.pfgen.exactness`), as its leaderboard does."""
    return py_sum(list(by_source.values()), legacy_sum)


# A run's figures as the tables of `eval` and `leaderboard` show them: piped, these columns; on
# a terminal, the short labels the caption explains.
FIGURE_COLUMNS = ["score", "score_std", "length", "fluency", "truthfulness", "helpfulness"]
FIGURE_LABELS = ["score", "sd", "len", "F", "T", "H"]
FIGURE_CAPTION = (
    "sd: standard deviation of the score over trials; len: mean answer length; "
    "F, T, H: Fluency, Truthfulness, Helpfulness"
)


@dataclass(frozen=True)
class RunFigures:
    """A run's figures as the leaderboard shows them: `fluency` and `truthfulness` are the
    unrounded totals (`criterion_total`); `rounded_*` are them to TOTAL_PLACES places."""

    score: float
    score_std: float
    length: float
    length_std: float
    num_trials: int
    fluency: float
    truthfulness: float
    helpfulness: float
    average: float

    @property
    def rounded_fluency(self) -> float:
        return round(self.fluency, TOTAL_PLACES)

    @property
    def rounded_truthfulness(self) -> float:
        return round(self.truthfulness, TOTAL_PLACES)


def run_figures(result: Mapping[str, Any], legacy_sum: bool = False) -> RunFigures:
    """The figures of a result.json checked by `load_result` (or written by `eval`)."""
    scores = result["scores"]
    return RunFigures(
        score=result["score"],
        score_std=result["score_std"],
        length=result["length"],
        length_std=result["length_std"],
        num_trials=result["num_trials"],
        fluency=criterion_total(scores["fluency"], legacy_sum),
        truthfulness=criterion_total(scores["truthfulness"], legacy_sum),
        helpfulness=scores["helpfulness"],
        average=scores["average"],
    )
