"""`bench_score.py --against REV`: the `score` CLI of this checkout against the one of another
revision, on the same published answers, in alternating runs on one core.

REV is exported with `git archive` and installed into a scratch virtual environment that sees
this interpreter's packages (numpy, polars, maturin, ...) but has its own `pfgen_fast`; both are
kept under `$PFGEN_FAST_CACHE/bench-revisions/<commit>/` so that the next comparison with the
same revision does not build it again. Each side has its own table cache, filled by a run that
is not timed. The outputs are compared line by line: `--legacy-sum` is passed to this
checkout, and to REV too when its `score` knows the option (a revision from before the
compensated sum adds left to right without it); the lines that differ are counted and the
exit status is then 1, after the timings."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_paths import ROOT, bench_dir

CPU = 1


@dataclass(frozen=True)
class Side:
    name: str
    python: str
    cache: Path
    extra: tuple[str, ...]


def scratch_root() -> Path:
    env = os.environ.get("PFGEN_FAST_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "pfgen_fast"
    return base / "bench-revisions"


def commit_of(revision: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{revision}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"error: {revision}: not a commit of this repository")
    return done.stdout.strip()


def installed_python(commit: str) -> str:
    """The interpreter of a scratch environment holding `pfgen_fast` built at `commit`."""
    folder = scratch_root() / commit
    python = folder / "venv" / "bin" / "python"
    if python.exists():
        check = [str(python), "-c", "import pfgen_fast._core"]
        env = own_package_env(str(python))
        if subprocess.run(check, cwd="/", env=env, capture_output=True).returncode == 0:
            return str(python)
    source = folder / "source"
    source.mkdir(parents=True, exist_ok=True)
    print(f"building {commit[:12]} into {folder} (once) ...", flush=True)
    with tempfile.TemporaryFile() as archive:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit], stdout=archive, check=True)
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(source, filter="data")
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(folder / "venv")], check=True
    )
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
        + [str(source)],
        check=True,
    )
    return str(python)


def own_package_env(python: str) -> dict[str, str]:
    """The environment in which `python` imports the `pfgen_fast` meant: this checkout's for this
    interpreter, the scratch environment's own for a revision's (`PYTHONPATH` would shadow it);
    bytecode written, so that a checkout's modules are not compiled again in every timed run
    (an installed revision's come compiled)."""
    unset = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {name: value for name, value in os.environ.items() if name not in unset}
    if python == sys.executable:
        env["PYTHONPATH"] = str(ROOT / "python")
    return env


def knows_legacy_sum(python: str) -> bool:
    done = subprocess.run(
        [python, "-m", "pfgen_fast", "score", "--help"],
        cwd="/",
        env=own_package_env(python),
        capture_output=True,
        text=True,
    )
    return "--legacy-sum" in done.stdout


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_score(side: Side, data_dir: Path, answers: Path, output: Path) -> tuple[float, float]:
    """Wall time and CPU time (user and system) of one `score` run."""
    env = {**own_package_env(side.python), "PFGEN_FAST_CACHE": str(side.cache)}
    env["RAYON_NUM_THREADS"] = "1"
    command = [
        "taskset",
        "-c",
        str(CPU),
        side.python,
        "-m",
        "pfgen_fast",
        "score",
        "--data",
        str(data_dir),
        *side.extra,
        str(answers),
    ]
    with output.open("wb") as out:
        cpu, start = children_cpu(), time.perf_counter()
        subprocess.run(command, stdout=out, env=env, cwd="/", check=True)
        return time.perf_counter() - start, children_cpu() - cpu


def compare(
    revision: str, answers: list[dict[str, str]], count: int, rounds: int, legacy: bool
) -> int:
    commit = commit_of(revision)
    other_python = installed_python(commit)
    chosen = answers[:count]
    with tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        answers_path = work / "answers.jsonl"
        with answers_path.open("w", encoding="utf-8") as out:
            for record in chosen:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        flag = ("--legacy-sum",) if legacy else ()
        other_flag = flag if legacy and knows_legacy_sum(other_python) else ()
        sides = [
            Side("this checkout", sys.executable, work / "cache-this", flag),
            Side(commit[:12], other_python, work / "cache-other", other_flag),
        ]
        data_dir = bench_dir() / "data"
        outputs = {side.name: work / f"out-{index}.jsonl" for index, side in enumerate(sides)}
        for side in sides:
            run_score(side, data_dir, answers_path, outputs[side.name])
        differing = differing_lines(outputs[sides[0].name], outputs[sides[1].name])
        print(
            f"{len(chosen):,} published answers in trials order; one core (cpu {CPU}); "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        if differing:
            print(
                f"outputs DIFFER in {len(differing)} of {len(chosen):,} lines "
                f"(line {differing[0]} first); timing them all the same"
            )
        else:
            print("outputs equal")
        times: dict[str, list[float]] = {side.name: [] for side in sides}
        cpu_times: dict[str, list[float]] = {side.name: [] for side in sides}
        for round_number in range(rounds):
            order = sides if round_number % 2 == 0 else sides[::-1]
            for side in order:
                wall, cpu = run_score(side, data_dir, answers_path, outputs[side.name])
                times[side.name].append(wall)
                cpu_times[side.name].append(cpu)
    for side in sides:
        best, median = min(times[side.name]), statistics.median(times[side.name])
        print(
            f"{side.name:<16} {' '.join(side.extra) or '(default sum)':<14} best {best:.3f} s "
            f"({len(chosen) / best:,.0f} answers/s), median {median:.3f} s, "
            f"CPU best {min(cpu_times[side.name]):.3f} s"
        )
    this, other = sides[0].name, sides[1].name
    print(f"ratio, this checkout's speed over {other}'s:")
    print(f"  wall, best        {min(times[other]) / min(times[this]):.3f}")
    median_ratio = statistics.median(times[other]) / statistics.median(times[this])
    print(f"  wall, median      {median_ratio:.3f}")
    print(f"  CPU time, best    {min(cpu_times[other]) / min(cpu_times[this]):.3f}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 1 if differing else 0


def differing_lines(first: Path, second: Path) -> list[int]:
    """The numbers (from 1) of the lines where two outputs differ; a missing line differs."""
    ones, twos = first.read_bytes().splitlines(), second.read_bytes().splitlines()
    length = max(len(ones), len(twos))
    ones += [b""] * (length - len(ones))
    twos += [b""] * (length - len(twos))
    return [number for number, (a, b) in enumerate(zip(ones, twos, strict=True), 1) if a != b]
