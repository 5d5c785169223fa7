"""`mm run` end to end: real CLI subprocesses against the 127.0.0.1 VLM stand-in, on small
local datasets in the Hub layout made here with Pillow and pyarrow; kill -9 and resume, two
servers, the bad inputs, the result folder as llm-jp-eval-mm's own readers read it, and
`mm leaderboard`'s formats and figure."""

from __future__ import annotations

import importlib.util
import io
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

import published
from cli_runner import run_cli
from pfgen_fast.testing import REFUSAL, Reply, Responder, failing, prompt_text, serve

TASK = "ja-vlm-bench-in-the-wild"
MULTI = "ja-multi-image-vqa"
IMAGE_COLUMN = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def image_bytes(size: tuple[int, int], file_format: str, shade: int = 0) -> bytes:
    image = Image.new("RGB", size, (shade % 256, 90, 200))
    buffer = io.BytesIO()
    image.save(buffer, format=file_format)
    return buffer.getvalue()


def write_dataset(folder: Path, split: str, columns: dict[str, pa.Array]) -> Path:
    """A dataset repository as `huggingface-cli download` leaves it: a card whose YAML names
    the config and split, and one parquet file."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), folder / "data" / f"{split}-00000-of-00001.parquet")
    card = (
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        f"  - split: {split}\n    path: data/{split}-*\n---\n# test copy\n"
    )
    (folder / "README.md").write_text(card, encoding="utf-8")
    return folder


def one_image_task(folder: Path, images: list[bytes], split: str = "test") -> Path:
    """ja-vlm-bench-in-the-wild's columns: question, image, answer."""
    count = len(images)
    return write_dataset(
        folder,
        split,
        {
            "question": pa.array([f"質問{i}：何が見えますか。" for i in range(count)]),
            "image": pa.array(
                [{"bytes": data, "path": None} for data in images], type=IMAGE_COLUMN
            ),
            "answer": pa.array([f"答え{i}" for i in range(count)]),
        },
    )


def multi_image_task(folder: Path, counts: list[int]) -> Path:
    """ja-multi-image-vqa's columns: question (with "<image> "), images, answer."""
    rows = [
        [{"bytes": image_bytes((40 + 10 * k, 30 + i), "PNG", k), "path": None} for k in range(n)]
        for i, n in enumerate(counts)
    ]
    return write_dataset(
        folder,
        "test",
        {
            "question": pa.array([f"<image> <image> 比べて{i}" for i in range(len(counts))]),
            "images": pa.array(rows, type=pa.list_(IMAGE_COLUMN)),
            "answer": pa.array([f"答え{i}" for i in range(len(counts))]),
        },
    )


def mixed_images(count: int) -> list[bytes]:
    formats = ["PNG", "JPEG", "GIF", "BMP", "WEBP"]
    return [image_bytes((64 + i, 48), formats[i % len(formats)], i) for i in range(count)]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def answering(answer: Callable[[str], str]) -> Responder:
    """A responder replying `answer(text)` to a request's text."""
    return lambda path, body: Reply(text=answer(prompt_text(body)))


def mm_run(
    url: str | list[str],
    data: Path,
    out: Path,
    *extra: Any,
    task: str = TASK,
    process: bool = False,
) -> Any:
    urls = [url] if isinstance(url, str) else url
    servers = [part for u in urls for part in ("--base-url", u)]
    return run_cli(
        "mm", "run", "--task", task, "--model", "org/vlm-1", *servers, "--data", data,
        "--out", out, "--metrics", "rougel", "--timeout", "10", *extra, cwd=out.parent,
        process=process,
    )  # fmt: skip


def test_progress_counts_the_tasks_items_from_the_start(tmp_path: Path) -> None:
    """Piped: plain lines with done/total (the items counted before the first request), the
    total corrected to the requests made when an item's image fails; at most 11 lines."""
    data = one_image_task(tmp_path / "data", [*mixed_images(39), b""])
    out = tmp_path / "result"
    with serve() as vlm:
        result = mm_run(vlm.base_url, data, out, "--concurrency", "1")
    assert result.returncode == 1, result.stderr  # the 0-byte image fails its item
    shown = [line for line in result.stderr.splitlines() if line.startswith(f"{TASK}: ")]
    progress = [line for line in shown if "/s" in line]
    assert progress and len(progress) <= 11, result.stderr
    assert progress[0].startswith(f"{TASK}: 4/40 (10%)"), result.stderr
    assert progress[-1].startswith(f"{TASK}: 39/39 (100%)"), result.stderr


def original_result_schema() -> Any:
    """llm-jp-eval-mm's own reader of result folders (a module of the standard library only)."""
    path = published.evalmm_dir() / "src" / "eval_mm" / "result_schema.py"
    spec = importlib.util.spec_from_file_location("original_result_schema", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_run_sends_each_item_as_stored_and_writes_the_original_layout(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", mixed_images(6))
    out = tmp_path / "result"
    with serve() as vlm:
        url = vlm.base_url
        first = mm_run(url, data, out)
        assert first.returncode == 0, first.stderr
        again = mm_run(url, data, out, "--overwrite")
    assert again.returncode == 0, again.stderr
    assert vlm.requests_count == 6  # the re-run asked nothing: every reply came from the cache
    kinds = ["image/png", "image/jpeg", "image/gif", "image/png", "image/webp", "image/png"]
    assert sorted((s.text, s.images[0]) for s in vlm.received) == [
        (f"質問{i}：何が見えますか。", (kinds[i], 64 + i, 48)) for i in range(6)
    ]
    assert all(
        s.params == {"max_tokens": 256, "temperature": 0.0, "top_p": 1.0} for s in vlm.received
    )
    assert all(s.model == "org/vlm-1" and s.detail == [None] for s in vlm.received)
    folder = out / TASK / "org" / "vlm-1"
    predictions = lines(folder / "prediction.jsonl")
    assert [p["question_id"] for p in predictions] == [str(i) for i in range(6)]
    assert list(predictions[0]) == ["question_id", "text", "answer", "input_text", "rougel"]
    assert predictions[2]["answer"] == "答え2"
    assert predictions[2]["input_text"] == "質問2：何が見えますか。"
    assert not (folder / "error_message.jsonl").exists()
    schema = original_result_schema()
    # The original's reader of manifest.json takes no key beyond its own.
    manifest = schema.RunManifest.from_file(str(folder / "manifest.json"))
    assert manifest.schema_version == "1.0" and manifest.task_id == TASK
    assert manifest.model_id == "org/vlm-1" and manifest.metrics == ["rougel"]
    assert manifest.result_dir == str(folder) and manifest.created_at
    info = json.loads((folder / "run_info.json").read_text())
    assert info["generation"] == {
        "max_tokens": 256, "temperature": 0.0, "top_p": 1.0, "image_format": "original",
        "strip_reasoning": False, "extra_body": {},
    }  # fmt: skip
    assert info["dataset"] == "SakanaAI/JA-VLM-Bench-In-the-Wild"
    # A local copy that says nothing of its revision: null, never the pinned one.
    assert info["dataset_revision"] is None and info["local"] is True
    assert info["data_dir"] == str(data) and info["pfgen_fast_version"]
    assert schema.load_predictions(str(folder)) == predictions
    assert set(schema.load_evaluation(str(folder))) == {"rougel"}
    rescored = run_cli("mm", "evaluate", out, "--metrics", "rougel", "exact-match")
    assert rescored.returncode == 0, rescored.stderr
    assert "org/vlm-1" in rescored.stdout
    assert set(schema.load_evaluation(str(folder))) == {"rougel", "exact-match"}


def test_image_formats_png_and_jpeg_as_the_original_adapter(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", mixed_images(3))
    with serve() as vlm:
        url = vlm.base_url
        jpeg = mm_run(url, data, tmp_path / "a", "--image-format", "jpeg", "--max-tokens", "9")
        png = mm_run(url, data, tmp_path / "b", "--image-format", "png", "--temperature", "0.5")
    assert jpeg.returncode == 0 and png.returncode == 0, jpeg.stderr + png.stderr
    by_format = {s.images[0][0]: [] for s in vlm.received}
    for seen in vlm.received:
        by_format[seen.images[0][0]].append(seen)
    assert sorted(by_format) == ["image/jpeg", "image/png"]
    assert all(
        s.detail == ["auto"] and s.params["max_tokens"] == 9 for s in by_format["image/jpeg"]
    )
    assert all(s.params["temperature"] == 0.5 for s in by_format["image/png"])
    assert sorted(s.images[0][1] for s in by_format["image/png"]) == [64, 65, 66]


def test_several_images_go_in_order_after_the_text(tmp_path: Path) -> None:
    data = multi_image_task(tmp_path / "data", [2, 3, 1])
    with serve() as vlm:
        url = vlm.base_url
        done = mm_run(url, data, tmp_path / "result", task=MULTI)
    assert done.returncode == 0, done.stderr
    seen = {s.text: s.images for s in vlm.received}
    assert seen["比べて1"] == [("image/png", 40, 31), ("image/png", 50, 31), ("image/png", 60, 31)]
    assert len(seen["比べて0"]) == 2 and len(seen["比べて2"]) == 1


def test_a_killed_run_resumes_without_asking_again(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", [image_bytes((32, 32), "PNG", i) for i in range(30)])
    out = tmp_path / "result"
    with serve(answering(lambda text: time.sleep(0.1) or f"返事 {text}")) as vlm:
        url = vlm.base_url
        command = [
            sys.executable, "-m", "pfgen_fast", "mm", "run", "--task", TASK, "--model", "org/vlm-1",
            "--base-url", url, "--data", str(data), "--out", str(out), "--metrics", "rougel",
            "--concurrency", "2",
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while vlm.requests_count < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.communicate()
        asked_before = vlm.requests_count
        assert asked_before < 30
        resumed = mm_run(url, data, out, "--concurrency", "2")
    assert resumed.returncode == 0, resumed.stderr
    texts = [request.text for request in vlm.received]
    assert sorted(set(texts)) == sorted(f"質問{i}：何が見えますか。" for i in range(30))
    # Only the requests in flight at the kill (at most one per connection) are asked twice.
    assert len(texts) <= 30 + 2
    predictions = lines(out / TASK / "org" / "vlm-1" / "prediction.jsonl")
    assert [p["text"] for p in predictions] == [
        f"返事 質問{i}：何が見えますか。" for i in range(30)
    ]
    assert not list((out / TASK / "org" / "vlm-1").glob(".*"))  # no temporary file left


def test_two_servers_share_the_work_and_a_failing_one_is_avoided(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", [image_bytes((20, 20), "PNG", i) for i in range(24)])
    slow_a = answering(lambda t: time.sleep(0.02) or "a")
    with serve(slow_a) as first, serve() as second, serve(failing("http-500")) as broken:
        bad = broken.base_url
        shared = mm_run(
            [first.base_url, second.base_url], data, tmp_path / "a", "--concurrency", "2"
        )
        assert shared.returncode == 0, shared.stderr
        assert first.requests_count + second.requests_count == 24
        assert first.received and second.received
        with serve() as again:
            good = again.base_url
            failover = mm_run([bad, good], data, tmp_path / "b", "--max-retries", "0",
                              "--no-cache", "--concurrency", "2")  # fmt: skip
    assert failover.returncode == 0, failover.stderr
    assert sorted({request.text for request in again.received}) == sorted(
        f"質問{i}：何が見えますか。" for i in range(24)
    )
    # Down after three failures in a row, with at most one more in flight per connection.
    assert 3 <= broken.requests_count <= 5
    predictions = lines(tmp_path / "b" / TASK / "org" / "vlm-1" / "prediction.jsonl")
    assert all(p["text"] for p in predictions)


def test_inference_only_then_scoring_reuses_the_predictions(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", mixed_images(4))
    out = tmp_path / "result"
    with serve() as vlm:
        url = vlm.base_url
        inference = mm_run(url, data, out, "--inference-only")
        assert inference.returncode == 0, inference.stderr
        folder = out / TASK / "org" / "vlm-1"
        assert list(lines(folder / "prediction.jsonl")[0]) == [
            "question_id", "text", "answer", "input_text"
        ]  # fmt: skip
        assert not (folder / "evaluation.jsonl").exists()
        assert json.loads((folder / "manifest.json").read_text())["metrics"] == []
        scored = mm_run(url, data, out)
    assert scored.returncode == 0, scored.stderr
    assert vlm.requests_count == 4
    assert "reusing" in scored.stderr
    assert "rougel" in lines(folder / "prediction.jsonl")[0]
    assert json.loads((folder / "evaluation.jsonl").read_text())["rougel"]["overall_score"] >= 0


def one_line_error(result: Any) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_unknown_task_lists_the_tasks(tmp_path: Path) -> None:
    result = mm_run("http://127.0.0.1:9/v1", tmp_path, tmp_path / "r", task="no-such-task")
    message = one_line_error(result)
    assert result.returncode == 2  # a usage error, before anything runs
    assert message.startswith("error: argument --task: invalid choice: 'no-such-task'")
    assert "jmmmu" in message and "ja-vg-vqa-500" in message


def test_dataset_folder_without_split_or_column(tmp_path: Path) -> None:
    no_split = one_image_task(tmp_path / "train-only", mixed_images(2), split="train")
    no_column = write_dataset(tmp_path / "no-answer", "test", {"question": pa.array(["q"])})
    with serve() as server:
        url = server.base_url
        split = one_line_error(mm_run(url, no_split, tmp_path / "r"))
        column = one_line_error(mm_run(url, no_column, tmp_path / "r"))
    assert "README.md" in split and "'test'" in split
    assert "no-answer" in column and "column" in column and "image" in column


def test_undecodable_images_are_item_errors_then_past_ten_percent_a_stop(tmp_path: Path) -> None:
    good = [image_bytes((16, 16), "PNG", i) for i in range(20)]
    corrupt = image_bytes((16, 16), "PNG")[:40]
    one_bad = one_image_task(tmp_path / "one", [*good[:7], corrupt, *good[8:]])
    many_bad = one_image_task(tmp_path / "many", [corrupt if i % 4 == 0 else g for i, g in
                                                   enumerate(good)])  # fmt: skip
    with serve() as server:
        url = server.base_url
        survived = mm_run(url, one_bad, tmp_path / "a")
        stopped = mm_run(url, many_bad, tmp_path / "b")
    # Written whole, then exit 1: an item failed.
    assert survived.returncode == 1, survived.stderr
    assert "This is a bug" not in survived.stderr
    folder = tmp_path / "a" / TASK / "org" / "vlm-1"
    [error] = lines(folder / "error_message.jsonl")
    assert error["question_id"] == "7"
    assert error["error"] == "image 1: not an image Pillow can read (40 bytes)"
    assert lines(folder / "prediction.jsonl")[7]["text"] == ""
    message = one_line_error(stopped)
    assert "5 of 20 items failed" in message
    stopped_folder = tmp_path / "b" / TASK / "org" / "vlm-1"
    assert len(lines(stopped_folder / "error_message.jsonl")) == 5
    assert not (stopped_folder / "prediction.jsonl").exists()


def test_a_server_refusing_images_or_unreachable_stops_at_once(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", mixed_images(5))
    with serve(refuse_images=True) as refusing:
        url = refusing.base_url
        refused = mm_run(url, data, tmp_path / "a")
    assert "HTTP 400" in one_line_error(refused) and REFUSAL in refused.stderr
    assert refusing.requests_count <= 8
    down = mm_run("http://127.0.0.1:9/v1", data, tmp_path / "b", "--max-retries", "0",
                  "--concurrency", "1")  # fmt: skip
    assert "127.0.0.1:9/v1: the server looks down" in one_line_error(down)
    assert not list((tmp_path / "b").rglob("prediction.jsonl"))


def write_evaluation(result: Path, task: str, model: str, scores: dict[str, float]) -> None:
    folder = result / task / model
    folder.mkdir(parents=True, exist_ok=True)
    evaluation = {
        metric: {"overall_score": score, "details": {}} for metric, score in scores.items()
    }
    (folder / "evaluation.jsonl").write_text(json.dumps(evaluation) + "\n")


@pytest.fixture
def board(tmp_path: Path) -> Path:
    result = tmp_path / "result"
    scores = {
        "a/m1": (0.5, 3.1, 40.0, 0.2),
        "b/m2": (0.7, 2.0, 50.0, 0.4),
        "m3": (0.6, 4.0, 20.0, 0.3),
    }
    for model, (jmmmu, judge, rouge, okvqa) in scores.items():
        write_evaluation(result, "jmmmu", model, {"jmmmu": jmmmu})
        write_evaluation(result, "ja-vg-vqa-500", model, {"llm-as-a-judge": judge, "rougel": rouge})
        write_evaluation(result, "okvqa", model, {"substring-match": okvqa})
    return result


def test_leaderboard_markdown_marks_best_and_second(board: Path) -> None:
    shown = run_cli("mm", "leaderboard", board, "--format", "markdown")
    assert shown.returncode == 0, shown.stderr
    header, _, *rows = shown.stdout.splitlines()
    assert "JMMMU/Acc" in header and "VG-VQA/LLM" in header and "OK-VQA/Acc" in header
    assert "総合偏差値" in header and "言語・知識中心偏差値" in header
    by_model = {row.split("|")[1].strip(): row for row in rows}
    assert set(by_model) == {"a/m1", "b/m2", "m3"}
    assert "**70.0**" in by_model["b/m2"] and "<u>60.0</u>" in by_model["m3"]
    assert "**4.0**" in by_model["m3"] and "<u>3.1</u>" in by_model["a/m1"]


@pytest.mark.slow
def test_leaderboard_latex_csv_json_and_plot(board: Path, tmp_path: Path) -> None:
    latex = run_cli("mm", "leaderboard", board, "--format", "latex")
    assert "\\textbf{70.0}" in latex.stdout and "\\underline{60.0}" in latex.stdout
    table = run_cli("mm", "leaderboard", board, "--format", "csv").stdout.splitlines()
    assert table[0].startswith("Model,総合偏差値,") and "JMMMU/Acc" in table[0]
    entries = json.loads(run_cli("mm", "leaderboard", board, "--format", "json").stdout)
    first = {entry["model"]: entry for entry in entries}["b/m2"]
    assert first["url"] == "https://huggingface.co/b/m2"
    assert first["scores"]["JMMMU"] == {"Acc": 70.0}
    assert first["scores"]["VG-VQA"] == {"LLM": 2.0, "Rouge": 50.0}
    figure = tmp_path / "tasks.png"
    plotted = run_cli("mm", "leaderboard", board, "--format", "csv", "--plot", figure)
    assert plotted.returncode == 0, plotted.stderr
    with Image.open(figure) as image:
        assert image.width > 500 and image.height > 300


def test_mecha_ja_rotated_choices_are_scored_per_rotation(tmp_path: Path) -> None:
    import mm_datasets

    data = mm_datasets.mecha_ja(tmp_path / "mecha")
    with serve(answering(lambda text: "B")) as vlm:
        url = vlm.base_url
        done = run_cli(
            "mm", "run", "--task", "mecha-ja", "--model", "m", "--base-url", url,
            "--data", data, "--out", tmp_path / "result", "--rotate-choices",
            "--evalmm-dir", published.evalmm_dir(), cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "result" / "mecha-ja" / "m"
    assert [p["question_id"] for p in lines(folder / "prediction.jsonl")] == [
        f"{row}_rot{turn}" for row in range(2) for turn in range(4)
    ]
    details = json.loads((folder / "evaluation.jsonl").read_text())["mecha-ja"]["details"]
    assert {"rot_0", "rot_3", "overall"} <= set(details)


def test_missing_llm_jp_eval_mm_files_are_one_line(tmp_path: Path) -> None:
    """ai2d's instruction comes from llm-jp-eval-mm's ai2d.py: without $EVALMM_DIR or a
    fetched copy, the run names where it looked and how to fetch, and asks nothing."""
    import mm_datasets

    data = mm_datasets.ai2d(tmp_path / "ai2d")
    cache = tmp_path / "empty-cache"
    with serve() as vlm:
        url = vlm.base_url
        result = run_cli(
            "mm", "run", "--task", "ai2d", "--model", "m", "--base-url", url, "--data", data,
            "--out", tmp_path / "r", cwd=tmp_path,
            env={"EVALMM_DIR": "", "PFGEN_FAST_CACHE": str(cache)},
        )  # fmt: skip
    message = one_line_error(result)
    assert f"src/eval_mm/tasks/ai2d.py not found at {cache / 'evalmm' / 'llm-jp-eval-mm'}" in (
        message
    )
    assert "python -m pfgen_fast mm data fetch" in message
    assert not vlm.received


def test_a_changed_task_file_is_refused_in_one_line(tmp_path: Path) -> None:
    import shutil

    import mm_datasets

    copy = tmp_path / "llm-jp-eval-mm"
    shutil.copytree(published.evalmm_dir() / "src", copy / "src")
    task_file = copy / "src" / "eval_mm" / "tasks" / "ai2d.py"
    changed = bytearray(task_file.read_bytes())
    changed[-1] ^= 1  # one bit of its last byte
    task_file.write_bytes(bytes(changed))
    data = mm_datasets.ai2d(tmp_path / "ai2d")
    with serve() as vlm:
        url = vlm.base_url
        result = mm_run(url, data, tmp_path / "r", "--evalmm-dir", copy, task="ai2d")
    message = one_line_error(result)
    assert f"{task_file} does not match llm-jp-eval-mm at the pinned commit" in message
    assert "SHA-256" in message
    assert not vlm.received


def test_default_metrics_with_a_judge_on_its_own_server(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", mixed_images(3))
    with serve() as model, serve(answering(lambda text: "4")) as judge:
        url, judge_url = model.base_url, judge.base_url
        without = run_cli("mm", "run", "--task", TASK, "--model", "m", "--base-url", url,
                          "--data", data, "--out", tmp_path / "r", cwd=tmp_path)  # fmt: skip
        done = run_cli(
            "mm", "run", "--task", TASK, "--model", "m", "--base-url", url, "--data", data,
            "--out", tmp_path / "r", "--judge-model", "judge", "--judge-base-url", judge_url,
            "--evalmm-dir", published.evalmm_dir(), "--extra-body", '{"top_k": 20}',
            cwd=tmp_path,
        )  # fmt: skip
    assert "--judge-base-url and --judge-model" in one_line_error(without)
    assert done.returncode == 0, done.stderr
    assert model.requests_count == 3 and judge.requests_count == 3
    # --extra-body is the model's: the judge's requests go without it.
    assert all(s.body["top_k"] == 20 for s in model.received)
    assert all(s.model == "judge" and not s.images for s in judge.received)
    assert all("top_k" not in s.body for s in judge.received)
    evaluation = json.loads((tmp_path / "r" / TASK / "m" / "evaluation.jsonl").read_text())
    assert list(evaluation) == ["llm-as-a-judge", "rougel"]
    assert evaluation["llm-as-a-judge"]["overall_score"] == 4.0
