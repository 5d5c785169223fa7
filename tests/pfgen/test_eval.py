"""`python -m pfgen_fast eval`, run for real on copies of the published runs."""

from __future__ import annotations

import hashlib
import json
import lzma
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_runner import run_cli
from pfgen_bench import bench_dir, published_runs


def run_eval(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("eval", *args, cwd=cwd, timeout=900)


def copy_run(run: Path, target_root: Path) -> Path:
    """The run's trials file and config.json under target_root/result/..., as in a checkout."""
    target = target_root / run.relative_to(bench_dir())
    target.mkdir(parents=True)
    shutil.copy(run / "trials.jsonl.xz", target)
    if (run / "config.json").exists():
        shutil.copy(run / "config.json", target)
    return target


def assert_close(mine, published, where: str, tolerance: float = 1.01e-4) -> None:
    """Equal structure and key order; numbers within the spec's tolerance (§9)."""
    if isinstance(published, dict):
        assert list(mine) == list(published), where
        for key in published:
            assert_close(mine[key], published[key], f"{where}.{key}", tolerance)
    elif isinstance(published, list):
        assert len(mine) == len(published), where
        for index, (a, b) in enumerate(zip(mine, published, strict=True)):
            assert_close(a, b, f"{where}[{index}]", tolerance)
    elif isinstance(published, float):
        assert abs(mine - published) <= tolerance, f"{where}: {mine} != {published}"
    else:
        assert mine == published, where


@pytest.fixture(scope="module")
def evaluated(bench: Path, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """All published runs copied and evaluated once, from scratch."""
    root = tmp_path_factory.mktemp("checkout")
    for run in published_runs():
        copy_run(run, root)
    result = run_eval("--data", bench / "data", cwd=root)  # default: result/**/trials.jsonl.xz
    return root, result


@pytest.mark.slow
def test_every_published_run_is_reproduced(evaluated, bench: Path):
    root, result = evaluated
    assert result.returncode == 0, result.stderr
    runs = published_runs()
    assert f"{len(runs)} scored" in result.stderr
    for run in runs:
        mine = json.loads((root / run.relative_to(bench) / "result.json").read_bytes())
        published = json.loads((run / "result.json").read_bytes())
        # The samples depend on the `sum()` of the averages' ties: test_sum_modes.py checks
        # every file byte for byte in the mode that made it.
        for result in (mine, published):
            for question in result["questions"].values():
                del question["samples"]
        assert_close(mine, published, str(run.relative_to(bench)))
        assert (root / run.relative_to(bench) / "cache" / "scores.json").is_file()


def test_rerun_is_incremental_and_force_rescores(evaluated, bench: Path):
    root, _ = evaluated
    runs = published_runs()
    again = run_eval("--data", bench / "data", "result/**/trials.jsonl.xz", cwd=root)
    assert again.returncode == 0
    assert f"0 scored, {len(runs)} already current" in again.stderr
    one = root / runs[0].relative_to(bench) / "trials.jsonl.xz"
    forced = run_eval("--data", bench / "data", "--force", one)
    assert forced.returncode == 0 and "1 scored" in forced.stderr


@pytest.mark.slow
def test_changed_trials_file_is_rescored(bench: Path, tmp_path):
    run = copy_run(published_runs()[0], tmp_path)
    first = run_eval("--data", bench / "data", run / "trials.jsonl.xz")
    assert first.returncode == 0
    first_hash = json.loads((run / "result.json").read_bytes())["input_hash"]
    lines = lzma.decompress((run / "trials.jsonl.xz").read_bytes()).splitlines(keepends=True)
    record = json.loads(lines[0])
    record["answer"] = "別の回答です。"
    lines[0] = (json.dumps(record, ensure_ascii=False) + "\n").encode()
    (run / "trials.jsonl.xz").write_bytes(lzma.compress(b"".join(lines)))
    second = run_eval("--data", bench / "data", run / "trials.jsonl.xz")
    assert second.returncode == 0 and "1 scored" in second.stderr
    second_hash = json.loads((run / "result.json").read_bytes())["input_hash"]
    assert second_hash != first_hash
    assert second_hash == hashlib.sha1((run / "trials.jsonl.xz").read_bytes()).hexdigest()


@pytest.mark.slow
def test_a_current_run_is_hashed_not_decompressed(bench: Path, tmp_path):
    run = copy_run(published_runs()[0], tmp_path)
    assert run_eval("--data", bench / "data", run / "trials.jsonl.xz").returncode == 0
    # Not an .xz stream, but the result says these bytes were scored: only the hash is read.
    garbage = b"not an xz stream"
    (run / "trials.jsonl.xz").write_bytes(garbage)
    result = json.loads((run / "result.json").read_bytes())
    result["input_hash"] = hashlib.sha1(garbage).hexdigest()
    (run / "result.json").write_text(json.dumps(result, ensure_ascii=False))
    again = run_eval("--data", bench / "data", run / "trials.jsonl.xz")
    assert again.returncode == 0 and "1 already current" in again.stderr
    forced = run_eval("--data", bench / "data", "--force", run / "trials.jsonl.xz")
    assert forced.returncode == 1 and "not a valid .xz file" in forced.stderr


def write_xz_lines(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lzma.compress(b"".join(lines)))


def test_bad_runs_fail_alone_and_keep_old_results(bench: Path, tmp_path):
    good = copy_run(published_runs()[0], tmp_path)
    lines = lzma.decompress((good / "trials.jsonl.xz").read_bytes()).splitlines(keepends=True)
    bad_runs = {
        "truncated": (good / "trials.jsonl.xz").read_bytes()[:1000],
        "empty": b"",
        "json": lzma.compress(lines[0] + b"{oops\n"),
        "utf8": lzma.compress(lines[0] + b'{"question": "\xff", "answer": "a"}\n'),
        "unknown": lzma.compress(b'{"question": "what?", "answer": "a"}\n'),
        "field": lzma.compress(b'{"question": "x"}\n'),
    }
    for name, data in bad_runs.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "trials.jsonl.xz").write_bytes(data)
    (tmp_path / "json" / "result.json").write_text('{"old": true}')
    (tmp_path / "unreadable" / "trials.jsonl.xz").mkdir(parents=True)  # a directory: unreadable
    result = run_eval("--data", bench / "data", str(tmp_path / "**" / "trials.jsonl.xz"))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "1 scored" in result.stderr and "7 failed" in result.stderr
    assert (good / "result.json").is_file()
    expected = {
        "truncated": "not a valid .xz file",
        "empty": "no answers",
        "json": "trials.jsonl.xz:2: not valid JSON",
        "utf8": "trials.jsonl.xz:2: not valid UTF-8",
        "unknown": 'trials.jsonl.xz:1: field "question": not a question of the data',
        "field": 'trials.jsonl.xz:1: field "answer": missing',
        "unreadable": "cannot read: Is a directory",
    }
    for name, message in expected.items():
        assert f"{tmp_path / name}" in result.stderr and message in result.stderr, name
        if name != "json":
            assert not (tmp_path / name / "result.json").exists()
    assert (tmp_path / "json" / "result.json").read_text() == '{"old": true}'


def test_unwritable_run_directory_is_reported(bench: Path, tmp_path):
    run = copy_run(published_runs()[0], tmp_path)
    (run / "cache").write_text("a file where the cache folder goes")
    result = run_eval("--data", bench / "data", run / "trials.jsonl.xz")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "cannot write" in result.stderr and str(run / "cache") in result.stderr
    assert not (run / "result.json").exists()


@pytest.mark.slow
def test_missing_questions_need_allow_partial(bench: Path, tmp_path):
    run = copy_run(published_runs()[0], tmp_path)
    lines = lzma.decompress((run / "trials.jsonl.xz").read_bytes()).splitlines(keepends=True)
    questions = {json.loads(line)["question"] for line in lines}
    dropped = sorted(questions)[0]
    kept = [line for line in lines if json.loads(line)["question"] != dropped]
    write_xz_lines(run / "trials.jsonl.xz", kept)
    refused = run_eval("--data", bench / "data", run / "trials.jsonl.xz")
    assert refused.returncode == 1 and "--allow-partial" in refused.stderr
    assert not (run / "result.json").exists()
    allowed = run_eval("--data", bench / "data", "--allow-partial", run / "trials.jsonl.xz")
    assert allowed.returncode == 0 and "warning" in allowed.stderr
    result = json.loads((run / "result.json").read_bytes())
    assert len(result["questions"]) == len(questions) - 1


@pytest.mark.slow
def test_uneven_trials_warn_and_missing_config_is_left_out(bench: Path, tmp_path):
    run = copy_run(published_runs()[0], tmp_path)
    (run / "config.json").unlink(missing_ok=True)
    lines = lzma.decompress((run / "trials.jsonl.xz").read_bytes()).splitlines(keepends=True)
    first_question = json.loads(lines[0])["question"]
    one_dropped = False
    kept = []
    for line in lines:
        if not one_dropped and json.loads(line)["question"] == first_question:
            one_dropped = True
            continue
        kept.append(line)
    write_xz_lines(run / "trials.jsonl.xz", kept)
    result = run_eval("--data", bench / "data", "--json", run / "trials.jsonl.xz")
    assert result.returncode == 0
    assert "different numbers of answers" in result.stderr
    summary = json.loads(result.stdout)
    assert summary[0]["status"] == "scored" and summary[0]["num_trials"] >= 1
    written = json.loads((run / "result.json").read_bytes())
    assert "config" not in written
    assert list(written)[:3] == ["input_hash", "metadata_hash", "num_trials"]


def test_one_source_only(bench: Path, tmp_path):
    run = copy_run(published_runs()[0], tmp_path)
    result = run_eval("--data", bench / "data", "--sources", "P", run / "trials.jsonl.xz")
    assert result.returncode == 0, result.stderr
    written = json.loads((run / "result.json").read_bytes())
    assert set(written["scores"]["fluency"]) == {"P", "R"}  # Q01, Q10, Q30 have only R


def test_nothing_scored_prints_no_rate_and_says_how_to_score(bench: Path, tmp_path):
    run = copy_run(published_runs()[0], tmp_path)
    first = run_eval("--data", bench / "data", run / "trials.jsonl.xz")
    assert first.returncode == 0 and "answers/s" in first.stderr
    again = run_eval("--data", bench / "data", run / "trials.jsonl.xz")
    assert again.returncode == 0 and "0 scored, 1 already current" in again.stderr
    assert "answers/s" not in again.stderr and "--force" in again.stderr


@pytest.mark.parametrize("sources", ["", ","])
def test_no_source_named_is_refused(sources: str, tmp_path):
    result = run_eval("--sources", sources, tmp_path / "trials.jsonl.xz")
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: argument --sources: {sources!r}: expected source")
