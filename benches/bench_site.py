"""Build time and size of the static site for the whole published pfgen-bench leaderboard, and
how fast its index shows in Chromium.

    python benches/bench_site.py [--copies 8]

Builds `python -m pfgen_fast site` (a fresh process, the figures included) from the published
runs (`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench`), then from `--copies` copies of them as a
stand-in for the full leaderboard of about 520 runs, and prints each build's wall time, run
count and OUT size. The baseline, measured in the same run: reading every result.json with
`json.load`, the least any build must do. Then opens each index.html in headless Chromium (when
installed) and prints the first contentful paint and the load event, from the page's own
performance entries. Targets: a build in at most 60 s, the index shown in at most 3 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_paths import bench_dir

BUILD_LIMIT_SECONDS = 60.0
SHOW_LIMIT_SECONDS = 3.0


def copied_tree(source: Path, copies: int, target: Path) -> Path:
    """`copies` copies of the checkout's result files (result.json and config.json) and its
    data/ folder, each copy under result/copyN/."""
    shutil.copytree(source / "data", target / "data", ignore=shutil.ignore_patterns("*.xz"))
    for path in sorted((source / "result").rglob("result.json")):
        relative = path.parent.relative_to(source / "result")
        for n in range(copies):
            run = target / "result" / f"copy{n}" / relative
            run.mkdir(parents=True)
            shutil.copy(path, run / "result.json")
            if (path.parent / "config.json").is_file():
                shutil.copy(path.parent / "config.json", run / "config.json")
    return target


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def read_all(tree: Path) -> float:
    start = time.perf_counter()
    for path in tree.rglob("result.json"):
        with path.open(encoding="utf-8") as handle:
            json.load(handle)
    return time.perf_counter() - start


def build(tree: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pfgen_fast", "site", str(out), "--pfgen", str(tree)],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def show_times(index: Path) -> tuple[float | None, float] | None:
    """(first contentful paint, when Chromium reports one; load event) in seconds, or None
    without Chromium."""
    from site_browser import chromium, missing

    if missing() is not None:
        print(f"index show time not measured: {missing()}")
        return None
    with chromium() as driver:
        driver.get(index.as_uri())
        paint, load = driver.execute_script(
            """const paint = performance.getEntriesByName('first-contentful-paint')[0];
            const navigation = performance.getEntriesByType('navigation')[0];
            return [paint ? paint.startTime : null, navigation.loadEventEnd];"""
        )
    return (None if paint is None else paint / 1000), load / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=8, help="copies of the runs (default: 8)")
    args = parser.parse_args()
    source = bench_dir()
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        trees = [("published", source)]
        trees.append((f"{args.copies} copies", copied_tree(source, args.copies, work / "copies")))
        for name, tree in trees:
            runs = len(list(tree.rglob("result.json")))
            baseline = read_all(tree)
            out = work / f"site-{runs}"
            seconds = build(tree, out)
            size = folder_size(out) / 1e6
            verdict = "ok" if seconds <= BUILD_LIMIT_SECONDS else "OVER the limit"
            print(
                f"{name}: {runs} runs built in {seconds:.2f} s ({verdict}, limit "
                f"{BUILD_LIMIT_SECONDS:.0f} s), OUT {size:.1f} MB (index.html "
                f"{(out / 'index.html').stat().st_size / 1e3:.0f} kB); baseline json.load of "
                f"every result.json {baseline:.2f} s, ratio {seconds / baseline:.1f}x"
            )
            shown = show_times(out / "index.html")
            if shown is not None:
                paint, load = shown
                verdict = "ok" if max(paint or 0, load) <= SHOW_LIMIT_SECONDS else "OVER the limit"
                painted = "n/a" if paint is None else f"{paint:.2f} s"
                print(
                    f"  index.html in Chromium: first contentful paint {painted}, load "
                    f"event {load:.2f} s ({verdict}, limit {SHOW_LIMIT_SECONDS:.0f} s)"
                )


if __name__ == "__main__":
    main()
