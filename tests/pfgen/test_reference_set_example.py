"""The README's "Building reference sets" example end to end: synthetic candidates for Q04, a
reference set built from them, and published runs evaluated against that set alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_runner import run_cli
from published import published_runs


def test_runs_are_evaluated_against_a_reference_set_of_one_question(
    bench: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    for run in published_runs()[:2]:
        target = runs / run.relative_to(bench / "result")
        target.mkdir(parents=True)
        shutil.copy(run / "trials.jsonl.xz", target)
    data = bench / "data"
    synth = ["synth", "--data", data, "--question", "Q04", "--count", "20000", "--out", "c.jsonl"]
    assert run_cli(*synth, cwd=tmp_path).returncode == 0
    build = ["build-refs", "--meta", data / "meta", "--candidates", "c.jsonl", "--out", "refs"]
    assert run_cli(*build, cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / "refs").glob("Q*.json")) == ["Q04.json"]
    done = run_cli("eval", "--data", "refs", "runs/**/trials.jsonl.xz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(
        "note: refs has 1 of the benchmark's 50 questions (Q04): each run is scored on those, "
        "its answers to the others left out\n"
    )
    assert "2 scored, 0 already current, 0 failed" in done.stderr
    for result in runs.glob("**/result.json"):
        assert list(json.loads(result.read_bytes())["questions"]) == ["Q04"]
    assert len(list(runs.glob("**/result.json"))) == 2


def test_a_run_answering_none_of_the_datas_questions_fails_alone(
    bench: Path, tmp_path: Path
) -> None:
    (tmp_path / "refs").mkdir()
    shutil.copy(bench / "data" / "Q04.json", tmp_path / "refs")
    run = tmp_path / "runs" / "org" / "model"
    run.mkdir(parents=True)
    line = {"question": "Rubyについて教えて。", "answer": "まつもとゆきひろ氏が作った言語です。"}
    (run / "trials.jsonl").write_text(json.dumps(line, ensure_ascii=False) + "\n", "utf-8")
    for options in ([], ["--allow-partial"]):
        done = run_cli("eval", *options, "--data", "refs", "runs/**/trials.jsonl", cwd=tmp_path)
        assert done.returncode == 1
        assert f"error: {run.relative_to(tmp_path)}/trials.jsonl: no answers to the " in done.stderr
        assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
        assert not (run / "result.json").exists()
