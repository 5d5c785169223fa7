"""`mm run`: a vision-language model through the shared client on llm-jp-eval-mm's tasks, then
their metrics, leaving the original's result folder `OUT/<task>/<model>/`:

* `prediction.jsonl`: per item `question_id`, `text` (the reply), `answer`, `input_text` (the
  Task's prompt, `<image>` tags included, as the original records it) and one key per metric
  (none with `--inference-only`);
* `evaluation.jsonl`: one line, metric → aggregate;
* `manifest.json`: the original's fields only (`schema_version`, `model_id`, `task_id`,
  `metrics`, `created_at`, `result_dir`): its reader takes no other key;
* `run_info.json`: what pfgen_fast adds: `dataset`, `dataset_revision` (the pinned Hub revision,
  or for a local copy what the copy says of itself, else null), `local`, `split`, `data_dir`
  (absolute), `generation` (the settings, `--extra-body` and `--strip-reasoning` included),
  `judge` (the judge's model and max_tokens, when a metric asks one) and `pfgen_fast_version`;
* `error_message.jsonl`: `{"question_id", "error"}` per failed item, only when some failed (the
  original's browser takes its presence as a failed run).

One request per item: one user message, the prompt text then one `image_url` part per image
(a base64 data URL). Replies come from the client's cache when asked before, so a killed run
resumes where it stopped and a re-run makes no request. A failed item (an image that cannot be
sent, a request the server refuses or that fails for good, a reply cut at max_tokens before
its answer) gets an empty reply (as in the original) and its reason in `error_message.jsonl`;
more than 10 % failed items stop the task without its predictions (every failed item
recorded, also when the client stops first). Reasoning the server
returns apart from the answer goes to a `reasoning` field of the item's line. An existing
`prediction.jsonl` is reused (only evaluated) unless `--overwrite`."""

from __future__ import annotations

import datetime
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pfgen_fast import __version__
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.llm import (
    FAILURE_SHARE,
    ChatRequest,
    LLMClient,
    LLMError,
    LLMReply,
    too_many_failures,
)
from pfgen_fast.common.model_folders import model_folder
from pfgen_fast.common.reasoning import has_reasoning, strip_reasoning, unanswered
from pfgen_fast.evalmm.evaluate import score_predictions, scoring_record
from pfgen_fast.evalmm.images import image_failure, request_part
from pfgen_fast.evalmm.metrics.base import Options
from pfgen_fast.evalmm.outputs import (
    ERRORS,
    MANIFEST,
    PREDICTIONS,
    RUN_INFO,
    Prediction,
    RunRecord,
    count_errors,
    read_evaluation_record,
    read_predictions,
    read_run_record,
    scored_record,
    write_errors,
    write_evaluation,
    write_json,
    write_predictions,
)
from pfgen_fast.evalmm.tasks import (
    JIC_VQA_FILE,
    TaskInfo,
    TaskItem,
    iter_items,
    task_info,
)
from pfgen_fast.evalmm.tasks.rows import local_revision

SCHEMA_VERSION = "1.0"  # the original's result_schema


@dataclass(frozen=True, kw_only=True)
class Generation:
    """The generation settings of every request (recorded in run_info.json): the request's own
    parameters, how images are sent, `--extra-body` (merged in by the client) and whether
    `<think>` blocks are stripped from the replies."""

    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    image_format: str = "original"
    strip_reasoning: bool = False
    extra_body: dict[str, Any] = field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
        }


def empty_prediction(item: TaskItem, number: int) -> Prediction:
    """The prediction of a task's item `number` before its reply: an empty text."""
    return Prediction(
        question_id=item.question_id,
        text="",
        answer=item.answer,
        input_text=item.prompt,
        doc=item.doc,
        where=f"item {number} (question_id {item.question_id!r})",
    )


@dataclass(kw_only=True)
class TaskRun:
    """One task for one model: where it goes and how. `metrics`: those asked for (None: the
    task's own); `judge`: what run_info.json records of the judge (None: no judged metric)."""

    task: str
    model: str
    out: Path
    data_dir: Path | None
    generation: Generation
    metrics: list[str] | None
    inference_only: bool = False
    max_items: int | None = None
    overwrite: bool = False
    rotate_choices: bool = False
    evalmm_dir: Path | None = None  # llm-jp-eval-mm's files (None: the default places)
    judge: dict[str, Any] | None = None

    @property
    def folder(self) -> Path:
        return self.out / self.task / model_folder(self.model)

    def metric_names(self) -> list[str]:
        if self.inference_only:
            return []
        return self.metrics or list(task_info(self.task).metrics)

    def items(self) -> Iterator[TaskItem]:
        return iter_items(
            self.task,
            self.data_dir,
            evalmm_dir=self.evalmm_dir,
            rotate_choices=self.rotate_choices,
            max_items=self.max_items,
        )


def item_request(item: TaskItem, generation: Generation) -> ChatRequest:
    """The chat request of one item; ValueError saying which image cannot be sent and why."""
    from PIL import Image

    content: list[dict[str, Any]] = [{"type": "text", "text": item.input_text}]
    for number, image in enumerate(item.images, 1):
        try:
            content.append(request_part(image, generation.image_format))
        except (
            PfgenError,
            OSError,
            ValueError,
            SyntaxError,
            Image.DecompressionBombError,
        ) as error:
            raise ValueError(image_failure(number, image, error)) from None
    return ChatRequest([{"role": "user", "content": content}], generation.params())


def failure_reason(error: LLMError) -> str:
    """An item's failed request in the client's per-item words when it gives them."""
    reason = getattr(error, "reason", None)
    return reason if isinstance(reason, str) and reason else str(error)


def take_reply(prediction: Prediction, reply: LLMReply, generation: Generation) -> str | None:
    """Records a reply's answer (its `<think>` blocks removed with --strip-reasoning) and the
    reasoning returned apart; the item's error when the reply was cut at max_tokens or
    reasoned without reaching an answer."""
    text = strip_reasoning(reply.text) if generation.strip_reasoning else reply.text
    prediction.text = text
    prediction.reasoning = reply.reasoning
    reasoned = reply.reasoning is not None or has_reasoning(reply.text)
    if reply.finish_reason == "length" or reasoned:
        return unanswered(text, reply.finish_reason)
    return None


class TaskStopped(PfgenError):
    """The client stopped a task's requests (too many failed, or no server answers): its
    error, and the items that had failed by then, in dataset order."""

    def __init__(self, error: LLMError, errors: list[dict[str, Any]]) -> None:
        super().__init__(str(error))
        self.error = error
        self.errors = errors


def in_order(errors: list[dict[str, Any]], predictions: list[Prediction]) -> list[dict[str, Any]]:
    order = {prediction.question_id: i for i, prediction in enumerate(predictions)}
    return sorted(errors, key=lambda error: order[error["question_id"]])


def generate(run: TaskRun, client: LLMClient) -> tuple[list[Prediction], list[dict[str, Any]]]:
    """Every item's prediction in dataset order, and the errors of the failed items;
    TaskStopped when the client stops."""
    predictions: list[Prediction] = []
    errors: list[dict[str, Any]] = []
    asked: list[int] = []  # the prediction each request is for
    refused: dict[int, str] = {}  # request → why it failed, as the results come

    def requests() -> Iterator[ChatRequest]:
        for number, item in enumerate(run.items(), 1):
            predictions.append(empty_prediction(item, number))
            try:
                request = item_request(item, run.generation)
            except ValueError as error:
                errors.append({"question_id": item.question_id, "error": str(error)})
                continue
            asked.append(len(predictions) - 1)
            yield request

    def take(index: int, result: LLMReply | LLMError) -> None:
        if isinstance(result, LLMError):
            refused[index] = failure_reason(result)

    # The bar's total: a first pass over the items, which decodes no image (none without a bar).
    shown = client.progress is not None and client.progress.enabled
    total = sum(1 for _ in run.items()) if shown else None
    try:
        results = client.run(requests(), label=run.task, total=total, on_result=take)
    except LLMError as error:
        failed = [
            {"question_id": predictions[asked[index]].question_id, "error": reason}
            for index, reason in refused.items()
        ]
        raise TaskStopped(error, in_order(errors + failed, predictions)) from None
    for index, result in zip(asked, results, strict=True):
        prediction = predictions[index]
        if isinstance(result, LLMError):
            reason: str | None = failure_reason(result)
        else:
            reason = take_reply(prediction, result, run.generation)
        if reason is not None:
            errors.append({"question_id": prediction.question_id, "error": reason})
    return predictions, in_order(errors, predictions)


def reused(run: TaskRun) -> list[Prediction]:
    """The items with the replies (and reasoning) of an existing `prediction.jsonl`, which
    must hold the same items in the same order (images are not read)."""
    path = run.folder / PREDICTIONS
    predictions = [empty_prediction(item, number) for number, item in enumerate(run.items(), 1)]
    written = read_predictions(run.folder)
    for count, (line, prediction) in enumerate(zip(written, predictions, strict=False), 1):
        if line.question_id != prediction.question_id:
            raise InputError(
                f'{line.where}: field "question_id": expected {prediction.question_id!r} (the '
                f"task's item {count}); give --overwrite to run the model again"
            )
        text = strip_reasoning(line.text) if run.generation.strip_reasoning else line.text
        prediction.text = text
        prediction.reasoning = line.reasoning
        prediction.scores = line.scores  # a metric not scored again keeps its scores
    if len(written) > len(predictions):
        where = written[len(predictions)].where
        raise InputError(f"{where}: more lines than the task's {len(predictions)} items")
    if len(written) != len(predictions):
        raise InputError(
            f"{path}: {len(written)} lines for the task's {len(predictions)} items; give "
            "--overwrite to run the model again"
        )
    return predictions


@dataclass(frozen=True)
class TaskOutcome:
    """What one task's run gave: its evaluation (None with --inference-only), how many items
    failed (those of reused predictions included) and how many scores a judge could not give."""

    evaluation: dict[str, Any] | None
    failed: int
    unjudged: int


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


def run_record(run: TaskRun, info: TaskInfo) -> RunRecord:
    """run_info.json: the dataset, its revision and the settings the predictions were made
    with. A local copy's revision is what the copy says of itself (None when it says
    nothing), never the pinned one it may not be."""
    local = run.data_dir
    if local is None and info.name == "jic-vqa":
        local = JIC_VQA_FILE  # the prepared file, under the working directory
    return RunRecord(
        task=run.task,
        dataset=info.dataset,
        dataset_revision=info.revision if local is None else local_revision(local),
        local=local is not None,
        split=info.split,
        data_dir=None if local is None else str(local.absolute()),
        rotate_choices=run.rotate_choices,
        generation=asdict(run.generation),
        pfgen_fast_version=__version__,
    )


def run_task(run: TaskRun, client: LLMClient, options: Options) -> TaskOutcome:
    """Runs one task and writes its folder. Reused predictions keep their run record's
    generation, their other metrics' scores and totals; the scoring is recorded apart."""
    info = task_info(run.task)
    metrics = run.metric_names()
    folder = run.folder
    if (folder / PREDICTIONS).exists() and not run.overwrite:
        predictions = reused(run)
        failed = count_errors(folder)
        earlier = read_evaluation_record(folder)
        record = (
            read_run_record(folder)
            or replace(run_record(run, info), generation=None, pfgen_fast_version=None).record()
        )
        print(f"{run.task}: reusing {folder / PREDICTIONS}", file=sys.stderr)
    else:
        try:
            predictions, errors = generate(run, client)
        except TaskStopped as stopped:
            if not stopped.errors:
                raise stopped.error from None
            write_errors(folder, stopped.errors)
            raise LLMError(
                f"{run.task}: {stopped.error}; every item failed so far is in {folder / ERRORS}",
                stopped.error.status,
            ) from None
        failed = len(errors)
        write_errors(folder, errors)
        # The original's runner stops a task past this share of failed items, as the client
        # stops a run past it.
        if too_many_failures(len(errors), len(predictions)):
            raise PfgenError(
                f"{run.task}: {len(errors)} of {len(predictions)} items failed, more than "
                f"{FAILURE_SHARE:.0%}: stopped (all in {folder / ERRORS}; the first: "
                f"{errors[0]['error']})"
            )
        earlier = {}
        record = run_record(run, info).record()
    if not predictions:
        raise InputError(f"{run.task}: the dataset has no items")
    scored, unjudged = score_predictions(predictions, metrics, options)
    evaluation = {**earlier, **scored}
    write_predictions(folder, predictions)
    if not run.inference_only:
        write_evaluation(folder, evaluation)
    write_json(
        folder / RUN_INFO, scored_record(record, metrics, scoring_record(options), run.judge)
    )
    write_json(folder / MANIFEST, manifest(run, list(evaluation)))
    failures = f", {failed} failed (in {folder / ERRORS})" if failed else ""
    print(f"{run.task}: {len(predictions)} items{failures} -> {folder}", file=sys.stderr)
    return TaskOutcome(None if run.inference_only else evaluation, failed, unjudged)
