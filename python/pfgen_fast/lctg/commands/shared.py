"""What `lctg generate` and `lctg eval` share: the task arguments, the options of every
request, and the count of calls."""

from __future__ import annotations

import argparse
import sys

from pfgen_fast.common.cli_args import integer, positive_int
from pfgen_fast.common.llm import LLMClient, warn_if_cut
from pfgen_fast.common.llm_options import add_strip_reasoning_argument
from pfgen_fast.lctg.data import TASKS

DEFAULT_SEED = 0
# The benchmark's generator's limit on new tokens (its utils/output_tokens.py): `generate`'s
# default, and the bound of the remover's and the judge's replies (its scripts send none).
MAX_NEW_TOKENS = 4096


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument(
        "--data", help="LCTG Bench checkout (default: $LCTG_BENCH_DIR or the fetched copy)"
    )


def add_request_arguments(
    parser: argparse.ArgumentParser, *, seed_help: str, max_tokens_help: str
) -> None:
    """`--seed` and `--max-tokens` (each command words their help), and `--strip-reasoning`."""
    parser.add_argument("--seed", type=integer, default=DEFAULT_SEED, help=seed_help)
    parser.add_argument(
        "--max-tokens", type=positive_int, default=MAX_NEW_TOKENS, help=max_tokens_help
    )
    add_strip_reasoning_argument(parser)


def report_calls(client: LLMClient, what: str) -> None:
    stats = client.stats
    print(
        f"{what}: {stats.calls} calls, {stats.cached} replies from the cache, "
        f"{stats.prompt_tokens} prompt and {stats.completion_tokens} completion tokens",
        file=sys.stderr,
    )
    warn_if_cut(stats)
