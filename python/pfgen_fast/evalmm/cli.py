"""`python -m pfgen_fast mm ACTION`: llm-jp-eval-mm's scorers — score a JSON lines file with one
metric, re-score a result directory of its `evaluate` (with a leaderboard), fetch and verify
its judge prompt files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.cli_args import positive_float, positive_int
from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.common.llm import DEFAULT, LLMClient, add_llm_arguments, client_from_args
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
    leaderboard.add_argument(
        "--format", choices=("markdown", "latex", "csv", "json"),
        help="print make_leaderboard.py's table instead: display names, percentages, cluster "
        "deviation scores, the best bold and the second underlined (json: its leaderboard.json)",
    )  # fmt: skip
    leaderboard.add_argument(
        "--plot", type=Path, metavar="FILE",
        help="write the tasks' Spearman correlation heatmap and clustering dendrogram "
        "(PNG, SVG or PDF by the suffix; needs matplotlib)",
    )  # fmt: skip
    listing = actions.add_parser("tasks", help="llm-jp-eval-mm's tasks: dataset, revision, metrics")
    listing.add_argument("--json", action="store_true", help="print them as a JSON list")
    add_data_arguments(actions)
    add_run_arguments(actions)


def add_data_arguments(actions: Any) -> None:
    data = actions.add_parser("data", help="fetch llm-jp-eval-mm's prompt files or verify them")
    steps = data.add_subparsers(dest="step", required=True, metavar="STEP")
    fetch = steps.add_parser("fetch", help="download the pinned files into the user cache")
    fetch.add_argument("--ref", help="git ref of llm-jp/llm-jp-eval-mm (default: pinned)")
    fetch.add_argument("--url", help="archive URL (a .tar.gz of the repository)")
    fetch.add_argument("--dest", type=Path, help="directory to write (default: the user cache)")
    verify = steps.add_parser("verify", help="check a checkout against the manifest")
    verify.add_argument("dir", nargs="?", type=Path, help="the checkout (default: fetched copy)")


def add_run_arguments(actions: Any) -> None:
    from pfgen_fast.evalmm.run import IMAGE_FORMATS

    run = actions.add_parser(
        "run",
        help="run a vision-language model (any OpenAI-compatible server) on tasks, then score",
        description="Runs a model on llm-jp-eval-mm's tasks through OpenAI-compatible servers "
        "and scores the replies, writing OUT/<task>/<model>/ as llm-jp-eval-mm does. Replies "
        "are cached: a killed run resumes, a re-run asks nothing.",
    )
    run.add_argument(
        "--task", action="append", required=True, metavar="TASK",
        help="a task (repeat for several; `mm tasks` lists them)",
    )  # fmt: skip
    run.add_argument(
        "--data", action="append", default=[], metavar="[TASK=]DIR",
        help="read a task's dataset from a local copy of its Hub repository (DIR alone: for "
        "every task not given its own)",
    )  # fmt: skip
    run.add_argument(
        "--metrics", nargs="+", choices=sorted(SCORERS), metavar="NAME",
        help="metrics to compute (default: each task's metrics in llm-jp-eval-mm)",
    )  # fmt: skip
    run.add_argument("--judge-model", help="the judge model, for judged metrics")
    run.add_argument("--judge-base-url", help="the judge's server, for judged metrics")
    run.add_argument(
        "--inference-only", action="store_true", help="write the predictions, do not score"
    )
    run.add_argument("--max-items", type=positive_int, help="only the first N items of a task")
    run.add_argument(
        "--rotate-choices", action="store_true",
        help="mecha-ja: each item four times, its options rotated (as the original's option)",
    )  # fmt: skip
    run.add_argument(
        "--max-tokens", type=positive_int, default=256, help="tokens per reply (default: 256)"
    )
    run.add_argument("--temperature", type=non_negative_float, default=0.0, help="(default: 0)")
    run.add_argument("--top-p", type=positive_float, default=1.0, help="(default: 1)")
    run.add_argument(
        "--image-format", choices=IMAGE_FORMATS, default="original",
        help="original: as the dataset stores them (PNG, JPEG, WebP, GIF; others as PNG); "
        "png; jpeg: as llm-jp-eval-mm's API example sends them (default: original)",
    )  # fmt: skip
    run.add_argument(
        "--overwrite", action="store_true",
        help="run the model again where OUT/<task>/<model>/prediction.jsonl exists "
        "(default: reuse it and only score)",
    )  # fmt: skip
    run.add_argument(
        "--out", type=Path, default=Path("result"), help="result folder (default: result)"
    )
    add_scorer_choices(run)
    add_llm_arguments(
        run, model_flag="--model", model_help="the model's name as the server knows it"
    )


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    add_scorer_choices(parser)
    add_llm_arguments(parser)
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
    if args.action == "run":
        return run_model(args)
    if args.action == "tasks":
        return run_tasks(args)
    raise PfgenError(f"unknown action {args.action!r}")


def run_score(args: argparse.Namespace) -> int:
    scorer = get_scorer(args.metric)
    items = read_items(args.file, scorer)
    log_path = args.judge_log or args.file.with_name(f"{args.file.stem}.judge-replies.jsonl")
    judge = open_judge(args, [args.metric], log_path)
    try:
        options = options_from_args(args, judge)
        scores, aggregate = score_items(scorer, items.refs, items.preds, items.lines, options)
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
            run = evaluate.read_run(folder, args.result_dir)
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

    results = leaderboard.find_evaluations(args.result_dir)
    if args.format is None:
        show_leaderboard(results, args.table)
    else:
        board = leaderboard.make_board(results)
        sys.stdout.write(leaderboard.format_board(board, args.format))
        sys.stdout.flush()
        if args.table is not None:
            from pfgen_fast.common.tables import write_table

            rows = [[m, *row] for m, row in zip(board.models, board.values, strict=True)]
            write_table(args.table, ["Model", *board.columns], rows)
    if args.plot is not None:
        from pfgen_fast.evalmm.task_correlation import plot_task_correlation

        plot_task_correlation(leaderboard.make_board(results), args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
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


def run_tasks(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from pfgen_fast.common.tables import print_table
    from pfgen_fast.evalmm.tasks import task_info, task_names

    infos = [task_info(name) for name in task_names()]
    if args.json:
        print_json([asdict(info) for info in infos])
        return 0
    columns = ["task", "dataset", "revision", "split", "metrics", "cluster", "display name"]
    rows = [
        [i.name, i.dataset, i.revision or "unpinned", i.split, ", ".join(i.metrics), i.cluster,
         i.display_name]
        for i in infos
    ]  # fmt: skip
    print_table("llm-jp-eval-mm tasks", columns, rows)
    return 0


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


def run_model(args: argparse.Namespace) -> int:
    """Runs every task; a task whose data cannot be read is reported (one line) and the others
    still run; a server that refuses or is down stops the whole run."""
    from pfgen_fast.common.llm import LLMError
    from pfgen_fast.evalmm import run
    from pfgen_fast.evalmm.tasks import task_info, task_names

    known = task_names()
    unknown = [task for task in args.task if task not in known]
    if unknown:
        raise PfgenError(f"unknown task {', '.join(unknown)}; the tasks: {', '.join(known)}")
    check_model_id(args.model)
    data = data_dirs(args.data, args.task)
    metrics = set(args.metrics or [])
    if not args.inference_only and not args.metrics:
        metrics = {name for task in args.task for name in task_info(task).metrics}
    generation = run.Generation(args.max_tokens, args.temperature, args.top_p, args.image_format)
    judge = open_run_judge(args, sorted(metrics))
    client = client_from_args(args, log_path=None)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    failed = 0
    try:
        options = options_from_args(args, judge)
        for task in dict.fromkeys(args.task):
            task_run = run.TaskRun(
                task, args.model, args.out, data.get(task), generation, args.metrics,
                args.inference_only, args.max_items, args.overwrite, args.rotate_choices,
            )  # fmt: skip
            try:
                evaluation = run.run_task(task_run, client, options)
            except LLMError:
                raise
            except PfgenError as error:
                print(f"error: {error}", file=sys.stderr)
                failed += 1
                continue
            if evaluation is not None:
                results[(task, args.model)] = evaluation
    finally:
        client.close()
        if judge is not None:
            judge.close()
    stats = client.stats
    print(
        f"model: {stats.calls} calls, {stats.cached} cached, {stats.failed} failed",
        file=sys.stderr,
    )
    report_judge(judge)
    show_leaderboard(results, None)
    return 1 if failed else 0


def check_model_id(model: str) -> None:
    """The model's name is its folder under OUT/<task>/ (with '/' a subfolder, as the
    original): no empty, '.' or '..' parts."""
    parts = model.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise PfgenError(f"--model {model!r}: not usable as a folder name (OUT/<task>/<model>)")


def data_dirs(values: list[str], tasks: list[str]) -> dict[str, Path]:
    """--data values by task: TASK=DIR for one task, DIR alone for the others."""
    given: dict[str, Path] = {}
    every: Path | None = None
    for value in values:
        task, separator, folder = value.partition("=")
        if separator and task in tasks:
            given[task] = Path(folder)
        elif separator and task and "/" not in task:
            raise PfgenError(f"--data {value!r}: {task} is not among the --task given")
        else:
            every = Path(value)
    if every is not None:
        for task in tasks:
            given.setdefault(task, every)
    return given


def open_run_judge(args: argparse.Namespace, metrics: list[str]) -> LLMClient | None:
    judged = [name for name in metrics if get_scorer(name).needs_judge]
    if not judged:
        return None
    if not args.judge_base_url or not args.judge_model:
        raise PfgenError(
            f"{', '.join(judged)} asks a judge: give --judge-base-url and --judge-model "
            "(or --metrics without judged ones, or --inference-only)"
        )
    return LLMClient(
        args.judge_base_url,
        args.judge_model,
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache_path=None if args.no_cache else DEFAULT,
        log_path=args.out / "judge_replies.jsonl",
    )
