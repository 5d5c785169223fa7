"""Small benchmark checkouts written by the tests themselves (questions, reference answers and
runs of made-up text), and the CLI run as a user runs it."""

from __future__ import annotations

import json
import lzma
import os
import random
import subprocess
from pathlib import Path

import cli_runner

KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろん。"
QUESTIONS = {
    "Q01": "架空の町の名物料理について説明して。",
    "Q02": "架空の川の長さを教えて。",
}
LONG_MODEL = "an-organisation-with-a-long-name/a-model-whose-name-is-longer-than-forty-characters"


def made_up_text(rng: random.Random, low: int = 60, high: int = 140) -> str:
    return "".join(rng.choice(KANA) for _ in range(rng.randint(low, high)))


def write_data(directory: Path, *, answers: bool = True) -> Path:
    """Qxx.json files of two made-up questions (sources R and P)."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    for question_id, text in QUESTIONS.items():
        question: dict[str, object] = {
            "question_id": question_id,
            "question": text,
            "category": "test",
            "note": "",
            "keywords": [{"t": "あ"}],
        }
        if answers:
            references = [made_up_text(rng) for _ in range(40)]
            question["answers"] = {"R": references, "P": references[:20]}
        path = directory / f"{question_id}.json"
        path.write_text(json.dumps(question, ensure_ascii=False), encoding="utf-8")
    return directory


def answer_lines(trials: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    lines = [
        json.dumps({"question": text, "answer": made_up_text(rng)}, ensure_ascii=False)
        for _ in range(trials)
        for text in QUESTIONS.values()
    ]
    return ("\n".join(lines) + "\n").encode()


def write_run(root: Path, model: str, trials: int = 5, seed: int = 1) -> Path:
    """result/MODEL/trials.jsonl.xz and config.json; returns the trials file."""
    run_dir = root / "result" / model
    run_dir.mkdir(parents=True, exist_ok=True)
    config = {"model": model, "mode": "completion", "num_examples": 20}
    (run_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    trials_file = run_dir / "trials.jsonl.xz"
    trials_file.write_bytes(lzma.compress(answer_lines(trials, seed)))
    return trials_file


def checkout(root: Path, models: list[str]) -> Path:
    """A benchmark checkout: data/ and result/<model>/ for each model."""
    write_data(root / "data")
    for seed, model in enumerate(models, start=1):
        write_run(root, model, seed=seed)
    return root


def cli_env(cache: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PFGEN_FAST_CACHE": str(cache), "PFGEN_DATA_DIR": "", **extra}


def run_cli(
    *args: str | Path,
    cwd: Path,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`python -m pfgen_fast ARGS` in `cwd`, a user's there: its cache `cwd/.cache` unless
    `env` says otherwise."""
    return cli_runner.run_cli(
        *args, cwd=cwd, input=stdin, env=env or cli_env(cwd / ".cache"), timeout=timeout
    )


def assert_one_line_error(
    result: subprocess.CompletedProcess[str], *needles: str, status: int = 1
) -> str:
    """The run failed with `status` (2: a usage error) and one `error:` line holding every
    needle."""
    assert "Traceback" not in result.stderr, result.stderr
    assert "error: unexpected" not in result.stderr, result.stderr  # the guard caught a bug
    assert result.returncode == status, (result.returncode, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors, result.stderr
    for needle in needles:
        assert any(needle in line for line in errors), (needle, result.stderr)
    return errors[0]
