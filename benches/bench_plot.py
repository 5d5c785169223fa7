"""Time and peak memory of `plot` over the published runs, 66 copied 8 times (528 runs, standing
in for the 516 of a full pfgen-bench checkout).

    python benches/bench_plot.py [--baseline REVISION]

Prints the wall time (interpreter start included) and the peak resident memory of
`python -m pfgen_fast plot` with every figure (Fig. 4-6 included), against the targets of a
few seconds and 500 MB. With `--baseline`, the same command of that git revision of this
checkout (its `python/` extracted into a temporary folder, with this checkout's compiled core)
is measured in the same run on the same files, and the ratios are printed. The copies are
hard links where the file system allows, else copies. Needs the pfgen-bench checkout
(`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench_paths import ROOT, bench_dir

COPIES = 8
TARGET_SECONDS = 10.0
TARGET_MB = 500.0
RUN_FILES = ("result.json", "trials.jsonl.xz", "trials.jsonl", "config.json")


def link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy(source, target)


def copy_runs(bench: Path, root: Path, copies: int) -> int:
    """`copies` copies of every run of the checkout under root/result/copyN/; the run count."""
    runs = sorted(path.parent for path in (bench / "result").glob("**/result.json"))
    for copy in range(copies):
        for run in runs:
            target = root / "result" / f"copy{copy}" / run.relative_to(bench / "result")
            target.mkdir(parents=True)
            for name in RUN_FILES:
                if (run / name).exists():
                    link_or_copy(run / name, target / name)
    return len(runs) * copies


def measure(python_path: Path, work: Path, out: Path, data: Path) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one plot command run in `work`."""
    env = {**os.environ, "PYTHONPATH": str(python_path)}
    command = [sys.executable, "-m", "pfgen_fast", "plot", "--data", str(data), "--out", str(out)]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode() if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"plot failed ({process.returncode}):\n{errors}")
    return seconds, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def extract_revision(revision: str, folder: Path) -> Path:
    """The `python/` folder of `revision`, with this checkout's compiled core beside it."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "python"],
        check=True,
        capture_output=True,
    ).stdout
    archive_path = folder / "baseline.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(folder, filter="data")
    core = ROOT / "python" / "pfgen_fast" / "_core.abi3.so"
    shutil.copy(core, folder / "python" / "pfgen_fast" / core.name)
    return folder / "python"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a git revision whose plot to measure as well")
    parser.add_argument("--copies", type=int, default=COPIES, help="copies of each run")
    args = parser.parse_args()
    bench = bench_dir()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        count = copy_runs(bench, work / "checkout", args.copies)
        print(f"plot over {count} runs ({args.copies} copies of each published run)")
        seconds, megabytes = measure(
            ROOT / "python", work / "checkout", work / "figures", bench / "data"
        )
        print(f"this checkout: {seconds:.1f} s, peak {megabytes:.0f} MB "
              f"(targets: {TARGET_SECONDS:.0f} s, {TARGET_MB:.0f} MB)")  # fmt: skip
        if args.baseline:
            python = extract_revision(args.baseline, work)
            base_seconds, base_megabytes = measure(
                python, work / "checkout", work / "baseline-figures", bench / "data"
            )
            print(f"{args.baseline}: {base_seconds:.1f} s, peak {base_megabytes:.0f} MB")
            print(f"ratio: {base_seconds / seconds:.1f}x faster, "
                  f"{base_megabytes / megabytes:.1f}x less memory")  # fmt: skip


if __name__ == "__main__":
    main()
