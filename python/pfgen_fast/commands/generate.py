"""`generate`: trials for a model served by an OpenAI-compatible server."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pfgen_fast.commands.prompt import unescape
from pfgen_fast.data import resolve_data_dir
from pfgen_fast.generation import Settings, generate
from pfgen_fast.prompts import MODES, load_examples


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model name sent to the server")
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--backend", choices=["openai"], default="openai")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000/v1", help="server URL")
    parser.add_argument("--num-trials", type=int, default=100)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-p", type=float, default=0.98)
    parser.add_argument("--max-tokens", type=int, default=300)
    parser.add_argument("--num-examples", type=int, default=20)
    parser.add_argument("--seed", default="", help="seed string of the run (default: empty)")
    parser.add_argument("--prefix", default="", help="text before every prompt; \\n etc. allowed")
    parser.add_argument("--concurrency", type=int, default=8, help="requests at once")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument("--max-retries", type=int, default=4, help="retries of a failed request")
    parser.add_argument("--data", help="directory holding questions.jsonl (default: ./data)")
    parser.add_argument("--out", default="result", help="results folder (default: result)")


def run(args: argparse.Namespace) -> int:
    examples = load_examples(resolve_data_dir(args.data) / "questions.jsonl")
    settings = Settings(
        model=args.model,
        mode=args.mode,
        base_url=args.base_url,
        num_trials=args.num_trials,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        num_examples=args.num_examples,
        seed=args.seed,
        prefix=unescape(args.prefix),
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
    )
    console = Console(stderr=True, soft_wrap=True)
    progress = Progress(
        TextColumn("generating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("trials  {task.fields[answers]} answers"),
        TimeElapsedColumn(),
        console=console,
    )
    answers = 0

    def on_answer() -> None:
        nonlocal answers
        answers += 1
        progress.update(task, answers=answers)

    def on_trial() -> None:
        progress.update(task, advance=1)

    with progress:
        task = progress.add_task("generate", total=settings.num_trials, answers=0)
        run_dir = generate(settings, examples, Path(args.out), on_answer, on_trial)
    console.print(f"wrote {run_dir}/trials.jsonl.xz")
    return 0
