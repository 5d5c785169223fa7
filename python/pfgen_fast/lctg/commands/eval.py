"""`lctg eval`: generations scored exactly as the benchmark scores them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.lctg.commands.shared import (
    DEFAULT_SEED,
    add_task_arguments,
    report_calls,
)
from pfgen_fast.lctg.data import load_prompts, resolve_data_dir


def add_arguments(evaluate: argparse.ArgumentParser) -> None:
    add_task_arguments(evaluate)
    add_llm_arguments(evaluate, request_fields=("temperature", "seed"))
    evaluate.add_argument("generations", help="generated_result_v1.jsonl (the generator's format)")
    evaluate.add_argument("--out", help="output folder (default: the generations' folder)")
    evaluate.add_argument("--model", help="model name (default: the rows' model field)")
    evaluate.add_argument("--json", action="store_true", help="print the scores as JSON")
    evaluate.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="seed sent with temperature 0 to the remover and judge (default: 0)",
    )
    evaluate.add_argument(
        "--original-sampling",
        action="store_true",
        help="send neither temperature nor seed, as the benchmark's scripts do",
    )


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.lctg.evaluate import run_evaluation, scores_of
    from pfgen_fast.lctg.generations import load_generations, model_name
    from pfgen_fast.lctg.report import (
        notes,
        output_paths,
        print_scores,
        scores_document,
        write_outputs,
    )
    from pfgen_fast.lctg.templates import load_templates

    data_dir = resolve_data_dir(args.data)
    prompts = load_prompts(data_dir, args.task)
    templates = load_templates(data_dir, args.task)
    generations = Path(args.generations)
    rows = load_generations(generations, prompts, args.task)
    model = model_name(rows, args.model)
    params: dict[str, Any] = {} if args.original_sampling else {"temperature": 0, "seed": args.seed}
    sampling = f"temperature 0, seed {args.seed}"
    if args.original_sampling:
        sampling = "none sent (as the benchmark)"
    paths = output_paths(Path(args.out) if args.out else generations.parent, args.task)
    with client_from_args(args, log_path=paths.replies, accept_400=True) as client:
        items = run_evaluation(client, templates, rows, prompts, params)
        report_calls(client, f"remover and judge ({sampling})")
    judge = {"base_url": args.base_url, "model": args.judge_model, "sampling": sampling}
    document = scores_document(args.task, model, scores_of(items), judge, (len(rows), len(prompts)))
    write_outputs(paths, items, document)
    for note in notes(document):
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        keep = {key: document[key] for key in ("task", "model", "scores")}
        sys.stdout.write(orjson.dumps(keep).decode() + "\n")
    else:
        print_scores(document)
        print(f"wrote {paths.scores_json}, {paths.scores_csv.name}, {paths.analysis.name}")
    return 0
