"""`python -m pfgen_fast score`, run for real."""

from __future__ import annotations

import contextlib
import io
import json
import lzma
import select
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from cli_runner import run_cli
from pfgen_bench import result_dir
from pfgen_fast import QuestionScorer, ReferenceData
from pfgen_fast.pfgen.commands import score as score_command


@pytest.fixture(scope="module")
def trial_lines(bench: Path) -> list[bytes]:
    """The first 300 lines of a published trials file."""
    path = next(iter(sorted(result_dir().glob("**/trials.jsonl.xz"))))
    with lzma.open(path) as lines:
        return [line for _, line in zip(range(300), lines, strict=False)]


@pytest.mark.slow
def test_scores_every_line_in_input_order(data_dir: Path, trial_lines: list[bytes], tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"".join(trial_lines))
    result = run_cli("score", "--data", data_dir, path)
    assert result.returncode == 0, result.stderr
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


def test_a_second_run_reads_the_tables_the_first_kept(
    data_dir: Path, trial_lines: list[bytes], tmp_path
):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"".join(trial_lines))
    cache = tmp_path / "cache"
    first = run_cli("score", "--data", data_dir, path, env={"PFGEN_FAST_CACHE": str(cache)})
    (table_folder,) = (cache / "tables").iterdir()
    kept = {p: p.stat().st_ino for p in table_folder.iterdir()}
    questions = {json.loads(line)["question"] for line in trial_lines}
    assert len(kept) == len(questions)
    second = run_cli("score", "--data", data_dir, path, env={"PFGEN_FAST_CACHE": str(cache)})
    assert first.returncode == second.returncode == 0
    assert second.stdout == first.stdout
    assert {p: p.stat().st_ino for p in table_folder.iterdir()} == kept


def test_reads_standard_input_and_replaces_an_existing_scores_field(data_dir: Path):
    question = ReferenceData.load(data_dir).questions["Q02"].question
    line = json.dumps({"question": question, "answer": "算数の合計", "scores": 1}) + "\n"
    result = run_cli("score", "--data", data_dir, input=line.encode())
    assert result.returncode == 0, result.stderr
    written = json.loads(result.stdout)
    assert isinstance(written["scores"], dict)
    assert written["scores"]["helpfulness"] == 1.0


def test_lines_from_a_pipe_are_scored_as_they_come(data_dir: Path, trial_lines: list[bytes]):
    """Each line's output comes while the writer of the pipe waits, before its next line."""
    command = [sys.executable, "-m", "pfgen_fast", "score", "--data", str(data_dir)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            for line in trial_lines[:3]:
                process.stdin.write(line)
                process.stdin.flush()
                ready, _, _ = select.select([process.stdout], [], [], 120)
                assert ready, "no output while the pipe's writer waits"
                written = json.loads(process.stdout.readline())
                assert written["answer"] == json.loads(line)["answer"]
            process.stdin.close()
            assert process.stdout.read() == b""
            assert process.wait(timeout=60) == 0
        finally:
            process.kill()


def expected_output(lines: list[bytes], data_dir: Path) -> bytes:
    """What `score --skip-invalid` writes, line by line: each line orjson reads, with its
    record (`json.dumps` layout) added as its last field, or in place of its `scores` (then
    the object is written by orjson)."""
    references = ReferenceData.load(data_dir)
    scorers: dict[str, QuestionScorer] = {}
    written = []
    for raw in lines:
        try:
            record = orjson.loads(raw)
            question = references.by_text(record["question"])
            assert isinstance(record["answer"], str)
        except (orjson.JSONDecodeError, KeyError, TypeError, AssertionError):
            continue
        scorer = scorers.setdefault(question.question_id, QuestionScorer(question))
        scores_json = json.dumps(scorer.score([record["answer"]])[0], ensure_ascii=False).encode()
        if "scores" in record:
            record["scores"] = orjson.Fragment(scores_json)
            written.append(orjson.dumps(record) + b"\n")
        else:
            written.append(raw.rstrip()[:-1] + b', "scores": ' + scores_json + b"}\n")
    return b"".join(written)


def tricky_lines(data_dir: Path) -> list[tuple[bytes, bool]]:
    """Lines that the core reads or leaves to orjson, each with whether it is valid."""
    question = ReferenceData.load(data_dir).questions["Q02"].question
    q = json.dumps(question, ensure_ascii=False)
    escaped_q = json.dumps(question)  # every character as \\uXXXX
    deep = "[" * 1023 + "]" * 1023
    too_deep = "[" * 1024 + "]" * 1024
    return [
        (f'{{"question": {q}, "answer": "合計は\\n\\u3042\\ud83d\\ude00\\u0000"}}'.encode(), True),
        (f'{{"answer": "算数", "question": {escaped_q}, "n": [1e5, -0.5, {{}}]}}'.encode(), True),
        (f'{{"question": {q}, "answer": "a"}}  \r'.encode(), True),
        (f'{{"question": {q}, "answer": "a", "answer": "合計"}}'.encode(), True),
        (f'{{"question": {q}, "scores": [0], "answer": "合計"}}'.encode(), True),
        (f'{{"question": {q}, "answer": "a", "x": {deep}}}'.encode(), True),
        (f'{{"question": {q}, "answer": "a", "x": {too_deep}}}'.encode(), False),
        (f'{{"question": {q}, "answer": "a", "x": 1e400}}'.encode(), False),
        (f'{{"question": {q}, "answer": "a\\ud800"}}'.encode(), False),
        (f'{{"question": {q}, "answer": "a"}} x'.encode(), False),
        (f'{{"question": {q[:-1]}?", "answer": "a"}}'.encode(), False),
        (b" \x0b\x0c\t", True),  # blank: skipped, not a problem
    ]


def test_every_line_scored_as_orjson_reads_it(data_dir: Path, trial_lines: list[bytes], tmp_path):
    tricky = tricky_lines(data_dir)
    lines = [line for line, _ in tricky] + [line.rstrip(b"\n") for line in trial_lines[:40]]
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"\n".join(lines))  # the last line without a line break
    result = run_cli("score", "--data", data_dir, "--skip-invalid", path)
    assert result.returncode == 1, result.stderr  # lines were skipped
    assert result.stdout.encode() == expected_output(lines, data_dir)
    bad = [number for number, (_, valid) in enumerate(tricky, start=1) if not valid]
    reported = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert all(f"{path}:{n}:" in line for n, line in zip(bad, reported, strict=True))


def test_blocks_split_at_line_breaks(
    data_dir: Path, trial_lines: list[bytes], tmp_path, monkeypatch
):
    lines = [line for line, _ in tricky_lines(data_dir)] + trial_lines[:100]
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"\n".join(line.rstrip(b"\n") for line in lines) + b"\n")
    monkeypatch.setattr(score_command, "BLOCK_BYTES", 1000)
    out = io.BytesIO()
    with path.open("rb") as stream, contextlib.redirect_stderr(io.StringIO()) as errors:
        block_scorer = score_command.BlockScorer(ReferenceData.load(data_dir))
        skipped = score_command.score_stream(stream, "in", block_scorer, True, out)
    assert out.getvalue() == expected_output(lines, data_dir)
    bad = [n for n, (_, valid) in enumerate(tricky_lines(data_dir), start=1) if not valid]
    assert skipped == len(bad)
    assert [line.split(":")[1] for line in errors.getvalue().splitlines()] == list(map(str, bad))


BAD_LINES = [
    (b"{not json\n", "not valid JSON: unexpected character"),
    (b'{"answer": "a"}\n', 'field "question": missing'),
    (b'{"question": "x", "answer": 3}\n', 'field "answer": expected a string, got an integer'),
    (b'{"question": "no such question", "answer": "a"}\n', 'field "question"'),
    (b'{"question": "\xff\xfe", "answer": "a"}\n', "not valid UTF-8 at byte 14"),
    (b"[1, 2]\n", "expected a JSON object, got a list"),
]


@pytest.mark.parametrize(("bad_line", "message"), BAD_LINES)
def test_bad_line_is_a_one_line_error_naming_line_and_field(
    data_dir: Path, trial_lines: list[bytes], tmp_path, bad_line: bytes, message: str
):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(trial_lines[0] + bad_line + trial_lines[1])
    result = run_cli("score", "--data", data_dir, path)
    stderr = result.stderr
    assert result.returncode == 1
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert f"{path}:2:" in stderr and message in stderr


def test_skip_invalid_reports_and_goes_on(data_dir: Path, trial_lines: list[bytes], tmp_path):
    path = tmp_path / "answers.jsonl"
    bad = b"".join(line for line, _ in BAD_LINES)
    path.write_bytes(trial_lines[0] + bad + trial_lines[1])
    result = run_cli("score", "--data", data_dir, "--skip-invalid", path)
    assert result.returncode == 1  # lines were skipped
    assert len(result.stdout.splitlines()) == 2
    stderr = result.stderr
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
        (lambda raw: raw["answers"].__setitem__("P", []), 'field "answers.P": empty'),
        (lambda raw: raw.pop("question"), 'field "question": expected a string, got null'),
        (set_keywords([{"x": "a"}]), 'field "keywords[0]": expected exactly one of'),
        (
            set_keywords([{"or": [{"t": "(a"}]}]),
            'field "keywords[0].or[0].t": not a regular expression',
        ),
    ],
)
def test_bad_data_names_file_and_field(data_dir: Path, tmp_path, edit, message: str):
    broken = tmp_path / "data"
    copy_question(data_dir, broken, edit)
    result = run_cli("score", "--data", broken, input=b"")
    stderr = result.stderr
    assert result.returncode == 1 and "Traceback" not in stderr
    assert "Q02.json" in stderr and message in stderr


def test_data_directory_without_questions(tmp_path):
    result = run_cli("score", "--data", tmp_path, input=b"")
    assert result.returncode == 1
    assert "no Qxx.json question files" in result.stderr


def test_malformed_question_file(tmp_path):
    (tmp_path / "Q01.json").write_text("{", encoding="utf-8")
    result = run_cli("score", "--data", tmp_path, input=b"")
    assert result.returncode == 1
    assert "Q01.json:1: not valid JSON" in result.stderr
