"""`mm run` as a long real run needs it, through the CLI against the counting VLM stand-in:
everything checkable is checked before the first request (zero requests), a bad item is that
item's error (the others predicted and written, exit 1), any model name works, reasoning
replies, the judges' max_tokens and reasoning, true run records, and `mm leaderboard`'s
faults. No message is ever "This is a bug"."""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from test_evalmm_run import (
    IMAGE_COLUMN,
    TASK,
    answering,
    image_bytes,
    lines,
    mm_run,
    one_image_task,
    one_line_error,
    original_result_schema,
    write_dataset,
)

import published
from cli_runner import run_cli
from pfgen_fast.testing import Reply, prompt_text, serve

BUG = "This is a bug"
FOLDER = Path(TASK) / "org" / "vlm-1"


def no_bug(result: Any) -> None:
    assert BUG not in result.stderr and "Traceback" not in result.stderr, result.stderr


def good_images(count: int) -> list[bytes]:
    return [image_bytes((16, 16), "PNG", i) for i in range(count)]


# Everything checkable before the first request: one line, zero requests.


def test_out_that_is_a_file_or_under_a_file_asks_nothing(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", good_images(2))
    blocker = tmp_path / "file"
    blocker.write_text("mine\n")
    with serve() as vlm:
        is_file = mm_run(vlm.base_url, data, blocker)
        through = run_cli(
            "mm", "run", "--task", TASK, "--model", "org/vlm-1", "--base-url", vlm.base_url,
            "--data", data, "--out", blocker / "deeper", "--metrics", "rougel", cwd=tmp_path,
        )  # fmt: skip
    folder = blocker / TASK / "org" / "vlm-1"
    assert one_line_error(is_file) == (
        f"error: {folder}: cannot write the results there: {blocker} is not a folder"
    )
    deeper = blocker / "deeper" / TASK / "org" / "vlm-1"
    assert one_line_error(through) == (
        f"error: {deeper}: cannot write the results there: {blocker} is not a folder"
    )
    assert not vlm.received and blocker.read_text() == "mine\n"
    no_bug(is_file)


def test_a_metric_whose_field_the_task_lacks_asks_nothing(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", good_images(2))
    with serve() as vlm:
        result = mm_run(vlm.base_url, data, tmp_path / "r", "--metrics", "rougel", "jdocqa")
    assert one_line_error(result) == (
        f"error: {TASK}: item 1 (question_id '0'): field \"answer_type\": missing "
        "(metric jdocqa needs it)"
    )
    assert not vlm.received
    no_bug(result)


def test_a_judged_metric_without_its_prompt_file_asks_nothing(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", good_images(2))
    empty = tmp_path / "no-evalmm"
    empty.mkdir()
    with serve() as model, serve() as judge:
        result = mm_run(
            model.base_url, data, tmp_path / "r", "--metrics", "llm-as-a-judge",
            "--judge-model", "j", "--judge-base-url", judge.base_url, "--evalmm-dir", empty,
        )  # fmt: skip
    message = one_line_error(result)
    assert "llm_as_a_judge_scorer.py not found" in message and str(empty) in message
    assert not model.received and not judge.received
    no_bug(result)


def test_an_empty_data_folder_names_the_folder_and_what_it_looked_for(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with serve() as vlm:
        result = mm_run(vlm.base_url, empty, tmp_path / "r")
    assert one_line_error(result) == (
        f"error: {empty} (no README.md: splits from the names of its parquet files): config "
        "'default' has no split 'test' (none)"
    )
    assert not vlm.received
    no_bug(result)


# A bad item is that item's error.


def decompression_bomb() -> bytes:
    """A 15000×15000 PNG of a few kB: over Pillow's pixel limit."""
    buffer = io.BytesIO()
    Image.new("1", (15000, 15000)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_bomb_and_empty_images_fail_their_items_only_and_the_run_exits_1(tmp_path: Path) -> None:
    images = good_images(30)
    images[3] = decompression_bomb()
    images[11] = b""
    data = one_image_task(tmp_path / "data", images)
    with serve() as vlm:
        result = mm_run(vlm.base_url, data, tmp_path / "r")
    assert result.returncode == 1, result.stderr
    no_bug(result)
    assert len(vlm.received) == 28
    folder = tmp_path / "r" / FOLDER
    errors = lines(folder / "error_message.jsonl")
    assert errors[0]["question_id"] == "3"
    assert errors[0]["error"].startswith("image 1: too many pixels to decode (Image size ")
    assert errors[1] == {"question_id": "11", "error": "image 1: empty (0 bytes)"}
    predictions = lines(folder / "prediction.jsonl")
    assert len(predictions) == 30 and predictions[3]["text"] == "" and predictions[4]["text"]
    assert "error: failed items: 2 (each task's error_message.jsonl says why)" in result.stderr


def image_values_task(folder: Path, values: list[dict[str, Any]]) -> Path:
    """ja-vlm-bench-in-the-wild's columns with these Image feature values (bytes, path)."""
    count = len(values)
    return write_dataset(
        folder,
        "test",
        {
            "question": pa.array([f"質問{i}：何が見えますか。" for i in range(count)]),
            "image": pa.array(values, type=IMAGE_COLUMN),
            "answer": pa.array([f"答え{i}" for i in range(count)]),
        },
    )


def test_image_files_that_cannot_be_read_fail_their_items_only(tmp_path: Path) -> None:
    """An image given by a path that is missing or a folder, and one with neither bytes nor
    path: each its item's error; the others are predicted and written, exit 1."""
    values: list[dict[str, Any]] = [{"bytes": data, "path": None} for data in good_images(30)]
    stored = tmp_path / "stored.png"
    stored.write_bytes(image_bytes((20, 10), "PNG"))
    values[1] = {"bytes": None, "path": str(stored)}  # a readable file: sent
    values[2] = {"bytes": None, "path": str(tmp_path / "missing.png")}
    values[5] = {"bytes": None, "path": str(tmp_path)}
    values[7] = {"bytes": None, "path": None}
    data = image_values_task(tmp_path / "data", values)
    with serve() as vlm:
        result = mm_run(vlm.base_url, data, tmp_path / "r")
    assert result.returncode == 1, result.stderr
    no_bug(result)
    assert len(vlm.received) == 27
    assert ("image/png", 20, 10) in [image for seen in vlm.received for image in seen.images]
    folder = tmp_path / "r" / FOLDER
    assert lines(folder / "error_message.jsonl") == [
        {
            "question_id": "2",
            "error": f"image 1: its file {tmp_path / 'missing.png'} cannot be read (No such "
            "file or directory)",
        },
        {
            "question_id": "5",
            "error": f"image 1: its file {tmp_path} cannot be read (Is a directory)",
        },
        {"question_id": "7", "error": "image 1: the dataset gives neither its bytes nor its file"},
    ]
    predictions = lines(folder / "prediction.jsonl")
    assert len(predictions) == 30 and predictions[2]["text"] == "" and predictions[3]["text"]
    assert json.loads((folder / "evaluation.jsonl").read_text())["rougel"]
    assert "error: failed items: 3 (each task's error_message.jsonl says why)" in result.stderr


def test_a_task_whose_images_mostly_fail_stops_past_the_threshold(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.png")
    values: list[dict[str, Any]] = [{"bytes": None, "path": missing}] * 4
    values.append({"bytes": image_bytes((8, 8), "PNG"), "path": None})
    data = image_values_task(tmp_path / "data", values)
    with serve() as vlm:
        result = mm_run(vlm.base_url, data, tmp_path / "r")
    folder = tmp_path / "r" / FOLDER
    assert one_line_error(result) == (
        f"error: {TASK}: 4 of 5 items failed, more than 10%: stopped (all in "
        f"{folder / 'error_message.jsonl'}; the first: image 1: its file {missing} cannot be "
        "read (No such file or directory))"
    )
    assert len(vlm.received) == 1 and not (folder / "prediction.jsonl").exists()
    no_bug(result)


def between_pixel_limits() -> bytes:
    """A 10000×10000 PNG: over Pillow's pixel limit (a warning), under twice it (an error)."""
    buffer = io.BytesIO()
    Image.new("1", (10000, 10000)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("image_format", ["original", "png"])
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")  # the stand-in's
def test_an_image_over_pillows_warning_limit_is_sent_without_a_warning(
    tmp_path: Path, image_format: str
) -> None:
    """The original's Task decodes such an image; it is sent, and Pillow's
    DecompressionBombWarning never reaches the terminal."""
    data = one_image_task(tmp_path / "data", [between_pixel_limits(), *good_images(1)])
    with serve() as vlm:
        # A process of its own: this test's filter of the stand-in's warning is not the run's.
        out = tmp_path / "r"
        result = mm_run(vlm.base_url, data, out, "--image-format", image_format, process=True)
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr and "warn" not in result.stderr, result.stderr
    sizes = sorted(image[1:] for seen in vlm.received for image in seen.images)
    assert sizes == [(16, 16), (10000, 10000)]


def test_a_damaged_row_group_is_one_line_naming_the_file(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", good_images(4))
    [file] = (data / "data").glob("*.parquet")
    table = pq.read_table(file)
    pq.write_table(table, file, row_group_size=2)
    offset = pq.ParquetFile(file).metadata.row_group(1).column(0).data_page_offset
    damaged = bytearray(file.read_bytes())
    damaged[offset : offset + 16] = b"\xff" * 16  # the page header of the second row group
    file.write_bytes(bytes(damaged))
    with serve() as vlm:
        result = mm_run(vlm.base_url, data, tmp_path / "r")
    message = one_line_error(result)
    assert message.startswith(f"error: {file}: row group 2 of 2 cannot be read (")
    no_bug(result)


# Any model name the server uses.


@pytest.mark.parametrize(
    ("model", "folder"),
    [("/models/org/vlm-7b", "%2Fmodels%2Forg%2Fvlm-7b"), ("./vlm", "%2E%2Fvlm")],
)
def test_a_model_named_by_a_path_gets_its_own_folder(
    tmp_path: Path, model: str, folder: str
) -> None:
    data = one_image_task(tmp_path / "data", good_images(2))
    with serve() as vlm:
        result = run_cli(
            "mm", "run", "--task", TASK, "--model", model, "--base-url", vlm.base_url,
            "--data", data, "--out", tmp_path / "r", "--metrics", "rougel", cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert {seen.model for seen in vlm.received} == {model}
    manifest = json.loads((tmp_path / "r" / TASK / folder / "manifest.json").read_text())
    assert manifest["model_id"] == model
    board = run_cli("mm", "leaderboard", tmp_path / "r")
    assert board.stdout.splitlines()[1].split("\t")[0] == model


def test_model_folder_rule() -> None:
    from pfgen_fast.evalmm.runner import model_folder

    assert model_folder("org/model") == "org/model"
    assert model_folder("/m") == "%2Fm" and model_folder("a//b") == "a%2F%2Fb"
    assert model_folder("50%") == "50%25" and model_folder("%2Fm") == "%252Fm"
    assert model_folder(".") == "%2E" and model_folder("..") == "%2E."


# Reasoning models.


def reasoning_replies(path: str, body: dict[str, Any]) -> Reply:
    """Items 0-2 reason; the others answer plainly."""
    number = int(prompt_text(body).removeprefix("質問").split("：")[0])
    if number > 2:
        return Reply(text="答")
    if number == 0:  # reasoning apart, then the answer
        return Reply(text="猫", reasoning="考える")
    if number == 1:  # reasoning in the content
        return Reply(text="<think>考える</think>\n犬")
    # cut at max_tokens inside the reasoning
    return Reply(text="", reasoning="考え続け", finish_reason="length")


def test_reasoning_apart_stripped_and_cut_at_max_tokens(tmp_path: Path) -> None:
    images = good_images(20)
    data = one_image_task(tmp_path / "data", images)
    with serve(reasoning_replies) as vlm:
        result = mm_run(
            vlm.base_url, data, tmp_path / "r", "--strip-reasoning",
            "--extra-body", '{"chat_template_kwargs": {"enable_thinking": true}}',
        )  # fmt: skip
    assert result.returncode == 1, result.stderr
    no_bug(result)
    assert all(s.params["chat_template_kwargs"] == {"enable_thinking": True} for s in vlm.received)
    folder = tmp_path / "r" / FOLDER
    predictions = lines(folder / "prediction.jsonl")
    assert predictions[0]["text"] == "猫" and predictions[0]["reasoning"] == "考える"
    assert predictions[1]["text"] == "犬" and "reasoning" not in predictions[1]
    assert predictions[2]["text"] == "" and predictions[2]["reasoning"] == "考え続け"
    assert lines(folder / "error_message.jsonl") == [
        {"question_id": "2", "error": "cut at max_tokens before an answer (raise --max-tokens)"}
    ]
    # llm-jp-eval-mm's own reader reads the lines with their reasoning.
    assert original_result_schema().load_predictions(str(folder)) == predictions
    info = json.loads((folder / "run_info.json").read_text())
    assert info["generation"]["strip_reasoning"] is True
    assert info["generation"]["extra_body"] == {"chat_template_kwargs": {"enable_thinking": True}}


# The judges.


def judge_replies(path: str, body: dict[str, Any]) -> Reply:
    text = prompt_text(body)
    if "答0" in text:  # reasoning holding a digit, then the score
        return Reply(text="<think>5 かな</think>3")
    if "答1" in text:  # cut inside its reasoning
        return Reply(text="<think>まだ考えて", finish_reason="length")
    return Reply(text="4")


def test_judge_max_tokens_reasoning_and_a_cut_reply(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", good_images(3))
    answer = answering(lambda text: "答" + text[2])
    with serve(answer) as model, serve(judge_replies) as judge:
        result = mm_run(
            model.base_url, data, tmp_path / "r", "--metrics", "llm-as-a-judge",
            "--judge-model", "j", "--judge-base-url", judge.base_url,
            "--evalmm-dir", published.evalmm_dir(), "--judge-max-tokens", "77",
        )  # fmt: skip
    assert result.returncode == 1, result.stderr
    no_bug(result)
    assert {s.params["max_tokens"] for s in judge.received} == {77} and len(judge.received) == 3
    folder = tmp_path / "r" / FOLDER
    predictions = lines(folder / "prediction.jsonl")
    assert [p["llm-as-a-judge"] for p in predictions] == [3, None, 4]
    assert predictions[1]["judge_errors"] == {
        "llm-as-a-judge": "cut at max_tokens before an answer (raise --max-tokens)"
    }
    evaluation = json.loads((folder / "evaluation.jsonl").read_text())["llm-as-a-judge"]
    assert evaluation["overall_score"] == 3.5 and evaluation["details"]["judge_errors"] == 1
    info = json.loads((folder / "run_info.json").read_text())
    assert info["judge"] == {
        "model": "j", "base_url": judge.base_url, "max_tokens": {"llm-as-a-judge": 77}
    }  # fmt: skip
    assert "error: 1 items got no verdict from the judge" in result.stderr


def test_mm_score_judge_default_max_tokens_and_strip_reasoning(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    rows = [
        {"ref": "猫", "pred": "<think>考える</think>猫です", "input_text": "何？"},
        {"ref": "犬", "pred": "犬", "input_text": "何？"},
    ]
    items.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    with serve(answering(lambda text: "5")) as judge:
        result = run_cli(
            "mm", "score", items, "--metric", "llm-as-a-judge", "--base-url", judge.base_url,
            "--judge-model", "j", "--evalmm-dir", published.evalmm_dir(), "--strip-reasoning",
            "--no-cache", "-o", tmp_path / "scored.jsonl",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert {s.params["max_tokens"] for s in judge.received} == {1024}
    assert "<think>" not in "".join(s.text for s in judge.received)
    assert lines(tmp_path / "scored.jsonl")[0]["pred"] == "猫です"


# True run records.


def test_run_info_of_a_local_copy_says_what_the_copy_says(tmp_path: Path) -> None:
    plain = one_image_task(tmp_path / "plain", good_images(1))
    downloaded = one_image_task(tmp_path / "downloaded", good_images(1))
    records = downloaded / ".cache" / "huggingface" / "download" / "data"
    records.mkdir(parents=True)
    commit = "0123456789abcdef0123456789abcdef01234567"
    (records / "test-00000-of-00001.parquet.metadata").write_text(f"{commit}\netag\n1.0\n")
    snapshot = one_image_task(tmp_path / "hub" / "snapshots" / ("f" * 40), good_images(1))
    infos = []
    with serve() as vlm:
        for name, data in (("a", plain), ("b", downloaded), ("c", snapshot)):
            relative = Path("..") / data.relative_to(tmp_path)
            (tmp_path / name).mkdir()
            result = mm_run(vlm.base_url, relative, tmp_path / name / "r")
            assert result.returncode == 0, result.stderr
            infos.append(json.loads((tmp_path / name / "r" / FOLDER / "run_info.json").read_text()))
    assert [info["dataset_revision"] for info in infos] == [None, commit, "f" * 40]
    assert all(info["local"] is True for info in infos)
    assert infos[0]["data_dir"] == str(tmp_path / "a" / ".." / "plain")


# mm leaderboard.


def board_folder(tmp_path: Path, scores: dict[str, Any]) -> Path:
    result = tmp_path / "result"
    for model, score in scores.items():
        folder = result / "jmmmu" / model
        folder.mkdir(parents=True)
        aggregate = {} if score is ... else {"overall_score": score}
        (folder / "evaluation.jsonl").write_text(json.dumps({"jmmmu": aggregate}) + "\n")
    return result


def test_leaderboard_scores_that_are_not_numbers_and_plot_formats(tmp_path: Path) -> None:
    result = board_folder(tmp_path, {"m1": "abc", "m2": ..., "m3": 0.5})
    shown = run_cli("mm", "leaderboard", result)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == ["m1\tn/a", "m2\tn/a", "m3\t0.5"]
    assert shown.stderr.splitlines() == [
        f'warning: {result}/jmmmu/m1/evaluation.jsonl: jmmmu: overall_score "abc" is not a '
        "number, shown as n/a",
        f"warning: {result}/jmmmu/m2/evaluation.jsonl: jmmmu: no overall_score, shown as n/a",
    ]
    plot = run_cli("mm", "leaderboard", result, "--plot", tmp_path / "out.xyz")
    assert one_line_error(plot) == (
        f"error: --plot {tmp_path / 'out.xyz'}: unsupported format .xyz; the formats: .png, "
        ".svg, .pdf"
    )
    no_bug(plot)


@pytest.mark.parametrize("columns", [80, 120])
def test_leaderboard_on_a_terminal_folds_no_name_of_a_narrow_table(
    tmp_path: Path, columns: int
) -> None:
    long_name = "organisation/a-rather-long-model-name-v2-instruct"
    result = board_folder(tmp_path, {long_name: 0.5, "m2": 0.25})
    shown = run_cli(
        "mm", "leaderboard", result, env={"TTY_COMPATIBLE": "1", "COLUMNS": str(columns)}
    )
    assert shown.returncode == 0, shown.stderr
    assert long_name in shown.stdout


def test_help_texts_say_mm_runs_models() -> None:
    top = run_cli("--help")
    assert "mm (llm-jp-eval-mm:" in top.stdout and "vision-language models run" in top.stdout
    mm = run_cli("mm", "--help")
    assert "run a model on its tasks" in " ".join(mm.stdout.split())


def run_against_hub(endpoint: str, tmp_path: Path) -> tuple[str, list[Any]]:
    """`mm run` of a Hub task with the Hub at `endpoint` and an empty Hugging Face cache: its
    one-line error and what the model's server received."""
    pytest.importorskip("datasets")
    with serve() as vlm:
        result = run_cli(
            "mm", "run", "--task", TASK, "--model", "m", "--base-url", vlm.base_url, "--out",
            tmp_path / "r", "--metrics", "rougel", cwd=tmp_path,
            env={"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf")},
            process=True,  # the Hub libraries read their variables once, on import
        )  # fmt: skip
    assert len(result.stderr.splitlines()) == 1, result.stderr  # the pinned dataset: no note
    no_bug(result)
    return one_line_error(result), vlm.received


def test_an_unreachable_hub_is_one_line_without_the_hub_librarys_retries(tmp_path: Path) -> None:
    """The Hub at a closed port of 127.0.0.1: found out of reach by one request, the datasets
    library runs offline, and the empty cache ends the task."""
    message, received = run_against_hub("http://127.0.0.1:9", tmp_path)
    assert message.startswith(
        f"error: {TASK}: cannot load SakanaAI/JA-VLM-Bench-In-the-Wild from the Hub "
        "(http://127.0.0.1:9 cannot be reached: "
    )
    assert "and the dataset is not in the Hugging Face cache); pass a local copy" in message
    assert not received


class NothingHere(BaseHTTPRequestHandler):
    """A Hub that has nothing: 404 to every request, each path recorded."""

    paths: list[str] = []

    def answer(self) -> None:
        NothingHere.paths.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_hub_that_answers_is_asked_online(tmp_path: Path) -> None:
    """A Hub that answers (404 to everything) is not taken for out of reach: the datasets
    library asks it, and its answer is the error."""
    NothingHere.paths = []
    hub = ThreadingHTTPServer(("127.0.0.1", 0), NothingHere)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    try:
        message, received = run_against_hub(f"http://127.0.0.1:{hub.server_port}", tmp_path)
    finally:
        hub.shutdown()
        hub.server_close()
    assert "cannot be reached" not in message
    assert message.startswith(f"error: {TASK}: cannot load SakanaAI/JA-VLM-Bench-In-the-Wild ")
    assert any("JA-VLM-Bench-In-the-Wild" in path for path in NothingHere.paths), NothingHere.paths
    assert not received
