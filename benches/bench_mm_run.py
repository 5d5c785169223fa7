"""`mm run` throughput against a stand-in that answers at once: how many items per second the
client side (dataset reading, image encoding, requests, cache, result files) gets through, and
its peak memory. Target: a 4,000-item task with 640×480 images at >= 300 items/s, peak RSS
<= 600 MB, so the client is never what a real server waits on.

    PYTHONPATH=python python3 benches/bench_mm_run.py [--items 4000] [--concurrency 8]

Builds a local copy of ja-vlm-bench-in-the-wild's repository (JPEG images, as most datasets
store them) in a temporary folder, starts the stand-in server's fast mode
(`pfgen_fast.testing.fast_server_process`: one asyncio loop that reads each request and answers
at once) in its own process, then times `python -m pfgen_fast mm run --inference-only` (fresh
cache), the same run again (every reply cached), and a baseline: the original's API adapter
path (each image decoded and re-saved as JPEG, one request at a time) on the first 400 items.
On a shared machine the wall-clock rate follows the load; the rate per CPU second of the client
says what it sustains on a core of its own."""

from __future__ import annotations

import argparse
import base64
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from pfgen_fast.testing import fast_server_process

ROOT = Path(__file__).resolve().parent.parent
TASK = "ja-vlm-bench-in-the-wild"
DISTINCT_IMAGES = 64
BASELINE_ITEMS = 400


def photo_like(number: int) -> bytes:
    """A 640×480 JPEG with gradients and noise, so it compresses as a photo does."""
    gradient = Image.linear_gradient("L").resize((640, 480))
    noise = Image.effect_noise((640, 480), 18 + number % 5)
    image = Image.merge("RGB", (gradient, noise, gradient.rotate(90 + number)))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def make_dataset(folder: Path, items: int) -> int:
    """The repository copy; the total size of its images in bytes."""
    images = [photo_like(number) for number in range(DISTINCT_IMAGES)]
    column = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    (folder / "data").mkdir(parents=True)
    table = pa.table(
        {
            "question": pa.array([f"画像{i}について説明してください。" for i in range(items)]),
            "image": pa.array(
                [{"bytes": images[i % DISTINCT_IMAGES], "path": None} for i in range(items)],
                type=column,
            ),
            "answer": pa.array([f"答え{i}" for i in range(items)]),
        }
    )
    pq.write_table(table, folder / "data" / "test-00000-of-00001.parquet", row_group_size=256)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test-*\n---\n",
        encoding="utf-8",
    )
    return sum(len(images[i % DISTINCT_IMAGES]) for i in range(items))


# Runs the CLI, then writes the process's peak RSS (VmHWM, which, unlike ru_maxrss, does not
# carry over the forking parent's peak) to the file named by its first argument.
PEAK_WRAPPER = """
import atexit, runpy, sys
out = sys.argv.pop(1)
def peak():
    hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
    open(out, "w").write(hwm.split()[1])
atexit.register(peak)
sys.argv[0] = "pfgen_fast"
runpy.run_module("pfgen_fast", run_name="__main__")
"""


def timed_run(arguments: list[str], env: dict[str, str], work: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one CLI run."""
    peak_file = work / "peak-kb"
    command = [sys.executable, "-c", PEAK_WRAPPER, str(peak_file), *arguments]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"mm run failed (exit {os.waitstatus_to_exitcode(status)})")
    return seconds, usage.ru_utime + usage.ru_stime, int(peak_file.read_text()) / 1024


def report(what: str, items: int, seconds: float, cpu: float, peak: float) -> None:
    """Items per wall second, and per CPU second of the client: what it sustains with one
    core of its own, whatever else the machine runs."""
    print(
        f"{what}: {items / seconds:.0f} items/s ({seconds:.1f} s); {items / cpu:.0f} items per "
        f"CPU second of the client ({cpu:.1f} s); peak RSS {peak:.0f} MB"
    )


def baseline(url: str, folder: Path) -> float:
    """Items per second the original's API adapter path reaches: sequential requests, every
    image decoded and re-saved as JPEG."""
    table = pq.read_table(folder / "data" / "test-00000-of-00001.parquet").slice(0, BASELINE_ITEMS)
    started = time.perf_counter()
    with httpx.Client() as http:
        for row in table.to_pylist():
            image = Image.open(io.BytesIO(row["image"]["bytes"]))
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG")
            encoded = base64.b64encode(buffer.getvalue()).decode()
            content = [
                {"type": "text", "text": row["question"]},
                {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{encoded}"}},
            ]
            body = {"model": "m", "messages": [{"role": "user", "content": content}]}
            http.post(f"{url}/chat/completions", json=body).raise_for_status()
    return BASELINE_ITEMS / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mm-run-") as scratch:
        work = Path(scratch)
        size = make_dataset(work / "dataset", args.items)
        print(f"{args.items} items, 640x480 JPEG images, {size / 1e6:.0f} MB of image data")
        with fast_server_process() as url:
            env = {**os.environ, "PFGEN_FAST_CACHE": str(work / "cache")}
            command = [
                "mm", "run", "--task", TASK,
                "--model", "bench-model", "--base-url", url, "--data", str(work / "dataset"),
                "--out", str(work / "result"), "--inference-only", "--overwrite",
                "--concurrency", str(args.concurrency),
            ]  # fmt: skip
            print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            seconds, cpu, peak = timed_run(command, env, work)
            report("mm run", args.items, seconds, cpu, peak)
            report("mm run again (all cached)", args.items, *timed_run(command, env, work))
            reference = baseline(url, work / "dataset")
            print(f"baseline (original adapter path, sequential): {reference:.0f} items/s; "
                  f"mm run is {args.items / seconds / reference:.1f}x")  # fmt: skip
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
