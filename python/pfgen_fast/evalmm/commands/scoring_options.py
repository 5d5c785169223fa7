"""What `mm score`, `mm evaluate` and `mm run` share: the scoring options and the judge they
ask."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm import LLMClient
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.evalmm.metrics.judges import JudgeErrors
from pfgen_fast.evalmm.metrics.scorers import Options, get_scorer


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """The scorers' choices, and the judge's server as the model server's options (`mm score`,
    `mm evaluate`: the judge is the only model they ask)."""
    add_scorer_choices(parser)
    add_llm_arguments(parser, request_fields=("temperature", "seed", "max_tokens"))
    for action in parser._actions:
        if action.dest in ("base_url", "judge_model"):
            action.required = False
            action.help = f"{action.help} (judge metrics only)"


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
        help="a failed judge call: excluded from the means and counted (default), or scored "
        "as llm-jp-eval-mm does (0, heron -1)",
    )


def options_from_args(args: argparse.Namespace, judge: LLMClient | None = None) -> Options:
    return Options(
        use_neologdn=args.neologdn,
        fix_quirks=args.fix_quirks,
        judge=judge,
        judge_errors=JudgeErrors(args.judge_errors),
        data_dir=args.evalmm_dir,
    )


def open_judge(args: argparse.Namespace, metrics: list[str], log_path: Path) -> LLMClient | None:
    """The judge client when one of `metrics` asks a judge; None otherwise (no key needed)."""
    judged = [name for name in metrics if get_scorer(name).needs_judge]
    if not judged:
        return None
    if not args.base_url or not args.judge_model:
        raise PfgenError(f"{', '.join(judged)} asks a judge: give --base-url and --judge-model")
    return client_from_args(args, log_path=log_path)


def report_judge(client: LLMClient | None, judge_errors: JudgeErrors, log_path: Path) -> int:
    """Prints the judge's counts; 1 (an error named on stderr) when a call failed for good,
    whatever `--judge-errors` made of it, else 0."""
    if client is None:
        return 0
    stats = client.stats
    print(
        f"judge: {stats.calls} calls, {stats.cached} cached, {stats.failed} failed",
        file=sys.stderr,
    )
    if not stats.failed:
        return 0
    treatment = (
        "scored as llm-jp-eval-mm does (0, heron -1)"
        if judge_errors is JudgeErrors.ZERO
        else "left out of the means (a metric with no item judged has no score)"
    )
    print(
        f"error: {stats.failed} judge calls failed for good ({log_path} has each error); "
        f"their items are {treatment}",
        file=sys.stderr,
    )
    return 1
