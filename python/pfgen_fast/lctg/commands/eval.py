"""`lctg eval`: generations scored exactly as the benchmark scores them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.files import check_writable_folder
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.lctg.commands.shared import (
    MAX_NEW_TOKENS,
    add_request_arguments,
    add_task_arguments,
    report_calls,
)
from pfgen_fast.lctg.data import load_prompts, resolve_data_dir


def add_arguments(evaluate: argparse.ArgumentParser) -> None:
    add_task_arguments(evaluate)
    add_llm_arguments(evaluate, request_fields=("temperature", "seed", "max_tokens"))
    evaluate.add_argument("generations", help="generated_result_v1.jsonl (the generator's format)")
    evaluate.add_argument("--out", help="output folder (default: the generations' folder)")
    evaluate.add_argument("--model", help="model name (default: the rows' model field)")
    evaluate.add_argument("--json", action="store_true", help="print the scores as JSON")
    evaluate.add_argument(
        "--original-sampling",
        action="store_true",
        help="send neither temperature nor seed, as the benchmark's scripts do",
    )
    add_request_arguments(
        evaluate,
        seed_help="seed sent with temperature 0 to the remover and judge (default: 0)",
        max_tokens_help="new tokens per remover or judge reply at most (default: "
        f"{MAX_NEW_TOKENS}, the benchmark generator's limit; its scripts send none)",
    )


def judge_record(args: argparse.Namespace, sampling: str) -> dict[str, Any]:
    """How the remover and the judge were asked, as the scores file records it."""
    return {
        "base_url": args.base_url,
        "model": args.judge_model,
        "sampling": sampling,
        "max_tokens": args.max_tokens,
        "extra_body": args.extra_body,
        "strip_reasoning": args.strip_reasoning,
    }


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.lctg.evaluate import failures, remover_refusals, run_evaluation, scores_of
    from pfgen_fast.lctg.outputs import (
        load_generations,
        model_name,
        output_paths,
        scores_document,
        write_outputs,
    )
    from pfgen_fast.lctg.report import notes, print_scores
    from pfgen_fast.lctg.templates import load_templates

    data_dir = resolve_data_dir(args.data)
    prompts = load_prompts(data_dir, args.task)
    templates = load_templates(data_dir, args.task)
    generations = Path(args.generations)
    rows = load_generations(generations, prompts, args.task)
    model = model_name(rows, args.model)
    params: dict[str, Any] = {} if args.original_sampling else {"temperature": 0, "seed": args.seed}
    params["max_tokens"] = args.max_tokens
    sampling = f"temperature 0, seed {args.seed}"
    if args.original_sampling:
        sampling = "none sent (as the benchmark)"
    out = Path(args.out) if args.out else generations.parent
    check_writable_folder(out)
    paths = output_paths(out, args.task)
    with client_from_args(args, log_path=paths.replies, accept_400=True) as client:
        items = run_evaluation(
            client,
            templates,
            rows,
            prompts,
            params,
            strip=args.strip_reasoning,
        )
        report_calls(client, f"remover and judge ({sampling})")
    failed = failures(items)
    refused = remover_refusals(items)
    document = scores_document(
        args.task,
        model,
        scores_of(items),
        judge_record(args, sampling),
        (len(rows), len(prompts)),
        (len(items), failed),
        refused,
    )
    write_outputs(paths, items, document)
    for note in notes(document):
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        keep = {key: document[key] for key in ("task", "model", "scores")}
        sys.stdout.write(orjson.dumps(keep).decode() + "\n")
    else:
        print_scores(document)
        print(f"wrote {paths.scores_json}, {paths.scores_csv.name}, {paths.analysis.name}")
    if failed:
        reasons = "; ".join(f"{n} × {why}" for why, n in document["failure_reasons"].items())
        print(
            f"error: {len(failed)} of {len(items)} generations failed ({reasons}); they are "
            f'left out of the rates (the "failure" field of {paths.analysis.name})',
            file=sys.stderr,
        )
    if refused:
        reasons = "; ".join(
            f"{n} × {why}" for why, n in document["remover_refusal_reasons"].items()
        )
        print(
            f"error: {len(refused)} of {len(items)} generations were refused by the remover's "
            f'server ({reasons}); as in the benchmark, each is scored as "Invalid Error", '
            f'which fails all four constraints ("remover_refused" in {paths.scores_json.name})',
            file=sys.stderr,
        )
    return 1 if failed or refused else 0
