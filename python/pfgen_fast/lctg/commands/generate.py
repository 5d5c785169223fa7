"""`lctg generate`: a task's texts from a model, as the benchmark's generator makes them."""

from __future__ import annotations

import argparse
from pathlib import Path

from pfgen_fast.common.cli_args import positive_int
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.lctg.commands.shared import (
    DEFAULT_SEED,
    add_task_arguments,
    report_calls,
)
from pfgen_fast.lctg.data import load_prompts, resolve_data_dir

# The benchmark's generator's limit on new tokens (its utils/output_tokens.py).
MAX_NEW_TOKENS = 4096


def add_arguments(generate: argparse.ArgumentParser) -> None:
    add_task_arguments(generate)
    add_llm_arguments(
        generate,
        request_fields=("temperature", "top_p", "max_tokens", "seed"),
        model_flag="--model",
        model_help="the model to generate with",
    )
    generate.add_argument("--out", required=True, help="folder for generated_result_v1.jsonl")
    generate.add_argument(
        "--generations", type=positive_int, default=3, help="per prompt (default: 3)"
    )
    generate.add_argument("--temperature", type=float, help="(default: the server's)")
    generate.add_argument("--top-p", type=float, help="(default: the server's)")
    generate.add_argument(
        "--max-tokens",
        type=positive_int,
        default=MAX_NEW_TOKENS,
        help=f"new tokens at most (default: {MAX_NEW_TOKENS})",
    )
    generate.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="generation n gets SEED + n (default: 0)"
    )
    generate.add_argument(
        "--no-system-prompt",
        action="store_true",
        help="send the prompt alone (default: with the benchmark's system prompt)",
    )


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.lctg.generate import generate
    from pfgen_fast.lctg.templates import load_templates

    data_dir = resolve_data_dir(args.data)
    prompts = list(load_prompts(data_dir, args.task).values())
    system = None if args.no_system_prompt else load_templates(data_dir, args.task).system_prompt
    params = {"temperature": args.temperature, "top_p": args.top_p, "max_tokens": args.max_tokens}
    out = Path(args.out)
    with client_from_args(args, log_path=out / "generation-replies.jsonl") as client:
        path = generate(
            client,
            prompts,
            model=args.model,
            system_prompt=system,
            generations=args.generations,
            params={k: v for k, v in params.items() if v is not None},
            seed=args.seed,
            out=out,
        )
        report_calls(client, "generation")
    print(f"wrote {path}")
    return 0
