"""`mm evaluate`: every run of an llm-jp-eval-mm result directory re-scored, and the
leaderboard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pfgen_fast.common.cli_args import add_table_argument, add_task_paths_argument
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.evalmm.commands.leaderboard import show_leaderboard
from pfgen_fast.evalmm.commands.scoring_options import (
    add_metrics_argument,
    add_scoring_options,
    judge_record,
    open_judge,
    options_from_args,
    report_judge,
)
from pfgen_fast.evalmm.metrics.base import JudgeErrors


def add_arguments(evaluate: argparse.ArgumentParser) -> None:
    evaluate.add_argument("result_dir", type=Path, metavar="RESULT_DIR")
    add_metrics_argument(evaluate)
    add_table_argument(evaluate, "the leaderboard")
    add_task_paths_argument(
        evaluate,
        "--docs",
        "FILE",
        "a task's documents (JSON lines with question_id and the dataset's fields, e.g. "
        "answer_type, options, category), for metrics that need more than prediction.jsonl",
    )
    add_scoring_options(evaluate)


def check_docs(docs: dict[str, Path], tasks: set[str]) -> None:
    """Every --docs names a task of the result directory and a file, before anything is scored."""
    for task, path in docs.items():
        if task not in tasks:
            raise InputError(
                f"--docs {task}={path}: the result directory has no task {task!r} "
                f"(its tasks: {', '.join(sorted(tasks))})"
            )
        if not path.is_file():
            raise InputError(f"--docs {task}={path}: {path}: no such file")


def run(args: argparse.Namespace) -> int:
    """Scores every run; a run that cannot be scored is reported (one line) and skipped."""
    from pfgen_fast.evalmm import evaluate
    from pfgen_fast.evalmm.outputs import JUDGE_LOG

    docs = dict(args.docs)
    folders = evaluate.find_runs(args.result_dir)
    check_docs(docs, {folder.relative_to(args.result_dir).parts[0] for folder in folders})
    runs, failed = [], 0
    for folder in folders:
        try:
            run = evaluate.read_run(folder, args.result_dir)
            runs.append((run, evaluate.metrics_of(run, args.metrics)))
        except PfgenError as error:
            print(f"error: {error}", file=sys.stderr)
            failed += 1
    metrics = sorted({name for _, names in runs for name in names})
    judge = open_judge(args, metrics, args.result_dir / JUDGE_LOG)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    unjudged = 0
    try:
        options = options_from_args(args, judge)
        for run, names in runs:
            judge_used = judge_record(args.judge_model, args.base_url, args.judge_max_tokens, names)
            try:
                evaluation, unscored = evaluate.score_run(run, names, options, docs.get(run.task))
                scoring = evaluate.scoring_record(options)
                whole = evaluate.write_run(run, names, evaluation, scoring, judge_used)
            except PfgenError as error:
                print(f"error: {error}", file=sys.stderr)
                failed += 1
                continue
            unjudged += unscored
            results[(run.task, run.model)] = whole
    finally:
        if judge is not None:
            judge.close()
    status = report_judge(
        judge, JudgeErrors(args.judge_errors), args.result_dir / JUDGE_LOG, unjudged
    )
    show_leaderboard(results, args.table)
    return 1 if failed or status else 0
