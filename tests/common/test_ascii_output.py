"""Standard output that holds ASCII only (`PYTHONIOENCODING=ascii`, or the C locale without
UTF-8 mode): every command writes what the stream can take, characters it lacks as backslash
escapes, never "This is a bug". A process of its own: the encoding of standard output is set
when the interpreter starts."""

from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_guard import QUESTION, write_data

ASCII_ONLY = {
    "PYTHONIOENCODING=ascii": {"PYTHONIOENCODING": "ascii"},
    "LC_ALL=C PYTHONUTF8=0": {"LC_ALL": "C", "PYTHONUTF8": "0"},
}


def data_with_examples(directory: Path) -> Path:
    """The guard test's question, and questions.jsonl with its one example (for `prompt`)."""
    write_data(directory)
    example = {"question": QUESTION, "answer": "晴れです。"}
    (directory / "questions.jsonl").write_text(json.dumps(example, ensure_ascii=False) + "\n")
    return directory


def run_ascii(setting: str, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LC_ALL")}
    env.update(ASCII_ONLY[setting], COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "pfgen_fast", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=300,
    )


def ascii_lines(result: subprocess.CompletedProcess[bytes]) -> list[str]:
    """The output's lines: ASCII but for bytes that came in undecodable (kept as surrogates)."""
    assert result.returncode == 0, result.stderr
    assert b"This is a bug" not in result.stderr
    return result.stdout.decode("ascii", "surrogateescape").splitlines()


@pytest.mark.parametrize("setting", ASCII_ONLY)
def test_prompt_writes_escaped_json(tmp_path: Path, setting: str) -> None:
    data = data_with_examples(tmp_path / "data")
    result = run_ascii(
        setting, "prompt", "--data", data, "--mode", "qa", "--trial", "1", cwd=tmp_path
    )
    [line] = ascii_lines(result)
    assert json.loads(line)["question"] == QUESTION


@pytest.mark.parametrize("setting", ASCII_ONLY)
def test_eval_writes_its_table_with_escapes(tmp_path: Path, setting: str) -> None:
    data = data_with_examples(tmp_path / "data")
    run = tmp_path / "モデル"
    run.mkdir()
    line = json.dumps({"question": QUESTION, "answer": "晴れです。"}, ensure_ascii=False)
    (run / "trials.jsonl.xz").write_bytes(lzma.compress((line + "\n").encode() * 10))
    result = run_ascii(
        setting, "eval", "--quiet", "--data", data, "モデル/trials.jsonl.xz", cwd=tmp_path
    )
    lines = ascii_lines(result)
    # In the C locale the name's bytes came in undecodable: they go out as they came.
    if setting.startswith("LC_ALL"):
        path = "モデル".encode().decode("ascii", "surrogateescape")
    else:
        path = "\\u30e2\\u30c7\\u30eb"
    assert any(f"{path}/trials.jsonl.xz" in line for line in lines), lines
    assert (run / "result.json").exists()


@pytest.mark.parametrize("setting", ASCII_ONLY)
def test_mm_tasks_writes_its_table_with_escapes(tmp_path: Path, setting: str) -> None:
    lines = ascii_lines(run_ascii(setting, "mm", "tasks", cwd=tmp_path))
    assert lines[0].startswith("task\t") and any("\\u8996\\u899a" in line for line in lines)
