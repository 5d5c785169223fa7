"""`eval`'s two readers give the same files: runs the core reads (decompressed, grouped and
scored without an object per answer) and runs it leaves to Python's reader (here: lines with a
`scores` field), with regular-expression keyword rules, in both sum modes."""

from __future__ import annotations

import json
import lzma
import random
from pathlib import Path

import pytest
from user_facing_fixtures import QUESTIONS, cli_env, made_up_text, run_cli, write_data

from pfgen_fast import QuestionScorer, ReferenceData

# Q02's rules: regular expressions (matched in Python, handed to the core) beside a literal.
REGEX_KEYWORDS = [
    {"t": "[あい]+う"},
    {"or": [{"t": "か.き"}, {"t": "さし"}], "name": "かき or さし", "importance": 0.5},
]


def regex_data(directory: Path) -> Path:
    write_data(directory)
    path = directory / "Q02.json"
    question = json.loads(path.read_text(encoding="utf-8"))
    question["keywords"] = REGEX_KEYWORDS
    path.write_text(json.dumps(question, ensure_ascii=False), encoding="utf-8")
    return directory


def run_lines(seed: int, trials: int) -> list[dict[str, object]]:
    """Answers to both questions, some matching the rules, with extra fields of every kind."""
    rng = random.Random(seed)
    records: list[dict[str, object]] = []
    for trial in range(trials):
        for text in QUESTIONS.values():
            answer = made_up_text(rng, 5, 60) + rng.choice(["いあう", "かなき", "さし", "\n改行"])
            extra = rng.choice([{"id": trial}, {"meta": {"t": [1.5, None, True]}}, {}])
            records.append({"question": text, "answer": answer, **extra})
    return records


def encode(records: list[dict[str, object]], seed: int, careful: bool) -> bytes:
    """JSON lines in assorted spellings (escapes, CRLF, blank lines); with `careful`, each
    object also has a `scores` field, which the core leaves to Python's reader."""
    rng = random.Random(seed)
    lines = []
    for record in records:
        if careful:
            record = {**record, "scores": {"old": 1}}
        line = json.dumps(record, ensure_ascii=rng.random() < 0.3)
        lines.append(line + rng.choice(["\n", "\r\n", "\n\n", "  \n"]))
    return "".join(lines).encode()


def write_runs(root: Path, seeds: list[int]) -> list[Path]:
    """Each seed's run twice: as the core reads it, and as it leaves it to Python."""
    paths = []
    for seed in seeds:
        records = run_lines(seed, trials=3 + seed % 4)
        for kind, careful in (("core", False), ("python", True)):
            run = root / "result" / f"model-{seed}" / kind
            run.mkdir(parents=True)
            (run / "config.json").write_text(json.dumps({"model": f"m{seed}"}))
            path = run / "trials.jsonl.xz"
            path.write_bytes(lzma.compress(encode(records, seed, careful)))
            paths.append(path)
    return paths


def without_input_hash(text: bytes, run: Path) -> str:
    input_hash = json.loads(text)["input_hash"]
    return text.decode().replace(input_hash, "HASH").replace(str(run), "RUN")


@pytest.mark.parametrize("legacy_sum", [False, True])
def test_core_and_python_readers_write_the_same_files(tmp_path, legacy_sum: bool):
    data = regex_data(tmp_path / "data")
    seeds = [1, 2, 3, 4, 5]
    paths = write_runs(tmp_path, seeds)
    options = ["--legacy-sum"] if legacy_sum else []
    result = run_cli(
        "eval", "--data", data, "--json", *options, *paths,
        cwd=tmp_path, env=cli_env(tmp_path / ".cache"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"{len(paths)} scored" in result.stderr
    references = ReferenceData.load(data)
    scorers = {q: QuestionScorer(question) for q, question in references.questions.items()}
    for seed in seeds:
        core, python = (tmp_path / "result" / f"model-{seed}" / kind for kind in ("core", "python"))
        for name in ("result.json", "cache/scores.json"):
            assert without_input_hash((core / name).read_bytes(), core) == without_input_hash(
                (python / name).read_bytes(), python
            ), (seed, name)
        # The records are the scorer's, in file order.
        cache = json.loads((core / "cache" / "scores.json").read_bytes())
        assert cache["legacy_sum"] is legacy_sum
        records = run_lines(seed, trials=3 + seed % 4)
        for question_id, scorer in scorers.items():
            text = references.questions[question_id].question
            answers = [str(r["answer"]) for r in records if r["question"] == text]
            assert cache["questions"][question_id] == scorer.score(answers, legacy_sum)
        samples = json.loads((core / "result.json").read_bytes())["questions"]["Q02"]["samples"]
        assert samples and all(
            "scores" in sample and "question" not in sample for sample in samples
        )


def test_a_lone_carriage_return_splits_the_line_as_before(tmp_path):
    data = regex_data(tmp_path / "data")
    text = QUESTIONS["Q01"]
    path = tmp_path / "run" / "trials.jsonl.xz"
    path.parent.mkdir()
    line = json.dumps({"question": text, "answer": "あ"}, ensure_ascii=False)
    path.write_bytes(lzma.compress(f'{line}\n{{"question": "{text}",\r"answer": "a"}}\n'.encode()))
    result = run_cli("eval", "--data", data, path, cwd=tmp_path, env=cli_env(tmp_path / ".cache"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{path}:2: not valid JSON" in result.stderr
