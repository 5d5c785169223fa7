"""`synth`: deterministic synthetic candidates from a character n-gram model of the references."""

from __future__ import annotations

import json
import lzma
import subprocess
from pathlib import Path

import numpy as np
import polars as pl

from cli_runner import run_cli
from pfgen_fast.pfgen.construct.synth import CharModel
from pfgen_fast.pfgen.data import load_question

QUESTION_ID = "Q04"


def synth(data_dir: Path, out: Path, count: int, seed: int) -> subprocess.CompletedProcess[str]:
    return run_cli(
        *["synth", "--data", data_dir, "--question", QUESTION_ID, "--count", count],
        *["--seed", seed, "--out", out],
        timeout=120,
    )


def test_writes_deterministic_candidates(tmp_path: Path, data_dir: Path) -> None:
    first, again, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    for path, seed in ((first, 7), (again, 7), (other, 8)):
        result = synth(data_dir, path, 3000, seed)
        assert result.returncode == 0, result.stderr
    assert first.read_bytes() == again.read_bytes()
    assert first.read_bytes() != other.read_bytes()
    question = load_question(data_dir / f"{QUESTION_ID}.json")
    records = [json.loads(line) for line in first.read_text("utf-8").splitlines()]
    assert len(records) == 3000
    assert all(r["question"] == question.question for r in records)
    lengths = np.array([len(r["answer"]) for r in records])
    assert 90 <= lengths.mean() <= 125 and lengths.max() <= 200
    assert 0.3 <= np.mean((lengths >= 80) & (lengths <= 120))
    assert len({r["answer"] for r in records}) > 2500  # varied, not copies
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_clean_answers_reuse_the_references_5grams(data_dir: Path) -> None:
    question = load_question(data_dir / f"{QUESTION_ID}.json")
    references = [a for answers in question.answers.values() for a in answers]
    known = {a[i : i + 5] for a in references for i in range(len(a) - 4)}
    answers = CharModel(references).sample(2000, np.random.default_rng(1))
    grams = [{a[i : i + 5] for i in range(len(a) - 4)} for a in answers]
    unseen = [bool(g - known) for g in grams]
    # Noise (0.2% of characters) makes some answers hold unseen 5-grams; most hold none.
    assert 0.02 < np.mean(unseen) < 0.6


def test_parquet_and_xz_outputs(tmp_path: Path, data_dir: Path) -> None:
    assert synth(data_dir, tmp_path / "s.parquet", 500, 1).returncode == 0
    assert synth(data_dir, tmp_path / "s.jsonl.xz", 500, 1).returncode == 0
    frame = pl.read_parquet(tmp_path / "s.parquet")
    with lzma.open(tmp_path / "s.jsonl.xz", "rt", encoding="utf-8") as lines:
        answers = [json.loads(line)["answer"] for line in lines]
    assert frame["answer"].to_list() == answers


def test_unknown_question_is_an_error(tmp_path: Path, data_dir: Path) -> None:
    result = run_cli(
        *["synth", "--data", data_dir, "--question", "Q99", "--count", "5"],
        *["--out", tmp_path / "x.jsonl"],
        timeout=60,
    )
    assert result.returncode == 1
    assert "no question 'Q99'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.jsonl").exists()
