"""`mm run`: a vision-language model through the shared client on llm-jp-eval-mm's tasks, then
their metrics, leaving the original's result folder `OUT/<task>/<model>/`:

* `prediction.jsonl`: per item `question_id`, `text` (the reply), `answer`, `input_text` (the
  Task's prompt, `<image>` tags included, as the original records it) and one key per metric
  (none with `--inference-only`);
* `evaluation.jsonl`: one line, metric → aggregate;
* `manifest.json`: the original's fields only (`schema_version`, `model_id`, `task_id`,
  `metrics`, `created_at`, `result_dir`): its reader takes no other key;
* `run_info.json`: what pfgen_fast adds: `dataset`, `dataset_revision`, `split`, `data_dir`,
  `generation` (the settings) and `pfgen_fast_version`;
* `error_message.jsonl`: `{"question_id", "error"}` per failed item, only when some failed (the
  original's browser takes its presence as a failed run).

One request per item: one user message, the prompt text then one `image_url` part per image
(a base64 data URL). Replies come from the client's cache when asked before, so a killed run
resumes where it stopped and a re-run makes no request. A failed item gets an empty reply
(as in the original); more than 10 % failed items stop the task without its predictions.
An existing `prediction.jsonl` is reused (only evaluated) unless `--overwrite`."""

from __future__ import annotations

import base64
import datetime
import io
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast import __version__
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line, iter_json_lines, require
from pfgen_fast.common.llm import (
    FAILURE_SHARE,
    ChatRequest,
    LLMClient,
    LLMError,
    too_many_failures,
)
from pfgen_fast.evalmm.evaluate import EVALUATION, PREDICTIONS
from pfgen_fast.evalmm.scorers import Options, get_scorer
from pfgen_fast.evalmm.scoring import check_item, score_items
from pfgen_fast.evalmm.tasks import TaskImage, TaskInfo, TaskItem, iter_items, task_info

MANIFEST = "manifest.json"
RUN_INFO = "run_info.json"
ERRORS = "error_message.jsonl"
SCHEMA_VERSION = "1.0"  # the original's result_schema
IMAGE_FORMATS = ("original", "png", "jpeg")
# Formats every OpenAI-compatible vision server takes as they are.
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}


@dataclass(frozen=True)
class Generation:
    """The generation settings sent with every request (recorded in run_info.json)."""

    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    image_format: str = "original"

    def params(self) -> dict[str, Any]:
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
        }


@dataclass
class Prediction:
    """One item's line of `prediction.jsonl`, and its document for the scorers."""

    question_id: Any
    text: str
    answer: Any
    input_text: str
    doc: dict[str, Any]

    def line(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "text": self.text,
            "answer": self.answer,
            "input_text": self.input_text,
        }


@dataclass
class TaskRun:
    """One task for one model: where it goes and how."""

    task: str
    model: str
    out: Path
    data_dir: Path | None
    generation: Generation
    metrics: list[str] | None
    inference_only: bool
    max_items: int | None
    overwrite: bool
    rotate_choices: bool = False
    evalmm_dir: Path | None = None  # llm-jp-eval-mm's files (None: the default places)

    @property
    def folder(self) -> Path:
        return self.out / self.task / self.model

    def items(self) -> Iterator[TaskItem]:
        return iter_items(
            self.task,
            self.data_dir,
            evalmm_dir=self.evalmm_dir,
            rotate_choices=self.rotate_choices,
            max_items=self.max_items,
        )


def image_part(image: TaskImage, image_format: str) -> dict[str, Any]:
    """An image as a data URL part: as stored when the format is one every server takes
    (checked to decode), else as PNG; "png" always as PNG; "jpeg" as the original's API
    adapter sends it (JPEG at Pillow's default quality, `detail: auto`)."""
    if image_format == "original":
        data, kind = image.encoded()
        if kind in MEDIA_TYPES:
            check_decodes(data, kind)
            return data_url_part(MEDIA_TYPES[kind], data)
    decoded = image.open()
    buffer = io.BytesIO()
    if image_format == "jpeg":
        if decoded.mode not in ("RGB", "L"):
            decoded = decoded.convert("RGB")
        decoded.save(buffer, format="JPEG")
        part = data_url_part("image/jpeg", buffer.getvalue())
        part["image_url"]["detail"] = "auto"
        return part
    decoded.save(buffer, format="PNG")
    return data_url_part("image/png", buffer.getvalue())


def check_decodes(data: bytes, kind: str) -> None:
    """Raises Pillow's error when stored image bytes do not decode. Cheap where it can be: a
    PNG's chunk checksums, a JPEG's end marker (decoding it only when that is missing: some
    writers add bytes after it); other formats are decoded."""
    from PIL import Image

    if kind == "JPEG" and data.endswith(b"\xff\xd9"):
        return
    with Image.open(io.BytesIO(data)) as stored:
        if kind == "PNG":
            stored.verify()
        else:
            stored.load()


def data_url_part(media_type: str, data: bytes) -> dict[str, Any]:
    url = f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def item_request(item: TaskItem, generation: Generation) -> ChatRequest:
    """The chat request of one item; ValueError naming the image that cannot be decoded."""
    content: list[dict[str, Any]] = [{"type": "text", "text": item.input_text}]
    for number, image in enumerate(item.images, 1):
        try:
            content.append(image_part(image, generation.image_format))
        except (PfgenError, OSError, ValueError, SyntaxError) as error:  # Pillow's, the task's
            raise ValueError(f"image {number}: cannot decode it: {error}") from None
    return ChatRequest([{"role": "user", "content": content}], generation.params())


def generate(run: TaskRun, client: LLMClient) -> tuple[list[Prediction], list[dict[str, Any]]]:
    """Every item's prediction in dataset order, and the errors of the failed items."""
    predictions: list[Prediction] = []
    errors: list[dict[str, Any]] = []
    asked: list[int] = []  # the prediction each request is for

    def requests() -> Iterator[ChatRequest]:
        for item in run.items():
            predictions.append(Prediction(item.question_id, "", item.answer, item.prompt, item.doc))
            try:
                request = item_request(item, run.generation)
            except ValueError as error:
                errors.append({"question_id": item.question_id, "error": str(error)})
                continue
            asked.append(len(predictions) - 1)
            yield request

    results = client.run(requests(), label=run.task)
    for index, result in zip(asked, results, strict=True):
        if isinstance(result, LLMError):
            errors.append({"question_id": predictions[index].question_id, "error": str(result)})
        else:
            predictions[index].text = result.text
    order = {prediction.question_id: i for i, prediction in enumerate(predictions)}
    errors.sort(key=lambda error: order[error["question_id"]])
    return predictions, errors


def reused(run: TaskRun) -> list[Prediction]:
    """The items with the replies of an existing `prediction.jsonl`, which must hold the same
    items in the same order (images are not read)."""
    path = run.folder / PREDICTIONS
    predictions = [
        Prediction(item.question_id, "", item.answer, item.prompt, item.doc) for item in run.items()
    ]
    count = 0
    for line in iter_json_lines(path):
        if count >= len(predictions):
            raise InputError(f"{line.where}: more lines than the task's {len(predictions)} items")
        expected = predictions[count].question_id
        if line.value.get("question_id") != expected:
            raise InputError(
                f'{line.where}: field "question_id": expected {expected!r} (the task\'s item '
                f"{count + 1}); give --overwrite to run the model again"
            )
        predictions[count].text = require(line.value, "text", str, line.where)
        count += 1
    if count != len(predictions):
        raise InputError(
            f"{path}: {count} lines for the task's {len(predictions)} items; give --overwrite "
            "to run the model again"
        )
    return predictions


def evaluate(
    predictions: list[Prediction], metrics: list[str], options: Options
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The prediction lines with one score per metric, and each metric's aggregate."""
    lines = [prediction.line() for prediction in predictions]
    items = [
        {**line, **prediction.doc, "ref": prediction.answer, "pred": prediction.text}
        for line, prediction in zip(lines, predictions, strict=True)
    ]
    evaluation: dict[str, Any] = {}
    for name in metrics:
        scorer = get_scorer(name)
        wheres = [
            f"item {number} (question_id {item['question_id']!r})"
            for number, item in enumerate(items, 1)
        ]
        for where, item in zip(wheres, items, strict=True):
            check_item(scorer, item, where)
        refs = [item["ref"] for item in items]
        preds = [item["pred"] for item in items]
        scores, aggregate = score_items(scorer, refs, preds, items, options, wheres)
        for line, score in zip(lines, scores, strict=True):
            line[name] = score
        evaluation[name] = aggregate
    return lines, evaluation


def manifest(run: TaskRun, metrics: list[str]) -> dict[str, Any]:
    """manifest.json as the original writes it: its RunManifest takes no other key."""
    return {
        "schema_version": SCHEMA_VERSION,
        "model_id": run.model,
        "task_id": run.task,
        "metrics": metrics,
        "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "result_dir": str(run.folder),
    }


def run_info(run: TaskRun, info: TaskInfo) -> dict[str, Any]:
    """run_info.json: the dataset, its revision and the settings the predictions were made with."""
    return {
        "dataset": info.dataset,
        "dataset_revision": info.revision,
        "split": info.split,
        "data_dir": None if run.data_dir is None else str(run.data_dir),
        "generation": asdict(run.generation),
        "pfgen_fast_version": __version__,
    }


def run_task(run: TaskRun, client: LLMClient, options: Options) -> dict[str, Any] | None:
    """Runs one task and writes its folder; the evaluation (None with --inference-only)."""
    info = task_info(run.task)
    metrics = [] if run.inference_only else run.metrics or list(info.metrics)
    folder = run.folder
    errors: list[dict[str, Any]] = []
    if (folder / PREDICTIONS).exists() and not run.overwrite:
        predictions = reused(run)
        print(f"{run.task}: reusing {folder / PREDICTIONS}", file=sys.stderr)
    else:
        predictions, errors = generate(run, client)
        if errors:
            write_atomically(folder / ERRORS, b"".join(dumps_line(e) for e in errors))
        # The original's runner stops a task past this share of failed items, as the client
        # stops a run past it.
        if too_many_failures(len(errors), len(predictions)):
            raise PfgenError(
                f"{run.task}: {len(errors)} of {len(predictions)} items failed, more than "
                f"{FAILURE_SHARE:.0%}: stopped (all in {folder / ERRORS}; the first: "
                f"{errors[0]['error']})"
            )
        if not errors:
            (folder / ERRORS).unlink(missing_ok=True)
    if not predictions:
        raise InputError(f"{run.task}: the dataset has no items")
    lines, evaluation = evaluate(predictions, metrics, options)
    write_atomically(folder / PREDICTIONS, b"".join(dumps_line(line) for line in lines))
    if not run.inference_only:
        write_atomically(folder / EVALUATION, dumps_line(evaluation))
    for name, content in ((RUN_INFO, run_info(run, info)), (MANIFEST, manifest(run, metrics))):
        write_atomically(folder / name, orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n")
    failed = f", {len(errors)} failed" if errors else ""
    print(f"{run.task}: {len(predictions)} items{failed} -> {folder}", file=sys.stderr)
    return None if run.inference_only else evaluation
