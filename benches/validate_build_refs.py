"""Validation of `build-refs`: do rebuilt reference sets rank models as the published ones do?

    python benches/validate_build_refs.py

1. Pool: the answers of the published runs scoring >= 0.6 (their result.json), per question.
2. Rebuild one set per question from the pool (source X) with `python -m pfgen_fast build-refs`:
   all steps; without the rare filter (too strict for a pool this small), with
   representativeness, without it (evenly over the pool), and keeping only the most
   representative; and three sets per question from three disjoint thirds of those runs
   (sources A, B, C).
3. Score all 66 published runs (mean over questions of the mean answer average) against the
   published sets, against each rebuilt X set, and against A, B and C alone; print Pearson and
   Spearman correlations and the mean absolute score difference with the published scores, and
   between A, B and C (the paper's per-source stability).

The pool holds about 1,100 answers per question, not ~1M: the sets are smaller than the
published 1,000 (see SET_SIZE) and the pool includes answers of the runs being scored, so the
figures say whether the construction preserves rankings, not how sets built from fresh
generations would behave. Needs the pfgen-bench checkout (`$PFGEN_BENCH_DIR`, else
`../shared/pfgen-bench`).
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import orjson

from bench_paths import bench_dir
from pfgen_fast.pfgen.data import Question, load_questions
from pfgen_fast.pfgen.scorer import build_scorers

SCORE_THRESHOLD = 0.6
# Sizes scaled to the pool (~1,100 answers per question; ~360 per third).
POOL_SIZE, SET_SIZE = 1_000, 300
THIRD_POOL_SIZE, THIRD_SET_SIZE = 300, 100


def read_runs(result_dir: Path) -> list[tuple[Path, float, list[dict[str, str]]]]:
    """(run directory, published score, trial records) of every published run."""
    runs = []
    for trials in sorted(result_dir.glob("**/trials.jsonl.xz")):
        score = json.loads((trials.parent / "result.json").read_text("utf-8"))["score"]
        with lzma.open(trials) as lines:
            records = [orjson.loads(line) for line in lines if line.strip()]
        runs.append((trials.parent, score, records))
    return runs


def write_candidates(path: Path, runs: list, source_of_run: dict[Path, str]) -> None:
    with path.open("wb") as out:
        for run_dir, _, records in runs:
            source = source_of_run.get(run_dir)
            if source is None:
                continue
            for record in records:
                line = {"question": record["question"], "answer": record["answer"]}
                out.write(orjson.dumps(line | {"source": source}) + b"\n")


def build_refs(meta: Path, candidates: Path, out: Path, *options: str) -> dict[str, Question]:
    command = [sys.executable, "-m", "pfgen_fast", "build-refs", "--meta", str(meta)]
    command += ["--candidates", str(candidates), "--out", str(out), "--json", *options]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"build-refs failed:\n{result.stderr}")
    report = json.loads(result.stdout)
    short = [
        f"{s['question_id']}/{s['source']}:{s['answers']}" for s in report["sets"] if s["short"]
    ]
    if short:
        print(f"  short sets ({len(short)}): {' '.join(short[:10])}")
    return load_questions(out)


def run_scores(questions: dict[str, Question], runs: list, sources: list[str] | None) -> np.ndarray:
    """Each run's score against `questions`: mean over questions of the mean answer average."""
    scorers = build_scorers(questions.values(), sources)
    by_text = {q.question: q.question_id for q in questions.values()}
    scores = []
    for _, _, records in runs:
        answers: dict[str, list[str]] = defaultdict(list)
        for record in records:
            answers[by_text[record["question"]]].append(record["answer"])
        means = [scorers[q].score_arrays(a).average.mean() for q, a in sorted(answers.items())]
        scores.append(float(np.mean(means)))
    return np.array(scores)


def ranks(values: np.ndarray) -> np.ndarray:
    """Ranks with ties averaged (as Spearman's correlation needs)."""
    order = np.argsort(values, kind="stable")
    ranked = np.empty(len(values))
    ranked[order] = np.arange(len(values), dtype=float)
    for value in np.unique(values):
        tied = values == value
        ranked[tied] = ranked[tied].mean()
    return ranked


def correlations(a: np.ndarray, b: np.ndarray) -> str:
    """Rank and linear agreement, and the mean absolute difference (correlations do not see a
    shift or a change of scale, which would make scores incomparable with the leaderboard)."""
    pearson = np.corrcoef(a, b)[0, 1]
    spearman = np.corrcoef(ranks(a), ranks(b))[0, 1]
    shift = (b - a).mean()
    difference = np.abs(b - a).mean()
    return (
        f"Pearson {pearson:.4f}  Spearman {spearman:.4f}  "
        f"mean |difference| {difference:.4f} (shift {shift:+.4f})"
    )


def main() -> None:
    bench = bench_dir()
    meta = bench / "data" / "meta"
    runs = read_runs(bench / "result")
    pool_runs = sorted((r for r in runs if r[1] >= SCORE_THRESHOLD), key=lambda r: -r[1])
    print(f"{len(runs)} runs; pool: the {len(pool_runs)} runs scoring >= {SCORE_THRESHOLD}")
    published = run_scores(load_questions(bench / "data"), runs, None)
    with tempfile.TemporaryDirectory(prefix="pfgen-validate-") as work:
        work_dir = Path(work)
        pooled = work_dir / "pool.jsonl"
        write_candidates(pooled, runs, {r[0]: "X" for r in pool_runs})
        # Thirds: every third run in score order, so each third spans the score range.
        thirds = work_dir / "thirds.jsonl"
        write_candidates(thirds, runs, {r[0]: "ABC"[i % 3] for i, r in enumerate(pool_runs)})
        sizes = ["--pool-size", str(POOL_SIZE), "--size", str(SET_SIZE)]
        # The rare filter is meant for ~1M candidates, where a correct 5-gram recurs; on this
        # pool it leaves ~100 answers per question, so representativeness has nothing to choose
        # from. Without it, the pool holds ~1,000 answers and the choice of 300 matters.
        variants = {
            "all steps": [],
            "no rare filter, representativeness": ["--no-rare-filter"],
            "no rare filter, evenly over the pool": ["--no-rare-filter", "--no-representativeness"],
            "no rare filter, the 300 most representative": [
                "--no-rare-filter",
                "--typical-fraction",
                str(SET_SIZE / POOL_SIZE),
            ],
        }
        for name, options in variants.items():
            print(f"{name}:")
            out = work_dir / name.replace(" ", "_").replace(",", "")
            rebuilt = build_refs(meta, pooled, out, *sizes, *options)
            print(f"  vs published: {correlations(published, run_scores(rebuilt, runs, None))}")
        print("per-source stability (sets from three disjoint thirds of the pool runs, no rare")
        print("filter, representativeness):")
        third_sizes = ["--pool-size", str(THIRD_POOL_SIZE), "--size", str(THIRD_SET_SIZE)]
        third_sizes.append("--no-rare-filter")
        rebuilt = build_refs(meta, thirds, work_dir / "thirds", *third_sizes)
        by_source = {s: run_scores(rebuilt, runs, [s]) for s in "ABC"}
        for first, second in (("A", "B"), ("A", "C"), ("B", "C")):
            print(f"  {first} vs {second}: {correlations(by_source[first], by_source[second])}")
        for source in "ABC":
            print(f"  {source} vs published: {correlations(published, by_source[source])}")


if __name__ == "__main__":
    main()
