"""`mm run`: a vision-language model behind OpenAI-compatible servers run on llm-jp-eval-mm's
tasks, its replies scored, and OUT/<task>/<model>/ written as llm-jp-eval-mm writes it."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pfgen_fast.common.cli_args import (
    model_name,
    non_negative_float,
    positive_float,
    positive_int,
)
from pfgen_fast.common.errors import InputError, PfgenError, UsageError
from pfgen_fast.common.llm import LLMClient, warn_if_cut
from pfgen_fast.common.llm_options import (
    add_llm_arguments,
    add_strip_reasoning_argument,
    base_url,
    client_from_args,
)
from pfgen_fast.evalmm.commands.leaderboard import show_leaderboard
from pfgen_fast.evalmm.commands.scoring_options import (
    JUDGE_MAX_TOKENS_HELP,
    add_metrics_argument,
    add_scorer_choices,
    judge_record,
    options_from_args,
    report_judge,
)
from pfgen_fast.evalmm.metrics.base import JudgeErrors
from pfgen_fast.evalmm.metrics.judges import check_judge_prompts
from pfgen_fast.evalmm.metrics.scorers import get_scorer

if TYPE_CHECKING:
    from pfgen_fast.evalmm.runner import TaskRun


def add_arguments(run: argparse.ArgumentParser) -> None:
    from pfgen_fast.evalmm.images import IMAGE_FORMATS
    from pfgen_fast.evalmm.tasks import task_names

    run.description = (
        "Runs a model on llm-jp-eval-mm's tasks through OpenAI-compatible servers and scores the "
        "replies, writing OUT/<task>/<model>/ as llm-jp-eval-mm does. What can be checked "
        "(output folders, data, metrics, judge) is checked before the first request. A failed "
        "item is recorded with its reason in error_message.jsonl and the run exits 1 after "
        "writing everything. Replies are cached: a killed run resumes, a re-run asks nothing."
    )
    run.add_argument(
        "--task",
        action="append",
        required=True,
        choices=task_names(),
        metavar="TASK",
        help="a task (repeat for several; `mm tasks` lists them)",
    )
    run.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="[TASK=]DIR",
        help="read a task's dataset from a local copy of its Hub repository (DIR alone: for "
        "every task not given its own)",
    )
    add_metrics_argument(run)
    run.add_argument("--judge-model", type=model_name, help="the judge model, for judged metrics")
    run.add_argument(
        "--judge-base-url", type=base_url, help="the judge's server, for judged metrics"
    )
    run.add_argument(
        "--judge-max-tokens", type=positive_int, metavar="N", help=JUDGE_MAX_TOKENS_HELP
    )
    run.add_argument(
        "--inference-only", action="store_true", help="write the predictions, do not score"
    )
    run.add_argument("--max-items", type=positive_int, help="only the first N items of a task")
    run.add_argument(
        "--rotate-choices",
        action="store_true",
        help="mecha-ja: each item four times, its options rotated (as the original's option)",
    )
    run.add_argument(
        "--max-tokens", type=positive_int, default=256, help="tokens per reply (default: 256)"
    )
    run.add_argument("--temperature", type=non_negative_float, default=0.0, help="(default: 0)")
    run.add_argument("--top-p", type=positive_float, default=1.0, help="(default: 1)")
    run.add_argument(
        "--image-format",
        choices=IMAGE_FORMATS,
        default="original",
        help="original: as the dataset stores them (PNG, JPEG, WebP, GIF; others, and those "
        "an EXIF orientation turns, as PNG of the pixels the task gives); "
        "png; jpeg: as llm-jp-eval-mm's API example sends them (default: original)",
    )
    run.add_argument(
        "--overwrite",
        action="store_true",
        help="run the model again where OUT/<task>/<model>/prediction.jsonl exists "
        "(default: reuse it and only score)",
    )
    run.add_argument(
        "--out", type=Path, default=Path("result"), help="result folder (default: result)"
    )
    add_strip_reasoning_argument(run)
    add_scorer_choices(run)
    add_llm_arguments(
        run,
        request_fields=("temperature", "top_p", "max_tokens"),
        model_flag="--model",
        model_help="the model's name as the server knows it",
    )


def run(args: argparse.Namespace) -> int:
    """Checks everything it can (tasks, data, metrics, judge, output folders), then runs every
    task. A task failing midway is reported (one line) and the others still run; a server
    that refuses or is down stops the whole run. Exit 1 when a task or an item failed."""
    from pfgen_fast.common.llm import LLMError
    from pfgen_fast.evalmm import runner
    from pfgen_fast.evalmm.outputs import JUDGE_LOG

    runs = task_runs(args)
    judge = open_run_judge(args, sorted({name for task in runs for name in task.metric_names()}))
    for task_run in runs:
        check_before_asking(task_run)
    client = client_from_args(args, log_path=None)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    failed_tasks = failed_items = unjudged = 0
    try:
        options = options_from_args(args, judge)
        for task_run in runs:
            try:
                outcome = runner.run_task(task_run, client, options)
            except LLMError:
                raise
            except PfgenError as error:
                print(f"error: {error}", file=sys.stderr)
                failed_tasks += 1
                continue
            failed_items += outcome.failed
            unjudged += outcome.unjudged
            if outcome.evaluation is not None:
                results[(task_run.task, args.model)] = outcome.evaluation
    finally:
        client.close()
        if judge is not None:
            judge.close()
    stats = client.stats
    print(
        f"model: {stats.calls} calls, {stats.cached} cached, {stats.failed} failed",
        file=sys.stderr,
    )
    warn_if_cut(stats, "model ")
    judge_status = report_judge(
        judge, JudgeErrors(args.judge_errors), args.out / JUDGE_LOG, unjudged, "--judge-max-tokens"
    )
    show_leaderboard(results, None)
    if failed_items:
        print(
            f"error: failed items: {failed_items} (each task's error_message.jsonl says why)",
            file=sys.stderr,
        )
    return 1 if failed_tasks or failed_items or judge_status else 0


def task_runs(args: argparse.Namespace) -> list[TaskRun]:
    """One TaskRun per task given (in order, once each), from the options."""
    from pfgen_fast.evalmm.runner import Generation, TaskRun

    data = data_dirs(args.data, args.task)
    generation = Generation(
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        image_format=args.image_format,
        strip_reasoning=args.strip_reasoning,
        extra_body=args.extra_body,
    )
    runs = [
        TaskRun(
            task=task,
            model=args.model,
            out=args.out,
            data_dir=data.get(task),
            generation=generation,
            metrics=args.metrics,
            inference_only=args.inference_only,
            max_items=args.max_items,
            overwrite=args.overwrite,
            rotate_choices=args.rotate_choices,
            evalmm_dir=args.evalmm_dir,
        )
        for task in dict.fromkeys(args.task)
    ]
    for task_run in runs:
        task_run.judge = judge_record(
            args.judge_model, args.judge_base_url, args.judge_max_tokens, task_run.metric_names()
        )
    return runs


def check_before_asking(task_run: TaskRun) -> None:
    """What a task's run needs besides the model, checked before the first request: its
    result folder can be written, its data source holds every config, split and file the
    task reads, its data gives a first item (llm-jp-eval-mm's files are there), and that item
    has the fields each metric reads."""
    from pfgen_fast.evalmm.evaluate import check_items
    from pfgen_fast.evalmm.runner import empty_prediction
    from pfgen_fast.evalmm.tasks import check_source

    check_writable(task_run.folder)
    check_source(task_run.task, task_run.data_dir)
    first = next(iter(task_run.items()), None)
    if first is None:
        raise PfgenError(f"{task_run.task}: the dataset has no items")
    prediction = empty_prediction(first, 1)
    prediction.where = f"{task_run.task}: {prediction.where}"
    check_items([prediction], task_run.metric_names())


def check_writable(folder: Path) -> None:
    """PfgenError unless `folder` exists as a folder or can be made: its nearest existing
    ancestor must be a folder that takes a file (tried with a temporary file, removed)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise PfgenError(f"{folder}: cannot write the results there: {existing} is not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".pfgen-fast-check-"):
            pass
    except OSError as error:
        raise PfgenError(
            f"{folder}: cannot write the results there: {existing}: {error.strerror or error}"
        ) from None


def data_dirs(values: list[str], tasks: list[str]) -> dict[str, Path]:
    """--data values by task: TASK=DIR for one task, DIR alone for the others."""
    given: dict[str, Path] = {}
    every: Path | None = None
    for value in values:
        task, separator, folder = value.partition("=")
        if separator and task in tasks:
            given[task] = Path(folder)
        elif separator and task and "/" not in task:
            raise UsageError(f"--data {value!r}: {task} is not among the --task given")
        else:
            every = Path(value)
    if every is not None:
        for task in tasks:
            given.setdefault(task, every)
    return given


def open_run_judge(args: argparse.Namespace, metrics: list[str]) -> LLMClient | None:
    from pfgen_fast.evalmm.outputs import JUDGE_LOG

    judged = [name for name in metrics if get_scorer(name).needs_judge]
    if not judged:
        return None
    if not args.judge_base_url or not args.judge_model:
        raise InputError(
            f"{', '.join(judged)} asks a judge: give --judge-base-url and --judge-model "
            "(or --metrics without judged ones, or --inference-only)"
        )
    check_judge_prompts(judged, args.evalmm_dir)
    return client_from_args(
        args, log_path=args.out / JUDGE_LOG, server=(args.judge_base_url, args.judge_model)
    )
