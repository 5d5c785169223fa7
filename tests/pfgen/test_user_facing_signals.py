"""Runs stopped by SIGKILL or SIGTERM. Temporary files and spill folders carry
the id of the process that made them; a later run removes those of dead processes (never those
of live ones), and SIGTERM cleans up as SIGINT does (exit status 143)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from user_facing_fixtures import checkout, cli_env, run_cli, write_data, write_run

pytestmark = pytest.mark.slow

# A process that holds `replaced_atomically(PATH)` open (its temporary file written) until it
# is killed: the state of any command stopped in the middle of writing a file.
WRITER = """
import sys, time
from pathlib import Path
from pfgen_fast.common.files import replaced_atomically
with replaced_atomically(Path(sys.argv[1])) as temporary:
    temporary.write_bytes(b"partial")
    print(temporary, flush=True)
    time.sleep(600)
"""


def start_writer(target: Path) -> tuple[subprocess.Popen[str], Path]:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    temporary = Path(process.stdout.readline().strip())
    assert temporary.is_file() and str(process.pid) in temporary.name
    return process, temporary


def test_eval_removes_the_temporary_file_of_a_killed_writer(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    cache_file = tmp_path / "result" / "org" / "model" / "cache" / "scores.json"
    killed, left = start_writer(cache_file)
    killed.send_signal(signal.SIGKILL)
    killed.communicate()  # waits, and closes its pipe
    assert left.exists()  # what SIGKILL leaves behind
    live, kept = start_writer(cache_file)
    assert not left.exists()  # any writer of the same file removes it
    left.write_bytes(b"partial")
    try:
        result = run_cli("eval", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert not left.exists()
        assert kept.exists()  # its writer is alive: not a leftover
    finally:
        live.kill()
        live.communicate()


def test_eval_killed_at_any_moment_leaves_nothing_after_the_next_run(tmp_path: Path) -> None:
    write_data(tmp_path / "data")
    for index in range(12):
        write_run(tmp_path, f"org/model-{index}", trials=30, seed=index)
    env = cli_env(tmp_path / "cache")
    for delay in (0.6, 0.9, 1.2):
        process = subprocess.Popen(
            [sys.executable, "-m", "pfgen_fast", "eval", "--force"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
    result = run_cli("eval", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.rglob("*.tmp")) == []


def test_eval_stopped_by_sigterm_cleans_up_and_exits_143(tmp_path: Path) -> None:
    write_data(tmp_path / "data")
    for index in range(60):
        write_run(tmp_path, f"org/model-{index}", trials=100, seed=index)
    process = subprocess.Popen(
        [sys.executable, "-m", "pfgen_fast", "eval"],
        cwd=tmp_path,
        env=cli_env(tmp_path / "cache"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(tmp_path.glob("result/*/*/result.json")):  # the first run written
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr and stderr.splitlines()[-1] == "terminated"
    assert sorted(p.name for p in tmp_path.rglob("*.tmp")) == []
    written = list(tmp_path.rglob("result.json"))
    assert len(written) < 60  # stopped, not run to the end
    for result_json in written:  # each one whole
        json.loads(result_json.read_bytes())


@pytest.fixture(scope="module")
def build_inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Question files without answers, and 200,000 synthetic candidates to one question."""
    root = tmp_path_factory.mktemp("build")
    write_data(root / "data")
    write_data(root / "meta", answers=False)
    candidates = root / "candidates.jsonl"
    made = run_cli(
        "synth", "--data", root / "data", "--question", "Q01", "--count", "200000",
        "--out", candidates, cwd=root,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return root / "meta", candidates


def start_build(meta: Path, candidates: Path, spill: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pfgen_fast",
            "build-refs",
            "--meta",
            str(meta),
            "--candidates",
            str(candidates),
            "--out",
            str(out),
            "--memory-budget-mb",
            "1",
            "--spill-dir",
            str(spill),
        ],  # fmt: skip
        cwd=out.parent,
        env=cli_env(out.parent / "cache"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_spill_files(spill: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not any(spill.glob("*/*")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize(("sent", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_build_refs_stopped_by_a_signal_removes_its_spill_folder(
    build_inputs: tuple[Path, Path], tmp_path: Path, sent: signal.Signals, status: int
) -> None:
    meta, candidates = build_inputs
    spill = tmp_path / "spill"
    spill.mkdir()
    process = start_build(meta, candidates, spill, tmp_path / "refs")
    wait_for_spill_files(spill, process)
    (folder,) = spill.iterdir()
    assert str(process.pid) in folder.name
    process.send_signal(sent)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == status, stderr
    assert "Traceback" not in stderr
    assert list(spill.iterdir()) == []
    assert not (tmp_path / "refs" / "Q01.json").exists()


def test_build_refs_removes_the_spill_folder_of_a_killed_run(
    build_inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    meta, candidates = build_inputs
    spill = tmp_path / "spill"
    spill.mkdir()
    killed = start_build(meta, candidates, spill, tmp_path / "refs")
    wait_for_spill_files(spill, killed)
    killed.send_signal(signal.SIGKILL)
    killed.communicate()
    (left,) = spill.iterdir()
    assert any(left.rglob("*"))  # what SIGKILL leaves behind
    # Someone else's folder and a folder of a live process stay.
    other = spill / "notes"
    other.mkdir()
    live = spill / f"pfgen-build-refs-{os.getpid()}-keep"
    live.mkdir()
    result = start_build(meta, candidates, spill, tmp_path / "refs")
    _, stderr = result.communicate(timeout=120)
    assert result.returncode == 0, stderr
    assert sorted(spill.iterdir()) == sorted([other, live])
