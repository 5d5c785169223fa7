"""The items of each task, read from a small local dataset in the Hub layout, equal what
llm-jp-eval-mm's own Task classes make of the same folder (its task modules imported from
$EVALMM_DIR/src, `datasets.load_dataset` pointed at the folder): so the texts pfgen_fast reads
from those modules' source are the ones they use."""

from __future__ import annotations

import base64
import importlib
import io
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from pfgen_fast.evalmm import tasks
from pfgen_fast.evalmm.images import ORIENTATION, request_part
from pfgen_fast.evalmm.metrics.scorers import get_scorer
from published import EVALMM_SOURCE, evalmm_dir, require

pytest.importorskip("datasets")
import mm_datasets  # noqa: E402


def reference_tasks() -> types.ModuleType:
    """llm-jp-eval-mm's `eval_mm.tasks`, without running its package's __init__ (which loads
    the API clients and scorers that building items does not use)."""
    folder = require(EVALMM_SOURCE) / "src" / "eval_mm"
    if "eval_mm" not in sys.modules:
        package = types.ModuleType("eval_mm")
        package.__path__ = [str(folder)]
        sys.modules["eval_mm"] = package
    return importlib.import_module("eval_mm.tasks")


def reference_items(
    name: str, folder: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, rotate: bool = False
) -> list[dict[str, Any]]:
    """What the original Task makes of `folder`: its full `_prepare_dataset` path."""
    import datasets

    module_tasks = reference_tasks()
    registry = importlib.import_module("eval_mm.tasks.task_registry")
    task_class = registry._task_registry[name]
    module = sys.modules[task_class.__module__]

    def load_dataset(path: str, name: str | None = None, split: str | None = None, **kw: Any):
        if path == "parquet":
            return datasets.load_dataset(
                "parquet", data_files=kw["data_files"], split=split, cache_dir=str(cache)
            )
        return datasets.load_dataset(str(folder), name=name, split=split, cache_dir=str(cache))

    monkeypatch.setattr(module, "load_dataset", load_dataset)
    if hasattr(module, "get_dataset_config_names"):
        monkeypatch.setattr(
            module,
            "get_dataset_config_names",
            lambda _id: datasets.get_dataset_config_names(str(folder)),
        )
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.delenv("EVAL_MM_TEST_SUBSET", raising=False)
    task = task_class(module_tasks.TaskConfig(rotate_choices=rotate))
    result = []
    for doc in task.dataset:
        result.append(
            {
                "question_id": task.doc_to_id(doc),
                "text": task.doc_to_text(doc),
                "images": task.doc_to_visual(doc),
                "answer": task.doc_to_answer(doc),
                "doc": doc,
            }
        )
    return result


def assert_same_items(name: str, ours: list[tasks.TaskItem], theirs: list[dict[str, Any]]) -> None:
    assert len(ours) == len(theirs)
    for mine, reference in zip(ours, theirs, strict=True):
        if name == "chartqapro":
            # the original's ids end with Python's per-process hash of the question; ours
            # with the row index
            year = reference["question_id"].rsplit("_", 1)[0]
            assert mine.question_id == f"{year}_{ours.index(mine)}"
        else:
            assert mine.question_id == reference["question_id"]
        assert mine.prompt == reference["text"]
        assert mine.input_text == reference["text"].replace("<image>", "")
        assert mine.answer == reference["answer"]
        for key, value in mine.doc.items():
            assert value == reference["doc"][key], (mine.question_id, key)
        assert len(mine.images) == len(reference["images"])
        for image, expected in zip(mine.images, reference["images"], strict=True):
            decoded = image.open()
            assert decoded.size == expected.size
            assert decoded.mode == expected.mode
            assert decoded.tobytes() == expected.tobytes(), (mine.question_id, expected.format)
            assert_sent_as_given(image, expected, mine.question_id)


def assert_sent_as_given(image: tasks.TaskImage, expected: Any, question_id: str) -> None:
    """What `mm run` sends by default decodes to the Task's pixels (in the Task's mode), and
    carries no EXIF orientation a server could apply or not. Images the Task re-saves
    (JA-VG-VQA-500, MECHA-ja) are sent as published, so only their size is compared."""
    from PIL import Image

    url = request_part(image, "original")["image_url"]["url"]
    received = Image.open(io.BytesIO(base64.b64decode(url.partition(";base64,")[2])))
    received.load()
    assert received.getexif().get(ORIENTATION) in (None, 1), question_id
    assert received.size == expected.size, question_id
    if image.resaves == 0:
        pixels = received if received.mode == expected.mode else received.convert(expected.mode)
        assert pixels.tobytes() == expected.tobytes(), question_id


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(mm_datasets.WRITERS))
def test_items_equal_the_original_tasks(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the original reads JIC-VQA from dataset/jic_vqa.parquet
    folder = mm_datasets.WRITERS[name](tmp_path / "dataset")
    ours = list(tasks.iter_items(name, folder, evalmm_dir=evalmm_dir()))
    theirs = reference_items(name, folder, tmp_path / "cache", monkeypatch)
    assert ours
    assert_same_items(name, ours, theirs)
    info = tasks.task_info(name)
    for metric in info.metrics:
        for field, _type in get_scorer(metric).fields:
            assert all(field in item.doc for item in ours), (metric, field)


def test_mecha_ja_rotated_choices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = mm_datasets.mecha_ja(tmp_path / "dataset")
    ours = list(tasks.iter_items("mecha-ja", folder, evalmm_dir=evalmm_dir(), rotate_choices=True))
    theirs = reference_items("mecha-ja", folder, tmp_path / "cache", monkeypatch, rotate=True)
    assert [item.question_id for item in ours][:5] == [
        "0_rot0",
        "0_rot1",
        "0_rot2",
        "0_rot3",
        "1_rot0",
    ]
    assert_same_items("mecha-ja", ours, theirs)
