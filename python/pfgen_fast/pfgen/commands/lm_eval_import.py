"""`lm-eval-import`: the samples of an lm-evaluation-harness run of pfgen-bench's tasks
(`--output_path ... --log_samples`) as run folders, `{out}/{model}/{config hash}/`, as
`generate` writes them: config.json (the task and its sampling), one trial file per trial and
trials.jsonl.xz, ready for `eval`, `report` and the site (docs/lm-eval.md)."""

from __future__ import annotations

import argparse
import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import iter_json_lines, read_json_object, require
from pfgen_fast.pfgen.harness import Answer, answer_of, sorted_answers, trial_records
from pfgen_fast.pfgen.outputs import run_folder, write_config
from pfgen_fast.pfgen.prompts import MODES
from pfgen_fast.pfgen.trials import pack_trials, trial_bytes, trial_path, write_file

# How lm-eval names its files: results_{date}.json, and beside it samples_{task}_{date}.jsonl.
RESULTS_PREFIX = "results_"
ENGINE = "lm-eval"
# The number of few-shot examples of the tasks' prompts (the runners' default).
NUM_EXAMPLES = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        type=Path,
        help="lm-eval's results_*.json files, or folders to search for them (its --output_path)",
    )
    parser.add_argument("--out", default="result", help="results folder (default: result)")


@dataclass(frozen=True)
class TaskRun:
    """One pfgen-bench task of an lm-eval results file, read and checked."""

    samples: Path
    config: dict[str, Any]  # config.json's
    answers: list[Answer]  # in document order
    timestamp: str
    missing: int  # documents left out by --limit

    def run_dir(self, out: Path) -> Path:
        return run_folder(out, self.config)


def results_files(paths: list[Path]) -> list[Path]:
    """The results files given, and those in the folders given (sorted)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.rglob(f"{RESULTS_PREFIX}*.json"))
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    if not found:
        raise InputError(f"no lm-eval results files ({RESULTS_PREFIX}*.json) in {paths[0]}")
    return found


def pfgen_tasks(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The results' tasks that are pfgen-bench's: those whose documents `harness.documents`
    made (its arguments are their `dataset_kwargs`)."""
    configs = results.get("configs")
    if not isinstance(configs, dict):
        return {}
    return {
        name: config
        for name, config in configs.items()
        if isinstance(config, dict)
        and isinstance(kwargs := config.get("dataset_kwargs"), dict)
        and kwargs.get("mode") in MODES
        and "num_trials" in kwargs
    }


def run_config(results_path: Path, results: dict[str, Any], name: str) -> dict[str, Any]:
    """config.json of a task: the model, mode and sampling, with the task and lm-eval's model
    type; sampling as the published runners record it (`stop`, `max_tokens`)."""
    task = results["configs"][name]
    where = f"{results_path}: configs.{name}"
    kwargs = require(task, "dataset_kwargs", dict, where)
    mode = require(kwargs, "mode", str, f"{where}.dataset_kwargs")
    sampling = dict(require(task, "generation_kwargs", dict, where))
    model = require(results, "model_name", str, str(results_path))
    lm_eval_config = require(results, "config", dict, str(results_path))
    model_type = require(lm_eval_config, "model", str, f"{results_path}: config")
    if mode != "completion" and results.get("chat_template") is None:
        raise InputError(
            f"{results_path}: task {name} ({mode} mode) ran without --apply_chat_template: "
            "its prompts were not the benchmark's"
        )
    config: dict[str, Any] = {
        **{key: value for key, value in sampling.items() if key not in ("until", "max_gen_toks")},
        "engine": ENGINE,
        "lm_eval_model": model_type,
        "lm_eval_task": name,
        "max_tokens": sampling.get("max_gen_toks"),
        "mode": mode,
        "model": model,
        "num_examples": NUM_EXAMPLES,
        "stop": sampling.get("until"),
    }
    if results.get("system_instruction"):
        config["system_instruction"] = results["system_instruction"]
    return config


def read_task_run(results_path: Path, results: dict[str, Any], name: str) -> TaskRun:
    """A task's run: its config, its samples' answers in document order, the run's start
    time (every answer's timestamp) and the documents --limit left out."""
    where = str(results_path)
    date = results_path.stem.removeprefix(RESULTS_PREFIX)
    samples = results_path.with_name(f"samples_{name}_{date}.jsonl")
    if not samples.is_file():
        raise InputError(f"{samples}: missing (run lm_eval with --log_samples)")
    config = run_config(results_path, results, name)
    documents: list[tuple[int, Answer]] = []
    for line in iter_json_lines(samples):
        doc_id = require(line.value, "doc_id", int, line.where)
        item = require(line.value, "score", list, line.where)
        documents.append((doc_id, answer_of(item, f'{line.where}: field "score"')))
    documents.sort(key=lambda document: document[0])
    answers = [answer for _, answer in documents]
    sorted_answers(answers, str(samples))
    if not answers:
        raise InputError(f"{samples}: no samples")
    counts = require(require(results, "n-samples", dict, str(results_path)), name, dict, where)
    missing = require(counts, "original", int, f"{where}: n-samples.{name}") - len(answers)
    started = require(results, "date", (int, float), str(results_path))
    timestamp = datetime.datetime.fromtimestamp(started).isoformat()
    return TaskRun(samples, config, answers, timestamp, missing)


def trial_files(run: TaskRun) -> dict[int, bytes]:
    """Each trial file's bytes: its answers in document order (questions.jsonl's)."""
    return {
        trial: trial_bytes(records)
        for trial, records in trial_records(run.answers, run.timestamp).items()
    }


def check_run(run: TaskRun, out: Path) -> None:
    """Trial files already in the run folder must be those it would write (the same samples
    imported again)."""
    run_dir = run.run_dir(out)
    for trial, data in trial_files(run).items():
        path = trial_path(run_dir, trial)
        if path.exists() and path.read_bytes() != data:
            raise InputError(
                f"{path}: already holds other answers (from another lm-eval run of the same "
                f"settings); import {run.samples} into another --out"
            )


def write_run(run: TaskRun, out: Path) -> Path:
    """config.json, the trial files and trials.jsonl.xz of the run folder."""
    run_dir = run.run_dir(out)
    write_config(run_dir, run.config)
    for trial, data in trial_files(run).items():
        write_file(trial_path(run_dir, trial), data)
    pack_trials(run_dir)
    return run_dir


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)
    task_runs: list[TaskRun] = []
    for results_path in results_files(args.paths):
        results = read_json_object(results_path)
        tasks = pfgen_tasks(results)
        if not tasks:
            console.print(f"warning: {escape(str(results_path))}: no pfgen-bench task")
        task_runs += [read_task_run(results_path, results, name) for name in tasks]
    if not task_runs:
        raise InputError("no pfgen-bench task in the lm-eval results given")
    for task_run in task_runs:
        check_run(task_run, Path(args.out))
    for task_run in task_runs:
        run_dir = write_run(task_run, Path(args.out))
        trials = len({answer.trial for answer in task_run.answers})
        print(run_dir)
        console.print(
            f"{escape(str(task_run.samples))}: {len(task_run.answers)} answers, {trials} "
            f"trials -> {escape(str(run_dir / 'trials.jsonl.xz'))}"
        )
        if task_run.missing:
            console.print(
                f"warning: {task_run.missing} documents were left out (lm_eval --limit): "
                "evaluate with `eval --allow-partial`"
            )
    return 0
