"""One broken run never stops `eval`: each input file of a run (config.json, trials.jsonl.xz, the
result.json and score cache of an earlier evaluation) broken in turn, in a checkout of good
runs: the good runs are scored and written, the broken one is named on one line, exit 1."""

from __future__ import annotations

import json
import lzma
import random
from pathlib import Path

import pytest

from cli_runner import run_cli

QUESTION = "架空の島の天気を教えて。"
GOOD_RUNS = 4


def write_data(directory: Path) -> list[str]:
    rng = random.Random(8)
    answers = ["".join(rng.choice("あいうえおかきくけこ。") for _ in range(80)) for _ in range(20)]
    directory.mkdir()
    question = {"question_id": "Q01", "question": QUESTION, "category": "test", "note": "",
                "keywords": [{"t": "あ"}], "answers": {"R": answers}}  # fmt: skip
    (directory / "Q01.json").write_text(json.dumps(question, ensure_ascii=False), "utf-8")
    return answers


def write_run(run: Path, answers: list[str]) -> None:
    run.mkdir(parents=True)
    lines = "".join(
        json.dumps({"question": QUESTION, "answer": a}, ensure_ascii=False) + "\n" for a in answers
    )
    (run / "trials.jsonl.xz").write_bytes(lzma.compress(lines.encode()))
    (run / "config.json").write_text(json.dumps({"model": run.name, "mode": "qa"}), "utf-8")


# Each way a run's file can be broken: (file, content).
BROKEN = {
    "config not JSON": ("config.json", b'{"model": "x",'),
    "config an array": ("config.json", b"[1, 2]"),
    "config not UTF-8": ("config.json", b'{"model": "\xff"}'),
    "config deeply nested": ("config.json", b"[" * 100_000 + b"]" * 100_000),
    "config a folder": ("config.json", None),
    "trials truncated xz": ("trials.jsonl.xz", "truncated"),
    "trials random bytes": ("trials.jsonl.xz", bytes(random.Random(1).randbytes(2000))),
    "trials empty": ("trials.jsonl.xz", b""),
    "trials not JSON lines": ("trials.jsonl.xz", lzma.compress(b"not json\n")),
    "trials a folder": ("trials.jsonl.xz", None),
    "result not JSON": ("result.json", b'{"input_hash": '),
    "result wrong types": ("result.json", b'{"input_hash": 1, "scores": "x", "config": []}'),
    "result deeply nested": ("result.json", b'{"input_hash": ' + b"[" * 100_000 + b"]" * 100_000),
    "result a folder": ("result.json", None),
    "score cache not JSON": ("cache/scores.json", b"\x00\x01"),
    "score cache a file": ("cache", b"not a folder"),
}


@pytest.mark.slow
@pytest.mark.parametrize("broken", list(BROKEN))
def test_one_broken_run_leaves_the_others_scored(tmp_path: Path, broken: str) -> None:
    answers = write_data(tmp_path / "data")
    result = tmp_path / "result"
    for number in range(GOOD_RUNS + 1):
        write_run(result / "org" / f"model{number}", answers[number : number + 5])
    bad = result / "org" / "model2"
    name, content = BROKEN[broken]
    path = bad / name
    if path.exists():
        path.unlink()
    if content is None:
        path.mkdir(parents=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        if content == "truncated":
            content = (bad.parent / "model0" / "trials.jsonl.xz").read_bytes()[:40]
        assert isinstance(content, bytes)
        path.write_bytes(content)
    ran = run_cli("eval", "--data", tmp_path / "data", cwd=tmp_path)
    assert "Traceback" not in ran.stderr and "unexpected" not in ran.stderr, ran.stderr
    others = [result / "org" / f"model{n}" for n in range(GOOD_RUNS + 1) if n != 2]
    assert all(json.loads((run / "result.json").read_bytes())["num_trials"] == 5 for run in others)
    shown = bad.relative_to(tmp_path)  # the default pattern's paths
    if name.startswith(("result", "cache")) or broken == "config a folder":
        # An earlier evaluation's files are made again; a folder is no config: either the run
        # is scored or it is named.
        assert ran.returncode == 0 or f"{shown}" in ran.stderr, ran.stderr
        return
    assert ran.returncode == 1, ran.stderr
    named = [line for line in ran.stderr.splitlines() if str(shown / name) in line]
    assert named, ran.stderr
    assert f"{GOOD_RUNS} scored" in ran.stderr and "1 failed" in ran.stderr
