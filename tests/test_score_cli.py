"""`python -m pfgen_fast score`, run for real in a subprocess."""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RESULT_DIR
from pfgen_fast import QuestionScorer, ReferenceData


def run_score(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pfgen_fast", "score", *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def trial_lines(bench: Path) -> list[bytes]:
    """The first 300 lines of a published trials file."""
    path = next(iter(sorted(RESULT_DIR.glob("**/trials.jsonl.xz"))))
    with lzma.open(path) as lines:
        return [line for _, line in zip(range(300), lines, strict=False)]


def test_scores_every_line_in_input_order(data_dir: Path, trial_lines: list[bytes], tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"".join(trial_lines))
    result = run_score("--data", data_dir, path)
    assert result.returncode == 0, result.stderr.decode()
    outputs = [json.loads(line) for line in result.stdout.splitlines()]
    inputs = [json.loads(line) for line in trial_lines]
    assert len(outputs) == len(inputs)
    references = ReferenceData.load(data_dir)
    for given, written in zip(inputs, outputs, strict=True):
        scores = written.pop("scores")
        assert written == given  # the input object, untouched, keys in order
        assert list(written) == list(given)
        question = references.by_text(given["question"])
        assert scores == QuestionScorer(question).score([given["answer"]])[0]
        assert list(scores) == [
            "fluency",
            "fluency_discount",
            "truthfulness",
            "helpfulness",
            "helpfulness_results",
            "average",
        ]


def test_reads_standard_input_and_replaces_an_existing_scores_field(data_dir: Path):
    question = ReferenceData.load(data_dir).questions["Q02"].question
    line = json.dumps({"question": question, "answer": "算数の合計", "scores": 1}) + "\n"
    result = run_score("--data", data_dir, stdin=line.encode())
    assert result.returncode == 0, result.stderr.decode()
    written = json.loads(result.stdout)
    assert isinstance(written["scores"], dict)
    assert written["scores"]["helpfulness"] == 1.0


BAD_LINES = [
    (b"{not json\n", "invalid JSON"),
    (b'{"answer": "a"}\n', "missing field 'question'"),
    (b'{"question": "x", "answer": 3}\n', "field 'answer' must be a string"),
    (b'{"question": "no such question", "answer": "a"}\n', "field 'question'"),
    (b'{"question": "\xff\xfe", "answer": "a"}\n', "invalid UTF-8"),
    (b"[1, 2]\n", "expected a JSON object"),
]


@pytest.mark.parametrize(("bad_line", "message"), BAD_LINES)
def test_bad_line_is_a_one_line_error_naming_line_and_field(
    data_dir: Path, trial_lines: list[bytes], tmp_path, bad_line: bytes, message: str
):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(trial_lines[0] + bad_line + trial_lines[1])
    result = run_score("--data", data_dir, path)
    stderr = result.stderr.decode()
    assert result.returncode == 1
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert f"{path}:2:" in stderr and message in stderr


def test_skip_invalid_reports_and_goes_on(data_dir: Path, trial_lines: list[bytes], tmp_path):
    path = tmp_path / "answers.jsonl"
    bad = b"".join(line for line, _ in BAD_LINES)
    path.write_bytes(trial_lines[0] + bad + trial_lines[1])
    result = run_score("--data", data_dir, "--skip-invalid", path)
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 2
    stderr = result.stderr.decode()
    assert "Traceback" not in stderr
    assert all(f"{path}:{n}:" in stderr for n in range(2, 2 + len(BAD_LINES)))


def copy_question(data_dir: Path, target: Path, edit) -> None:
    target.mkdir()
    raw = json.loads((data_dir / "Q02.json").read_text(encoding="utf-8"))
    edit(raw)
    (target / "Q02.json").write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")


def set_keywords(rules):
    return lambda raw: raw.__setitem__("keywords", rules)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw["answers"].__setitem__("P", []), "answers.P is empty"),
        (lambda raw: raw.pop("question"), "field 'question'"),
        (set_keywords([{"x": "a"}]), "keywords[0]: a keyword rule needs exactly one of"),
        (set_keywords([{"or": [{"t": "(a"}]}]), "keywords[0].or[0].t: invalid regular expression"),
    ],
)
def test_bad_data_names_file_and_field(data_dir: Path, tmp_path, edit, message: str):
    broken = tmp_path / "data"
    copy_question(data_dir, broken, edit)
    result = run_score("--data", broken, stdin=b"")
    stderr = result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in stderr
    assert "Q02.json" in stderr and message in stderr


def test_data_directory_without_questions(tmp_path):
    result = run_score("--data", tmp_path, stdin=b"")
    assert result.returncode == 1
    assert "no Qxx.json question files" in result.stderr.decode()


def test_malformed_question_file(tmp_path):
    (tmp_path / "Q01.json").write_text("{", encoding="utf-8")
    result = run_score("--data", tmp_path, stdin=b"")
    assert result.returncode == 1
    assert "Q01.json: not valid JSON" in result.stderr.decode()
