"""`python -m pfgen_fast mm score` as a user runs it: scored lines in input order, the aggregate
with --json, an output file, and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runner import run_cli


def write_lines(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def test_score_lines_and_aggregate(tmp_path: Path) -> None:
    items = [
        {"ref": "たかしが公園で遊んでいた。", "pred": "たかしが公園にいたようだ。", "id": 7},
        {"ref": "私は猫です。", "pred": "私は猫です。"},
    ]
    source = write_lines(tmp_path / "in.jsonl", items)
    result = run_cli("mm", "score", "--metric", "rougel", str(source), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines[:1]] == [7]
    assert lines[0]["score"] == pytest.approx(200 / 3)
    assert lines[1]["score"] == 100.0
    result = run_cli("mm", "score", "--metric", "rougel", "--json", str(source), cwd=tmp_path)
    aggregate = json.loads(result.stdout)
    assert aggregate["overall_score"] == pytest.approx(250 / 3)
    assert aggregate["details"] == {"rougel": aggregate["overall_score"]}
    output = tmp_path / "out.jsonl"
    result = run_cli("mm", "score", "--metric", "exact-match", "-o", str(output), str(source),
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0 and result.stdout == ""
    assert [json.loads(line)["score"] for line in output.read_text().splitlines()] == [0, 1]


@pytest.mark.parametrize(
    ("metric", "line", "message"),
    [
        ("rougel", {"pred": "x"}, 'in.jsonl:2: field "ref": missing'),
        ("rougel", {"ref": "x", "pred": 3}, 'in.jsonl:2: field "pred": expected a string, got'),
        ("rougel", {"ref": ["x"], "pred": "x"}, 'in.jsonl:2: field "ref": expected a string'),
        ("substring-match", {"ref": ["x", 1], "pred": "x"}, 'field "ref": element 1'),
        ("jdocqa", {"ref": "x", "pred": "x"}, 'field "answer_type": missing (metric jdocqa'),
        ("jdocqa", {"ref": "x", "pred": "x", "answer_type": 5}, "expected 0, 1, 2 or 3"),
        ("jic-vqa", {"ref": "x", "pred": "x"}, 'field "domain": missing'),
        ("mecha-ja", {"ref": "x", "pred": "x", "answer_type": 0, "background_text": ""},
         'field "question_id": missing'),
    ],
)  # fmt: skip
def test_bad_input_one_line_error(
    tmp_path: Path, metric: str, line: dict[str, object], message: str
) -> None:
    good = {"ref": "x", "pred": "x", "answer_type": 0, "domain": "d", "background_text": ""}
    source = write_lines(tmp_path / "in.jsonl", [{**good, "question_id": "q"}, line])
    result = run_cli("mm", "score", "--metric", metric, str(source), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_not_json_and_missing_file(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"ref": "x", "pred": "x"}\n{oops\n')
    result = run_cli("mm", "score", "--metric", "exact-match", str(source), cwd=tmp_path)
    assert result.returncode == 1 and "in.jsonl:2: not valid JSON" in result.stderr
    result = run_cli("mm", "score", "--metric", "exact-match", "nope.jsonl", cwd=tmp_path)
    assert result.returncode == 1 and "nope.jsonl: cannot read" in result.stderr
    result = run_cli("mm", "score", "--metric", "bleu", str(source), cwd=tmp_path)
    assert result.returncode != 0 and "bleu" in result.stderr
