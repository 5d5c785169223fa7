"""Bad generation files: one line naming file, line and field, exit status 1, no call made
and nothing written; missing data: the fetch hint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lctg_support import lctg_dir

from cli_runner import run_cli
from pfgen_fast.cli import main
from pfgen_fast.lctg.data import CONSTRAINTS, load_prompts

# Nothing listens there: a call would fail, so a passing test shows none was attempted.
NO_SERVER = "http://127.0.0.1:9/v1"


def good_row(prompt_id: int) -> dict[str, Any]:
    row: dict[str, Any] = {"generated_text_id": 0, "model": "m", "prompt_id": prompt_id}
    row.update({f"{c}_result": ["一", "二", "三"] for c in CONSTRAINTS})
    return row


def eval_args(path: Path, *extra: str) -> list[str]:
    return [
        "lctg", "eval", "--task", "ad_text", "--data", str(lctg_dir()), "--base-url", NO_SERVER,
        "--judge-model", "j", "--max-retries", "0", "--out", str(path.parent / "out"),
        str(path), *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def prompt_ids() -> tuple[int, int]:
    """The first two prompt ids of the task."""
    first, second = sorted(load_prompts(lctg_dir(), "ad_text"))[:2]
    return first, second


def with_change(prompt_id: int, field: str, value: Any) -> str:
    row = good_row(prompt_id)
    if value is KeyError:
        del row[field]
    else:
        row[field] = value
    return json.dumps(row, ensure_ascii=False)


# The first line is a good row; the second: a field of a good row changed (or, without a field,
# the text given), and what the error says after the file's name. REPEATED: the first row's id.
REPEATED = object()
CASES = [
    (None, "{not json", ":2: not valid JSON"),
    ("prompt_id", 999, ':2: field "prompt_id": 999 is not a prompt of task ad_text'),
    ("prompt_id", "7", ':2: field "prompt_id": expected an integer, got a string'),
    ("prompt_id", REPEATED, ':2: field "prompt_id": {first} repeated (first at '),
    ("keyword_result", KeyError, ':2: field "keyword_result": missing'),
    ("char_count_result", ["a", "b"], ':2: field "char_count_result": 2 generations, expected 3'),
    (
        "format_result",
        ["a", None, "c"],
        ':2: field "format_result": generation 2 is null, expected a string',
    ),
    (
        "prohibited_word_result",
        "abc",
        ':2: field "prohibited_word_result": expected a list, got a string',
    ),
    ("model", "other", ":2: field \"model\": 'other' differs from 'm' at"),
]


@pytest.mark.parametrize(("field", "value", "message"), CASES)
def test_bad_rows_are_named(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    prompt_ids: tuple[int, int],
    field: str | None,
    value: Any,
    message: str,
) -> None:
    first, second = prompt_ids
    if field is None:
        second_line = value
    else:
        second_line = with_change(second, field, first if value is REPEATED else value)
    path = tmp_path / "generated.jsonl"
    path.write_text(json.dumps(good_row(first)) + "\n" + second_line + "\n", "utf-8")
    assert main(eval_args(path)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}{message.format(first=first)}"), err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_an_empty_file_and_a_missing_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prompt_ids: tuple[int, int]
) -> None:
    path = tmp_path / "generated.jsonl"
    path.write_text("\n", "utf-8")
    assert main(eval_args(path)) == 1
    assert capsys.readouterr().err == f"error: {path}: no generations\n"
    row = good_row(prompt_ids[0])
    del row["model"]
    path.write_text(json.dumps(row) + "\n", "utf-8")
    assert main(eval_args(path)) == 1
    assert 'field "model": missing (or pass --model NAME)' in capsys.readouterr().err


def test_in_a_subprocess_and_without_data(tmp_path: Path) -> None:
    path = tmp_path / "generated.jsonl"
    path.write_text(with_change(1, "prompt_id", 999) + "\n", "utf-8")
    result = run_cli(*eval_args(path))
    assert result.returncode == 1
    assert result.stderr == (
        f'error: {path}:1: field "prompt_id": 999 is not a prompt of task ad_text\n'
    )
    args = eval_args(path)
    args[args.index("--data") + 1] = str(tmp_path / "nowhere")
    result = run_cli(*args)
    assert result.returncode == 1 and "run `python -m pfgen_fast lctg data fetch`" in result.stderr
    assert len(result.stderr.splitlines()) == 1
