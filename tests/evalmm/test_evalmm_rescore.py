"""Re-scoring through the CLI keeps what it did not redo: `mm run` reusing predictions leaves
their generation record as it was and records its scoring apart; `mm evaluate --metrics`
and `mm run --metrics` keep the other metrics' totals and per-item scores; and a run the
client stops past its share of refused requests says so plainly and records every refused
item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_evalmm_run import TASK, image_bytes, lines, mm_run, one_image_task

from cli_runner import run_cli
from pfgen_fast.testing import Reply, prompt_text, serve

FOLDER = Path(TASK) / "org" / "vlm-1"


def images(count: int) -> list[bytes]:
    return [image_bytes((16 + i, 16), "PNG", i) for i in range(count)]


def record(folder: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((folder / "run_info.json").read_text())
    return value


def test_reused_predictions_keep_their_generation_record(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", images(3))
    out = tmp_path / "r"
    folder = out / FOLDER
    with serve() as vlm:
        made = mm_run(vlm.base_url, data, out, "--max-tokens", "64", "--inference-only")
        assert made.returncode == 0, made.stderr
        first = record(folder)
        rescored = mm_run(
            vlm.base_url, data, out, "--max-tokens", "9", "--temperature", "0.5",
            "--image-format", "png", "--neologdn",
        )  # fmt: skip
    assert rescored.returncode == 0, rescored.stderr
    assert vlm.requests_count == 3  # the predictions were reused
    again = record(folder)
    assert again["generation"] == first["generation"]
    assert again["generation"]["max_tokens"] == 64
    assert again["generation"]["image_format"] == "original"
    assert first["scoring"] == {}
    assert again["scoring"]["rougel"]["neologdn"] is True
    assert {key: again[key] for key in first if key != "scoring"} == {
        key: value for key, value in first.items() if key != "scoring"
    }
    assert again["task"] == TASK and again["rotate_choices"] is False


def scored_twice(tmp_path: Path, *again: str) -> tuple[Path, dict[str, Any], Any]:
    """A run scored with rougel and substring-match, then `mm run` again with `again`
    (nothing more when empty): its folder, its first evaluation and the second run."""
    data = one_image_task(tmp_path / "data", images(3))
    out = tmp_path / "r"
    with serve() as vlm:
        made = mm_run(vlm.base_url, data, out, "--metrics", "rougel", "substring-match")
        assert made.returncode == 0, made.stderr
        before = json.loads((out / FOLDER / "evaluation.jsonl").read_text())
        second = mm_run(vlm.base_url, data, out, *again) if again else None
    assert list(before) == ["rougel", "substring-match"]
    return out / FOLDER, before, second


def test_evaluate_one_metric_keeps_the_others(tmp_path: Path) -> None:
    folder, before, _ = scored_twice(tmp_path)
    out = tmp_path / "r"
    rescored = run_cli("mm", "evaluate", out, "--metrics", "rougel", "--neologdn", cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stderr
    after = json.loads((folder / "evaluation.jsonl").read_text())
    assert after == before
    assert all("substring-match" in line for line in lines(folder / "prediction.jsonl"))
    assert "substring-match" in rescored.stdout  # the leaderboard's column
    assert record(folder)["scoring"]["rougel"]["neologdn"] is True
    assert record(folder)["scoring"]["substring-match"]["neologdn"] is False


def test_run_reusing_with_one_metric_keeps_the_others(tmp_path: Path) -> None:
    folder, before, again = scored_twice(tmp_path, "--metrics", "substring-match")
    assert again.returncode == 0, again.stderr
    assert json.loads((folder / "evaluation.jsonl").read_text()) == before
    assert all("rougel" in line for line in lines(folder / "prediction.jsonl"))
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["metrics"] == ["rougel", "substring-match"]


def refusing_some(path: str, body: dict[str, Any]) -> Reply:
    """Items 0-4 refused for themselves (a context-length error), the others answered."""
    if any(f"質問{i}：" in prompt_text(body) for i in range(5)):
        return Reply(status=400, error="This model's maximum context length is 2048 tokens")
    return Reply(text="答え")


def test_a_run_the_client_stops_records_every_refused_item(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", images(30))
    out = tmp_path / "r"
    with serve(refusing_some) as vlm:
        result = mm_run(vlm.base_url, data, out, "--concurrency", "1", "--max-retries", "0")
    assert result.returncode == 1
    [message] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "asked so far requests" not in message
    errors = lines(out / FOLDER / "error_message.jsonl")
    assert [error["question_id"] for error in errors] == ["0", "1", "2", "3"]
    assert all("context" in error["error"] for error in errors)
    assert f"{TASK}: 4 of " in message and "failed, more than 10%: stopped" in message
    assert str(out / FOLDER / "error_message.jsonl") in message
    assert not (out / FOLDER / "prediction.jsonl").exists()
    assert "This is a bug" not in result.stderr
