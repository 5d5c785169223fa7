"""A full disk while the reply log is appended (`lctg generate`, `lctg eval --out`, `mm score
--judge-log`): one line naming the log and "No space left on device", exit 1, no traceback, and
a log of whole lines. The disk is a link to /dev/full, and (as root) a small tmpfs filled up."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import published
from cli_runner import run_cli
from pfgen_fast.testing import Reply, serve

FULL = "No space left on device"


def answer(path: str, request: dict[str, Any]) -> Reply:
    return Reply(text="回答です。" * 20)


def generate_args(base_url: str, out: Path) -> list[str | Path]:
    return ["lctg", "generate", "--task", "pros_and_cons", "--data", published.lctg_dir(),
            "--base-url", base_url, "--model", "demo-7b", "--out", out,
            "--concurrency", "4"]  # fmt: skip


def check_failed_on(result: subprocess.CompletedProcess[str], log: Path) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr, result.stderr
    assert f"error: {log}: cannot write: {FULL}" in result.stderr.splitlines(), result.stderr


@contextlib.contextmanager
def small_disk(folder: Path, free_pages: int) -> Iterator[Path]:
    """A 256 KiB tmpfs at `folder`, filled but for `free_pages` pages (root only)."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)],
                             capture_output=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip("a tmpfs cannot be mounted here (not root)")
    try:
        filler = folder / "filler"
        with open(filler, "wb", buffering=0) as out, contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * 4096)
        os.truncate(filler, max(filler.stat().st_size - free_pages * 4096, 0))
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_lctg_generate_on_a_full_disk(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    log = out / "generation-replies.jsonl"
    log.symlink_to("/dev/full")
    with serve(answer) as server:
        result = run_cli(*generate_args(server.base_url, out))
    check_failed_on(result, log)
    assert log.is_symlink() and not (out / "generated_result_v1.jsonl").exists()


def test_lctg_generate_on_a_small_filled_tmpfs_keeps_whole_lines(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", free_pages=3) as disk:
        with serve(answer) as server:
            result = run_cli(*generate_args(server.base_url, disk))
        log = disk / "generation-replies.jsonl"
        check_failed_on(result, log)
        lines = log.read_bytes().splitlines()
        assert lines and all(json.loads(line)["status"] == 200 for line in lines)
        assert log.read_bytes().endswith(b"\n")
        assert not [p.name for p in disk.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_lctg_eval_out_on_a_full_disk(tmp_path: Path) -> None:
    with serve(answer) as server:
        generated = run_cli(*generate_args(server.base_url, tmp_path / "gen"))
        assert generated.returncode == 0, generated.stderr
        out = tmp_path / "eval"
        out.mkdir()
        log = out / "lctg-pros_and_cons-replies.jsonl"
        log.symlink_to("/dev/full")
        result = run_cli(
            "lctg", "eval", "--task", "pros_and_cons", "--data", published.lctg_dir(),
            tmp_path / "gen" / "generated_result_v1.jsonl", "--out", out,
            "--base-url", server.base_url, "--judge-model", "judge", "--concurrency", "4",
        )  # fmt: skip
    check_failed_on(result, log)


def test_mm_judge_log_on_a_full_disk(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    item = {"ref": "猫です", "pred": "猫がいます", "input_text": "何がいますか"}
    items.write_text(json.dumps(item, ensure_ascii=False) + "\n", "utf-8")
    log = tmp_path / "replies.jsonl"
    log.symlink_to("/dev/full")
    with serve(lambda path, request: Reply("4")) as server:
        result = run_cli(
            "mm", "score", "--metric", "llm-as-a-judge", items,
            "--evalmm-dir", published.evalmm_dir(), "--base-url", server.base_url,
            "--judge-model", "judge", "--judge-log", log,
        )  # fmt: skip
    check_failed_on(result, log)
