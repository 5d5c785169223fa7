"""What `mm score`, `mm evaluate` and `mm run` share: the scoring options and the judge they
ask."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pfgen_fast.common.cli_args import positive_int
from pfgen_fast.common.errors import UsageError
from pfgen_fast.common.llm import LLMClient, warn_if_cut
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.evalmm.metrics.base import JudgeErrors, Options
from pfgen_fast.evalmm.metrics.judges import JUDGE_CALLS, check_judge_prompts
from pfgen_fast.evalmm.metrics.scorers import SCORERS, get_scorer

JUDGE_MAX_TOKENS_HELP = (
    "the judge's max_tokens per reply (default: each metric's own, as llm-jp-eval-mm sets "
    "it: llm-as-a-judge and heron-bench 1024, jawildtext-board-vqa 256)"
)


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """The scorers' choices, and the judge's server as the model server's options (`mm score`,
    `mm evaluate`: the judge is the only model they ask)."""
    add_scorer_choices(parser)
    parser.add_argument(
        "--max-tokens",
        dest="judge_max_tokens",
        type=positive_int,
        metavar="N",
        help=JUDGE_MAX_TOKENS_HELP,
    )
    add_llm_arguments(parser, request_fields=("temperature", "seed", "max_tokens"))
    for action in parser._actions:
        if action.dest in ("base_url", "judge_model"):
            action.required = False
            action.help = f"{action.help} (judge metrics only)"


def add_metrics_argument(parser: argparse.ArgumentParser) -> None:
    """`--metrics` (`mm evaluate`, `mm run`): which metrics instead of each task's own."""
    parser.add_argument(
        "--metrics",
        nargs="+",
        choices=sorted(SCORERS),
        metavar="NAME",
        help="metrics to compute (default: each task's metrics in llm-jp-eval-mm)",
    )


def add_scorer_choices(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--neologdn",
        action="store_true",
        help="ROUGE-L normalises with neologdn (as llm-jp-eval-mm does where it is installed) "
        "instead of NFKC",
    )
    parser.add_argument(
        "--fix-quirks",
        action="store_true",
        help="JMMMU: the indicator list as meant (no fused entry, not growing between items)",
    )
    parser.add_argument(
        "--evalmm-dir",
        type=Path,
        help="llm-jp-eval-mm checkout holding the tasks' and judges' prompts and JMMMU's "
        "indicators (default: $EVALMM_DIR, the fetched copy, or an installed eval_mm)",
    )
    parser.add_argument(
        "--judge-errors",
        choices=[choice.value for choice in JudgeErrors],
        default=JudgeErrors.EXCLUDE.value,
        help="an item the judge could not score (its call failed, or its reply was cut or "
        "gave no verdict after its reasoning): excluded from the means and counted (default), "
        "or scored as llm-jp-eval-mm does (0, heron -1)",
    )


def options_from_args(args: argparse.Namespace, judge: LLMClient | None = None) -> Options:
    return Options(
        use_neologdn=args.neologdn,
        fix_quirks=args.fix_quirks,
        judge=judge,
        judge_errors=JudgeErrors(args.judge_errors),
        data_dir=args.evalmm_dir,
        judge_max_tokens=args.judge_max_tokens,
    )


def judge_record(
    model: str | None, base_url: str | None, max_tokens: int | None, metrics: list[str]
) -> dict[str, Any] | None:
    """What run_info.json records of the judge: its model, server and each judged metric's
    max_tokens (None when no metric asks a judge)."""
    judged = [name for name in metrics if name in JUDGE_CALLS]
    if not judged:
        return None
    return {
        "model": model,
        "base_url": base_url,
        "max_tokens": {
            name: max_tokens or JUDGE_CALLS[name].params["max_tokens"] for name in judged
        },
    }


def open_judge(args: argparse.Namespace, metrics: list[str], log_path: Path) -> LLMClient | None:
    """The judge client when one of `metrics` asks a judge; None otherwise (no key needed)."""
    judged = [name for name in metrics if get_scorer(name).needs_judge]
    if not judged:
        return None
    if not args.base_url or not args.judge_model:
        raise UsageError(f"{', '.join(judged)} asks a judge: give --base-url and --judge-model")
    check_judge_prompts(judged, args.evalmm_dir)
    return client_from_args(args, log_path=log_path)


def report_judge(
    client: LLMClient | None,
    judge_errors: JudgeErrors,
    log_path: Path,
    unjudged: int,
    max_tokens_option: str = "--max-tokens",
) -> int:
    """Prints the judge's counts (and its replies cut at max_tokens, with the option that
    raises it); 1 (an error named on stderr) when items were left without a verdict
    (`unjudged`: their reasons are in the outputs), whatever `--judge-errors` made of them,
    else 0."""
    if client is None:
        return 0
    stats = client.stats
    print(
        f"judge: {stats.calls} calls, {stats.cached} cached, {stats.failed} failed",
        file=sys.stderr,
    )
    warn_if_cut(stats, "judge ", max_tokens_option)
    if not unjudged:
        return 0
    treatment = (
        "scored as llm-jp-eval-mm does (0, heron -1)"
        if judge_errors is JudgeErrors.ZERO
        else "left out of the means (a metric with no item judged has no score)"
    )
    print(
        f"error: {unjudged} items got no verdict from the judge (each line's `judge_errors` "
        f"says why; {log_path} has the replies); they are {treatment}",
        file=sys.stderr,
    )
    return 1
