"""`python -m pfgen_fast mm ACTION`: llm-jp-eval-mm's scorers — score a JSON lines file with one
metric, re-score a result directory of its `evaluate` (with a leaderboard), fetch and verify
its judge prompt files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.common.llm import LLMClient, add_llm_arguments, client_from_args
from pfgen_fast.evalmm.scorers import SCORERS, Options, fields_help, get_scorer
from pfgen_fast.evalmm.scoring import read_items, score_items

DESCRIPTION = "llm-jp-eval-mm's scorers (Japanese vision-language tasks), exact and fast"
JUDGE_ERRORS = ("exclude", "zero")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    score = actions.add_parser(
        "score",
        help="score a JSON lines file (ref, pred, document fields) with one metric",
        epilog=fields_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument(
        "file", type=Path, metavar="FILE", help="JSON lines: ref, pred and the metric's fields"
    )
    score.add_argument(
        "--metric",
        required=True,
        choices=sorted(SCORERS),
        metavar="NAME",
        help=f"one of: {', '.join(sorted(SCORERS))}",
    )
    score.add_argument("--json", action="store_true", help="print the aggregate as JSON")
    score.add_argument("-o", "--output", type=Path, help="write the scored lines here")
    score.add_argument(
        "--judge-log",
        type=Path,
        help="judge metrics: where the raw replies go, one JSON line each "
        "(default: FILE's name with .judge-replies.jsonl)",
    )
    add_scoring_options(score)
    evaluate = actions.add_parser(
        "evaluate",
        help="re-score an llm-jp-eval-mm result directory (<task>/<model>/prediction.jsonl) "
        "and show a leaderboard",
    )
    evaluate.add_argument("result_dir", type=Path, metavar="RESULT_DIR")
    evaluate.add_argument(
        "--metrics", nargs="+", choices=sorted(SCORERS), metavar="NAME",
        help="metrics to compute (default: each task's metrics in llm-jp-eval-mm)",
    )  # fmt: skip
    evaluate.add_argument(
        "--table", type=Path, help="also write the leaderboard (.csv/.parquet/.json)"
    )
    evaluate.add_argument(
        "--docs",
        action="append",
        default=[],
        metavar="TASK=FILE",
        help="a task's documents (JSON lines with question_id and the dataset's fields, e.g. "
        "answer_type, options, category), for metrics that need more than prediction.jsonl",
    )
    add_scoring_options(evaluate)
    leaderboard = actions.add_parser(
        "leaderboard", help="the leaderboard of a result directory's evaluation.jsonl files"
    )
    leaderboard.add_argument("result_dir", type=Path, metavar="RESULT_DIR")
    leaderboard.add_argument("--table", type=Path, help="also write it (.csv/.parquet/.json)")
    add_data_arguments(actions)


def add_data_arguments(actions: Any) -> None:
    data = actions.add_parser("data", help="fetch llm-jp-eval-mm's prompt files or verify them")
    steps = data.add_subparsers(dest="step", required=True, metavar="STEP")
    fetch = steps.add_parser("fetch", help="download the pinned files into the user cache")
    fetch.add_argument("--ref", help="git ref of llm-jp/llm-jp-eval-mm (default: pinned)")
    fetch.add_argument("--url", help="archive URL (a .tar.gz of the repository)")
    fetch.add_argument("--dest", type=Path, help="directory to write (default: the user cache)")
    verify = steps.add_parser("verify", help="check a checkout against the manifest")
    verify.add_argument("dir", nargs="?", type=Path, help="the checkout (default: fetched copy)")


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
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
        help="llm-jp-eval-mm checkout holding the judge prompts and JMMMU's indicators "
        "(default: $EVALMM_DIR, the fetched copy, or an installed eval_mm)",
    )
    parser.add_argument(
        "--judge-errors",
        choices=JUDGE_ERRORS,
        default="exclude",
        help="a failed judge call: excluded from the means and counted (default), or scored "
        "as llm-jp-eval-mm does (0, heron -1)",
    )
    add_llm_arguments(parser)
    for action in parser._actions:
        if action.dest in ("base_url", "judge_model"):
            action.required = False
            action.help = f"{action.help} (judge metrics only)"


def options_from_args(args: argparse.Namespace, judge: LLMClient | None = None) -> Options:
    return Options(
        use_neologdn=args.neologdn,
        fix_quirks=args.fix_quirks,
        judge=judge,
        judge_errors=args.judge_errors,
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


def report_judge(client: LLMClient | None) -> None:
    if client is not None:
        stats = client.stats
        print(
            f"judge: {stats.calls} calls, {stats.cached} cached, {stats.failed} failed",
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> int:
    if args.action == "score":
        return run_score(args)
    if args.action == "evaluate":
        return run_evaluate(args)
    if args.action == "leaderboard":
        return run_leaderboard(args)
    if args.action == "data":
        return run_data(args)
    raise PfgenError(f"unknown action {args.action!r}")


def run_score(args: argparse.Namespace) -> int:
    scorer = get_scorer(args.metric)
    items = read_items(args.file, scorer)
    log_path = args.judge_log or args.file.with_name(f"{args.file.stem}.judge-replies.jsonl")
    judge = open_judge(args, [args.metric], log_path)
    try:
        options = options_from_args(args, judge)
        scores, aggregate = score_items(
            scorer, items.refs, items.preds, items.lines, options, items.wheres
        )
    finally:
        if judge is not None:
            judge.close()
    report_judge(judge)
    lines = b"".join(
        dumps_line({**line, "score": score})
        for line, score in zip(items.lines, scores, strict=True)
    )
    if args.output is not None:
        write_atomically(args.output, lines)
    if args.json:
        print_json(aggregate)
    elif args.output is None:
        sys.stdout.buffer.write(lines)
        sys.stdout.buffer.flush()
    return 0


def print_json(value: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.buffer.flush()


def run_evaluate(args: argparse.Namespace) -> int:
    """Scores every run; a run that cannot be scored is reported (one line) and skipped."""
    from pfgen_fast.evalmm import evaluate

    docs = docs_by_task(args.docs)
    folders = evaluate.find_runs(args.result_dir)
    runs, failed = [], 0
    for folder in folders:
        try:
            run = evaluate.read_run(folder)
            runs.append((run, evaluate.metrics_of(run, args.metrics)))
        except PfgenError as error:
            print(f"error: {error}", file=sys.stderr)
            failed += 1
    metrics = sorted({name for _, names in runs for name in names})
    judge = open_judge(args, metrics, args.result_dir / evaluate.JUDGE_LOG)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        options = options_from_args(args, judge)
        for run, names in runs:
            try:
                evaluation = evaluate.score_run(run, names, options, docs.get(run.task))
            except PfgenError as error:
                print(f"error: {error}", file=sys.stderr)
                failed += 1
                continue
            evaluate.write_run(run, evaluation)
            results[(run.task, run.model)] = evaluation
    finally:
        if judge is not None:
            judge.close()
    report_judge(judge)
    show_leaderboard(results, args.table)
    return 1 if failed else 0


def docs_by_task(values: list[str]) -> dict[str, Path]:
    docs = {}
    for value in values:
        task, separator, path = value.partition("=")
        if not separator or not task or not path:
            raise PfgenError(f"--docs {value!r}: expected TASK=FILE")
        docs[task] = Path(path)
    return docs


def run_leaderboard(args: argparse.Namespace) -> int:
    from pfgen_fast.evalmm import leaderboard
    from pfgen_fast.evalmm.evaluate import EVALUATION

    results = {}
    for folder in sorted(args.result_dir.glob(f"*/*/{EVALUATION}")):
        results[(folder.parent.parent.name, folder.parent.name)] = leaderboard.read_evaluation(
            folder.parent
        )
    if not results:
        raise PfgenError(f"{args.result_dir}: no <task>/<model>/{EVALUATION} found")
    show_leaderboard(results, args.table)
    return 0


def show_leaderboard(results: dict[tuple[str, str], dict[str, Any]], table: Path | None) -> None:
    from pfgen_fast.common.tables import print_table, write_table
    from pfgen_fast.evalmm.leaderboard import leaderboard_rows

    if not results:
        return
    columns, rows = leaderboard_rows(results)
    shown = [[row[0], *(None if v is None else round(v, 4) for v in row[1:])] for row in rows]
    print_table("llm-jp-eval-mm", columns, shown)
    if table is not None:
        write_table(table, columns, rows)


def run_data(args: argparse.Namespace) -> int:
    from pfgen_fast.evalmm import data

    if args.step == "fetch":
        destination = data.fetch_data(args.url or data.default_url(args.ref), args.dest)
        print(f"fetched and verified: {destination}")
        return 0
    directory = args.dir or data.default_data_dir()
    problems = data.verify_data(directory)
    if problems:
        raise PfgenError(f"{directory} does not match the manifest:\n  " + "\n  ".join(problems))
    print(f"verified: {directory}")
    return 0
