"""`python -m pfgen_fast lctg ACTION`: fetch and verify LCTG Bench's files, generate with any
OpenAI-compatible server, evaluate generations exactly as the benchmark scores them, and put
several evaluations side by side."""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.cli_args import add_table_argument, positive_int
from pfgen_fast.common.errors import DataError
from pfgen_fast.common.llm import LLMClient, add_llm_arguments, client_from_args
from pfgen_fast.lctg.data import (
    TASKS,
    default_url,
    fetch_data,
    load_prompts,
    resolve_data_dir,
    verify_data,
)

DESCRIPTION = "LCTG Bench: controllability of generation (CyberAgent)"
DEFAULT_SEED = 0
# The benchmark's generator's limit on new tokens (its utils/output_tokens.py).
MAX_NEW_TOKENS = 4096


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    add_data_arguments(actions)
    add_generate_arguments(actions)
    add_eval_arguments(actions)
    add_leaderboard_arguments(actions)


def add_data_arguments(actions: Any) -> None:
    data = actions.add_parser("data", help="fetch LCTG Bench's files or verify a checkout")
    steps = data.add_subparsers(dest="step", required=True, metavar="STEP")
    fetch = steps.add_parser("fetch", help="download the pinned files into the user cache")
    fetch.add_argument("--ref", help="git ref of CyberAgentAILab/LCTG-Bench (default: pinned)")
    fetch.add_argument("--url", help="archive URL (a .tar.gz of the repository)")
    fetch.add_argument("--dest", help="directory to write (default: the user cache)")
    verify = steps.add_parser("verify", help="check a checkout against the manifest")
    verify.add_argument("dir", nargs="?", help="the checkout (default: the fetched copy)")


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument(
        "--data", help="LCTG Bench checkout (default: $LCTG_BENCH_DIR or the fetched copy)"
    )


def add_generate_arguments(actions: Any) -> None:
    generate = actions.add_parser(
        "generate", help="generate a task's texts with a model (generated_result_v1.jsonl)"
    )
    add_task_arguments(generate)
    add_llm_arguments(generate, model_flag="--model", model_help="the model to generate with")
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


def add_eval_arguments(actions: Any) -> None:
    evaluate = actions.add_parser(
        "eval", help="score generations: remover, quality judge, checks, the benchmark's table"
    )
    add_task_arguments(evaluate)
    add_llm_arguments(evaluate)
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


def add_leaderboard_arguments(actions: Any) -> None:
    board = actions.add_parser(
        "leaderboard", help="several evaluations side by side, and a figure per task"
    )
    board.add_argument("scores", nargs="+", help="lctg-TASK-scores.json files or globs")
    add_table_argument(board, "the table", old_name="--out")
    board.add_argument("--plots", help="folder for one figure per task (PNG and SVG)")


def run(args: argparse.Namespace) -> int:
    if args.action == "data":
        return run_data(args)
    if args.action == "generate":
        return run_generate(args)
    if args.action == "eval":
        return run_eval(args)
    from pfgen_fast.lctg.leaderboard import run_leaderboard

    return run_leaderboard(args.scores, args.table, args.plots)


def run_data(args: argparse.Namespace) -> int:
    if args.step == "fetch":
        url = args.url or default_url(args.ref)
        destination = fetch_data(url, Path(args.dest) if args.dest else None)
        print(f"fetched {url} into {destination} (verified)")
        return 0
    directory = resolve_data_dir(args.dir)
    problems = verify_data(directory)
    if problems:
        raise DataError(f"{directory} does not match LCTG Bench:\n  " + "\n  ".join(problems))
    print(f"{directory}: every file matches the manifest")
    return 0


def show_progress(stage: str, done: int, total: int) -> None:
    """A line on a terminal's stderr, rewritten as replies come in."""
    if sys.stderr.isatty():
        end = "\n" if done == total else ""
        print(f"\r{stage}: {done}/{total}", end=end, file=sys.stderr, flush=True)


def report_calls(client: LLMClient, what: str) -> None:
    stats = client.stats
    print(
        f"{what}: {stats.calls} calls, {stats.cached} replies from the cache, "
        f"{stats.prompt_tokens} prompt and {stats.completion_tokens} completion tokens",
        file=sys.stderr,
    )


def run_generate(args: argparse.Namespace) -> int:
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
            progress=partial(show_progress, "generation"),
        )
        report_calls(client, "generation")
    print(f"wrote {path}")
    return 0


def run_eval(args: argparse.Namespace) -> int:
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
        items = run_evaluation(client, templates, rows, prompts, params, show_progress)
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
