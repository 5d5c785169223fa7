"""`lctg generate`: a task's texts from a model, as the benchmark's generator makes them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pfgen_fast.common.cli_args import (
    fraction,
    non_negative_float,
    whole_number,
)
from pfgen_fast.common.files import check_writable_folder
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.lctg.aggregate import ITERATIONS
from pfgen_fast.lctg.commands.shared import (
    MAX_NEW_TOKENS,
    add_request_arguments,
    add_task_arguments,
    report_calls,
)
from pfgen_fast.lctg.data import load_prompts, resolve_data_dir


def generations_count(text: str) -> int:
    """`--generations`: at least the three generations per prompt and constraint that the
    benchmark scores (its scripts read iterations 0-2; `lctg eval` takes the first three)."""
    return whole_number(text, ITERATIONS)


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
        "--generations",
        type=generations_count,
        default=ITERATIONS,
        help=f"per prompt and constraint, at least {ITERATIONS} (default: {ITERATIONS}; "
        f"the benchmark scores the first {ITERATIONS})",
    )
    generate.add_argument("--temperature", type=non_negative_float, help="(default: the server's)")
    generate.add_argument("--top-p", type=fraction, help="(default: the server's)")
    generate.add_argument(
        "--no-system-prompt",
        action="store_true",
        help="send the prompt alone (default: with the benchmark's system prompt)",
    )
    add_request_arguments(
        generate,
        seed_help="generation n gets SEED + n (default: 0)",
        max_tokens_help=f"new tokens at most (default: {MAX_NEW_TOKENS})",
    )


def settings_record(args: argparse.Namespace, params: dict[str, Any]) -> dict[str, Any]:
    """The run's settings, written beside the generations."""
    return {
        "task": args.task,
        "model": args.model,
        "base_url": args.base_url,
        "generations": args.generations,
        **params,
        "seed": args.seed,
        "system_prompt": not args.no_system_prompt,
        "extra_body": args.extra_body,
        "strip_reasoning": args.strip_reasoning,
    }


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.lctg.generate import generate
    from pfgen_fast.lctg.outputs import GENERATION_REPLIES_NAME, write_settings
    from pfgen_fast.lctg.templates import load_templates

    data_dir = resolve_data_dir(args.data)
    prompts = list(load_prompts(data_dir, args.task).values())
    system = None if args.no_system_prompt else load_templates(data_dir, args.task).system_prompt
    params = {"temperature": args.temperature, "top_p": args.top_p, "max_tokens": args.max_tokens}
    params = {k: v for k, v in params.items() if v is not None}
    out = Path(args.out)
    check_writable_folder(out)
    with client_from_args(args, log_path=out / GENERATION_REPLIES_NAME) as client:
        path, failures = generate(
            client,
            prompts,
            model=args.model,
            system_prompt=system,
            generations=args.generations,
            params=params,
            seed=args.seed,
            out=out,
            strip=args.strip_reasoning,
        )
        report_calls(client, "generation")
    settings = settings_record(args, params)
    write_settings(out, settings)
    print(f"wrote {path}")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    if failures:
        print(
            f"error: {len(failures)} generations failed; their prompts are left out of "
            f"{path.name} (run the command again to ask for those alone)",
            file=sys.stderr,
        )
    return 1 if failures else 0
