"""`generate`: trials for a model served by an OpenAI-compatible server, as pfgen-bench's
`run-openai.py` makes them (docs/generate.md), packed for `eval`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cli_args import (
    add_data_argument,
    fraction_or_none,
    non_negative_float,
    non_negative_int,
    positive_int,
)
from pfgen_fast.common.llm_options import (
    add_llm_arguments,
    add_strip_reasoning_argument,
    client_from_args,
)
from pfgen_fast.common.progress import progress_from_args
from pfgen_fast.pfgen.data import DATA_DEFAULT, resolve_data_dir
from pfgen_fast.pfgen.generate import (
    ANSWER_ATTEMPTS,
    ENGINE,
    GIVEN_UP_ANSWER,
    Clients,
    Persistence,
    RunParameters,
    generate,
)
from pfgen_fast.pfgen.prompts import MODES, load_examples, unescape_prefix

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"  # vLLM's OpenAI-compatible server


# Fields of the request and keys of config.json that the command sets itself: --extra-body may
# set none of them.
OWN_FIELDS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "engine",
    "mode",
    "num_examples",
    "enable_thinking",
    "prefix",
    "seed",
    "strip_reasoning",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_llm_arguments(
        parser,
        request_fields=OWN_FIELDS,
        model_flag="--model",
        model_help="model name sent to the server",
        base_url_default=DEFAULT_BASE_URL,
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="qa",
        help="completion: completions endpoint; qa: the prompt as one chat message; "
        "chat: system and user chat messages (default: qa)",
    )
    parser.add_argument(
        "--num-trials",
        type=positive_int,
        default=10,
        help="trials (default: 10; the paper's protocol: 100, with --temperature 1.0)",
    )
    parser.add_argument(
        "--temperature",
        type=non_negative_float,
        default=0.7,
        help="default: 0.7 (the published runs: 1.0 for open models, 0.0 for API models)",
    )
    parser.add_argument(
        "--top-p",
        type=fraction_or_none,
        default=0.98,
        help="a number, or none to leave it to the server (default: 0.98)",
    )
    parser.add_argument("--max-tokens", type=positive_int, default=300, help="default: 300")
    parser.add_argument(
        "--disable-thinking",
        action="store_true",
        help='"/no_think\\n" before each prompt (Qwen3\'s switch; the system prompt in chat '
        'mode), recorded as "enable_thinking": false',
    )
    parser.add_argument(
        "--extra-eos-tokens",
        nargs="+",
        metavar="S",
        help="more stop strings sent with each request (not recorded in config.json)",
    )
    add_strip_reasoning_argument(parser)
    parser.add_argument(
        "--num-examples", type=non_negative_int, default=20, help="few-shot examples (default: 20)"
    )
    parser.add_argument("--seed", default="", help="seed string of the run (default: empty)")
    parser.add_argument("--prefix", default="", help="text before every prompt; \\n etc. allowed")
    parser.add_argument(
        "--num-retries",
        type=positive_int,
        default=ANSWER_ATTEMPTS,
        metavar="N",
        help="asks of a question before its answer is given up, as the runners' rounds "
        f"(default: {ANSWER_ATTEMPTS}; not recorded in config.json)",
    )
    parser.add_argument(
        "--ignore-failure",
        action="store_true",
        help=f'write an answer given up as {GIVEN_UP_ANSWER!r} with "generated": false '
        "(eval leaves it out) and keep its trial; without it, the trial is given up "
        "(not recorded in config.json)",
    )
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument("--out", default="result", help="results folder (default: result)")


def run(args: argparse.Namespace) -> int:
    unescape_prefix(args.prefix)  # a bad escape is an error before any request
    clients = Clients(
        client_from_args(args, log_path=None, show_progress=False),
        client_from_args(args, log_path=None, show_progress=False, cache=False),
    )
    examples = load_examples(resolve_data_dir(args.data) / "questions.jsonl")
    parameters = RunParameters(
        engine=ENGINE,
        model=args.model,
        mode=args.mode,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        num_examples=args.num_examples,
        prefix=args.prefix,
        seed=args.seed,
        enable_thinking=not args.disable_thinking,
        strip_reasoning=args.strip_reasoning,
        extra_body=args.extra_body,
        extra_eos_tokens=tuple(args.extra_eos_tokens or ()),
    )
    console = Console(stderr=True, soft_wrap=True)
    console.print(f"run directory: {escape(str(parameters.run_directory(Path(args.out))))}")
    total = args.num_trials * len(examples)
    answers = progress_from_args(args).task("answers", total)

    def on_answer() -> None:
        answers.advance()

    trials_done = 0

    def on_trial() -> None:
        nonlocal trials_done
        trials_done += 1
        # A trial found already finished counts all its answers at once.
        missing = trials_done * len(examples) - answers.done
        if missing > 0:
            answers.advance(missing, cached=True)

    try:
        with clients.cached, clients.fresh:
            run_dir = generate(
                parameters,
                clients,
                examples,
                Path(args.out),
                args.num_trials,
                on_answer,
                on_trial,
                warn=lambda line: console.print(f"warning: {escape(line)}"),
                persistence=Persistence(args.num_retries, args.ignore_failure),
            )
    finally:
        answers.close()
    console.print(f"wrote {escape(str(run_dir / 'trials.jsonl.xz'))}")
    return 0
