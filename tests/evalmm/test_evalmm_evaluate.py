"""`mm evaluate` on an llm-jp-eval-mm result directory (judge on the local stand-in), `mm
leaderboard`, and `mm data fetch|verify` with an archive built here from ../shared files."""

from __future__ import annotations

import csv
import json
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_fast.evalmm.data import PUBLISHED
from pfgen_fast.testing import Reply, serve
from published import evalmm_dir

# Every file the manifest pins: `mm data fetch` fetches them all.
PINNED_FILES = list(PUBLISHED.load_manifest()["files"])
HERON = "src/eval_mm/metrics/heron_bench_scorer.py"
JMMMU = "src/eval_mm/metrics/jmmmu_scorer.py"


def prediction(question_id: int, text: str, answer: str) -> dict[str, Any]:
    return {"question_id": question_id, "text": text, "answer": answer, "input_text": "質問"}


def write_run(result: Path, task: str, model: str, lines: list[dict[str, Any]]) -> Path:
    folder = result / task / model
    folder.mkdir(parents=True)
    (folder / "prediction.jsonl").write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return folder


def judge(path: str, request: dict[str, Any]) -> Reply:
    found = re.search(r"Prediction: (\S+)", request["messages"][-1]["content"])
    return Reply("4" if found and found.group(1).startswith("猫") else "2")


@pytest.fixture()
def result(tmp_path: Path) -> Path:
    result = tmp_path / "result"
    write_run(
        result,
        "ja-vg-vqa-500",
        "model-a",
        [
            prediction(0, "猫がいます", "猫がいます"),
            prediction(1, "犬", "猫がいる"),
        ],
    )
    write_run(
        result,
        "ja-vg-vqa-500",
        "model-b",
        [
            prediction(0, "猫です", "猫がいます"),
            prediction(1, "猫です", "猫がいる"),
        ],
    )
    write_run(result, "jdocqa", "model-a", [prediction(0, "はい", "はい")])
    return result  # fmt: skip


def test_evaluate_writes_its_format_and_a_leaderboard(result: Path, tmp_path: Path) -> None:
    with serve(judge) as server:
        result_run = run_cli(
            "mm", "evaluate", str(result), "--base-url", server.base_url, "--judge-model", "j",
            "--evalmm-dir", str(evalmm_dir()), "--table", str(tmp_path / "board.csv"), cwd=tmp_path,
        )  # fmt: skip
    # jdocqa's items lack answer_type: reported, the other runs still scored.
    assert result_run.returncode == 1
    assert 'jdocqa/model-a/prediction.jsonl:1: field "answer_type": missing' in result_run.stderr
    assert not (result / "jdocqa" / "model-a" / "evaluation.jsonl").exists()
    folder = result / "ja-vg-vqa-500" / "model-a"
    evaluation = (folder / "evaluation.jsonl").read_text().splitlines()
    assert len(evaluation) == 1
    aggregates = json.loads(evaluation[0])
    assert aggregates["llm-as-a-judge"] == {
        "overall_score": 3.0,
        "details": {"llm_as_a_judge": 3.0},
    }
    assert aggregates["rougel"]["overall_score"] == pytest.approx(50.0)
    items = [json.loads(line) for line in (folder / "prediction.jsonl").read_text().splitlines()]
    assert [item["llm-as-a-judge"] for item in items] == [4, 2]
    assert items[0]["rougel"] == 100.0 and items[0]["input_text"] == "質問"
    lines = result_run.stdout.splitlines()
    assert lines[0] == "model\tja-vg-vqa-500/llm-as-a-judge\tja-vg-vqa-500/rougel"
    assert lines[1].startswith("model-a\t3.0\t")
    with open(tmp_path / "board.csv", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][0] == "model" and [row[0] for row in rows[1:]] == ["model-a", "model-b"]
    board = run_cli("mm", "leaderboard", str(result), cwd=tmp_path)
    assert board.returncode == 0 and board.stdout.splitlines()[0] == lines[0]


def test_evaluate_without_judge(result: Path, tmp_path: Path) -> None:
    needs_judge = run_cli("mm", "evaluate", str(result), cwd=tmp_path)
    assert needs_judge.returncode == 2
    assert "llm-as-a-judge asks a judge: give --base-url" in needs_judge.stderr
    plain = run_cli("mm", "evaluate", str(result), "--metrics", "rougel", "exact-match",
                    cwd=tmp_path)  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    jdocqa = json.loads((result / "jdocqa" / "model-a" / "evaluation.jsonl").read_text())
    assert jdocqa["exact-match"]["overall_score"] == 1.0


def build_archive(tmp_path: Path, change: str | None = None) -> Path:
    top = tmp_path / "staging" / "llm-jp-eval-mm-9f450a5"
    for name in PINNED_FILES:
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        text = (evalmm_dir() / name).read_text(encoding="utf-8")
        (top / name).write_text(text + ("# changed\n" if change == name else ""), "utf-8")
    (top / "README.md").write_text("not selected\n")
    archive = tmp_path / f"archive-{change is not None}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    return archive


def test_data_fetch_and_verify(tmp_path: Path) -> None:
    destination = tmp_path / "fetched"
    good = build_archive(tmp_path)
    fetched = run_cli("mm", "data", "fetch", "--url", good.as_uri(), "--dest", str(destination),
                      cwd=tmp_path)  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    assert all((destination / name).is_file() for name in PINNED_FILES)
    assert not (destination / "README.md").exists()
    assert run_cli("mm", "data", "verify", str(destination), cwd=tmp_path).returncode == 0
    bad = build_archive(tmp_path, change=HERON)
    refused = run_cli("mm", "data", "fetch", "--url", bad.as_uri(), "--dest", str(destination),
                      cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 1 and "heron_bench_scorer.py: SHA-256" in refused.stderr
    assert "# changed" not in (destination / HERON).read_text(encoding="utf-8")
    (destination / JMMMU).write_text("tampered\n")
    verify = run_cli("mm", "data", "verify", str(destination), cwd=tmp_path)
    assert verify.returncode == 1 and "jmmmu_scorer.py: SHA-256" in verify.stderr


def test_evaluate_with_documents(tmp_path: Path) -> None:
    result = tmp_path / "result"
    write_run(result, "jdocqa", "model-a", [prediction(0, "はい、そうです", "はい"),
                                           prediction(1, "1000円", "1,000円")])  # fmt: skip
    write_run(result, "jdocqa", "model-b", [prediction(0, "はい", "はい"), prediction(7, "x", "y")])
    docs = tmp_path / "jdocqa-docs.jsonl"
    docs.write_text('{"question_id": 0, "answer_type": 0}\n{"question_id": 1, "answer_type": 2}\n')
    run = run_cli("mm", "evaluate", str(result), "--docs", f"jdocqa={docs}", cwd=tmp_path)
    assert run.returncode == 1
    assert f"model-b/prediction.jsonl:2: no document with question_id 7 in {docs}" in run.stderr
    evaluation = json.loads((result / "jdocqa" / "model-a" / "evaluation.jsonl").read_text())
    assert evaluation["jdocqa"]["details"]["yesno_exact"] == 1.0
    assert evaluation["jdocqa"]["details"]["numerical_exact"] == 0.0
    lines = (result / "jdocqa" / "model-a" / "prediction.jsonl").read_text().splitlines()
    assert [json.loads(line)["jdocqa"] for line in lines] == [1, 0]
    assert "answer_type" not in json.loads(lines[0])
    bad = run_cli("mm", "evaluate", str(result), "--docs", "jdocqa", cwd=tmp_path)
    assert bad.returncode == 2 and "argument --docs: 'jdocqa': expected TASK=FILE" in bad.stderr


def test_evaluate_refuses_documents_of_no_task_or_no_file(tmp_path: Path) -> None:
    result = tmp_path / "result"
    write_run(result, "jdocqa", "model-a", [prediction(0, "はい", "はい")])
    docs = tmp_path / "jdocqa-docs.jsonl"
    docs.write_text('{"question_id": 0, "answer_type": 0}\n')
    for given, said in [
        ("nosuch=missing.jsonl", "the result directory has no task 'nosuch' (its tasks: jdocqa)"),
        (f"nosuch={docs}", "the result directory has no task 'nosuch' (its tasks: jdocqa)"),
        ("jdocqa=missing.jsonl", "missing.jsonl: no such file"),
    ]:
        run = run_cli("mm", "evaluate", str(result), "--docs", given, cwd=tmp_path)
        assert run.returncode == 1, run.stderr
        assert run.stderr == f"error: --docs {given}: {said}\n"
        assert not (result / "jdocqa" / "model-a" / "evaluation.jsonl").exists()
