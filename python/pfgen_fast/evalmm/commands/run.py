"""`mm run`: a vision-language model behind OpenAI-compatible servers run on llm-jp-eval-mm's
tasks, its replies scored, and OUT/<task>/<model>/ written as llm-jp-eval-mm writes it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pfgen_fast.common.cli_args import non_negative_float, positive_float, positive_int
from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm import DEFAULT, LLMClient
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.evalmm.commands.leaderboard import show_leaderboard
from pfgen_fast.evalmm.commands.scoring_options import (
    add_scorer_choices,
    options_from_args,
    report_judge,
)
from pfgen_fast.evalmm.metrics.judges import JudgeErrors
from pfgen_fast.evalmm.metrics.scorers import SCORERS, get_scorer

JUDGE_LOG = "judge_replies.jsonl"


def add_arguments(run: argparse.ArgumentParser) -> None:
    from pfgen_fast.evalmm.images import IMAGE_FORMATS

    run.description = (
        "Runs a model on llm-jp-eval-mm's tasks through OpenAI-compatible servers and scores the "
        "replies, writing OUT/<task>/<model>/ as llm-jp-eval-mm does. Replies are cached: a "
        "killed run resumes, a re-run asks nothing."
    )
    run.add_argument(
        "--task", action="append", required=True, metavar="TASK",
        help="a task (repeat for several; `mm tasks` lists them)",
    )  # fmt: skip
    run.add_argument(
        "--data", action="append", default=[], metavar="[TASK=]DIR",
        help="read a task's dataset from a local copy of its Hub repository (DIR alone: for "
        "every task not given its own)",
    )  # fmt: skip
    run.add_argument(
        "--metrics", nargs="+", choices=sorted(SCORERS), metavar="NAME",
        help="metrics to compute (default: each task's metrics in llm-jp-eval-mm)",
    )  # fmt: skip
    run.add_argument("--judge-model", help="the judge model, for judged metrics")
    run.add_argument("--judge-base-url", help="the judge's server, for judged metrics")
    run.add_argument(
        "--inference-only", action="store_true", help="write the predictions, do not score"
    )
    run.add_argument("--max-items", type=positive_int, help="only the first N items of a task")
    run.add_argument(
        "--rotate-choices", action="store_true",
        help="mecha-ja: each item four times, its options rotated (as the original's option)",
    )  # fmt: skip
    run.add_argument(
        "--max-tokens", type=positive_int, default=256, help="tokens per reply (default: 256)"
    )
    run.add_argument("--temperature", type=non_negative_float, default=0.0, help="(default: 0)")
    run.add_argument("--top-p", type=positive_float, default=1.0, help="(default: 1)")
    run.add_argument(
        "--image-format", choices=IMAGE_FORMATS, default="original",
        help="original: as the dataset stores them (PNG, JPEG, WebP, GIF; others, and those "
        "an EXIF orientation turns, as PNG of the pixels the task gives); "
        "png; jpeg: as llm-jp-eval-mm's API example sends them (default: original)",
    )  # fmt: skip
    run.add_argument(
        "--overwrite", action="store_true",
        help="run the model again where OUT/<task>/<model>/prediction.jsonl exists "
        "(default: reuse it and only score)",
    )  # fmt: skip
    run.add_argument(
        "--out", type=Path, default=Path("result"), help="result folder (default: result)"
    )
    add_scorer_choices(run)
    add_llm_arguments(
        run,
        request_fields=("temperature", "top_p", "max_tokens"),
        model_flag="--model",
        model_help="the model's name as the server knows it",
    )


def run(args: argparse.Namespace) -> int:
    """Runs every task. Each task's data source is checked before any request (a missing
    prepared file, config or split stops the run); a task whose rows cannot be read is
    reported (one line) and the others still run; a server that refuses or is down stops the
    whole run."""
    from pfgen_fast.common.llm import LLMError
    from pfgen_fast.evalmm import runner
    from pfgen_fast.evalmm.tasks import check_source, task_info, task_names

    known = task_names()
    unknown = [task for task in args.task if task not in known]
    if unknown:
        raise PfgenError(f"unknown task {', '.join(unknown)}; the tasks: {', '.join(known)}")
    check_model_id(args.model)
    data = data_dirs(args.data, args.task)
    for task in dict.fromkeys(args.task):  # before any request
        check_source(task, data.get(task))
    metrics = set(args.metrics or [])
    if not args.inference_only and not args.metrics:
        metrics = {name for task in args.task for name in task_info(task).metrics}
    generation = runner.Generation(args.max_tokens, args.temperature, args.top_p, args.image_format)
    judge = open_run_judge(args, sorted(metrics))
    client = client_from_args(args, log_path=None)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    failed = 0
    try:
        options = options_from_args(args, judge)
        for task in dict.fromkeys(args.task):
            task_run = runner.TaskRun(
                task, args.model, args.out, data.get(task), generation, args.metrics,
                args.inference_only, args.max_items, args.overwrite, args.rotate_choices,
                args.evalmm_dir,
            )  # fmt: skip
            try:
                evaluation = runner.run_task(task_run, client, options)
            except LLMError:
                raise
            except PfgenError as error:
                print(f"error: {error}", file=sys.stderr)
                failed += 1
                continue
            if evaluation is not None:
                results[(task, args.model)] = evaluation
    finally:
        client.close()
        if judge is not None:
            judge.close()
    stats = client.stats
    print(
        f"model: {stats.calls} calls, {stats.cached} cached, {stats.failed} failed",
        file=sys.stderr,
    )
    judge_status = report_judge(judge, JudgeErrors(args.judge_errors), args.out / JUDGE_LOG)
    show_leaderboard(results, None)
    return 1 if failed or judge_status else 0


def check_model_id(model: str) -> None:
    """The model's name is its folder under OUT/<task>/ (with '/' a subfolder, as the
    original): no empty, '.' or '..' parts."""
    parts = model.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise PfgenError(f"--model {model!r}: not usable as a folder name (OUT/<task>/<model>)")


def data_dirs(values: list[str], tasks: list[str]) -> dict[str, Path]:
    """--data values by task: TASK=DIR for one task, DIR alone for the others."""
    given: dict[str, Path] = {}
    every: Path | None = None
    for value in values:
        task, separator, folder = value.partition("=")
        if separator and task in tasks:
            given[task] = Path(folder)
        elif separator and task and "/" not in task:
            raise PfgenError(f"--data {value!r}: {task} is not among the --task given")
        else:
            every = Path(value)
    if every is not None:
        for task in tasks:
            given.setdefault(task, every)
    return given


def open_run_judge(args: argparse.Namespace, metrics: list[str]) -> LLMClient | None:
    judged = [name for name in metrics if get_scorer(name).needs_judge]
    if not judged:
        return None
    if not args.judge_base_url or not args.judge_model:
        raise PfgenError(
            f"{', '.join(judged)} asks a judge: give --judge-base-url and --judge-model "
            "(or --metrics without judged ones, or --inference-only)"
        )
    return LLMClient(
        args.judge_base_url,
        args.judge_model,
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache_path=None if args.no_cache else DEFAULT,
        log_path=args.out / JUDGE_LOG,
    )
