"""llm-jp-eval-mm's tasks (the 24 registered at the pinned commit): what each is, and its items
read from the Hub at a pinned revision or from a local copy of the dataset."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Literal

from pfgen_fast.common.errors import DataError, PfgenError
from pfgen_fast.evalmm.tasks import items as build
from pfgen_fast.evalmm.tasks.items import Options, TaskItem
from pfgen_fast.evalmm.tasks.rows import (
    HubSource,
    LocalSource,
    ParquetSource,
    Source,
    pinned_revision,
)

__all__ = [
    "DataLayout",
    "TaskInfo",
    "TaskItem",
    "check_source",
    "iter_items",
    "task_info",
    "task_names",
]

JIC_VQA_FILE = Path("dataset") / "jic_vqa.parquet"
JIC_VQA_SCRIPT = "scripts/prepare_jic_vqa.py"


@dataclass(frozen=True)
class DataLayout:
    """What `--data` holds for a task. `kind`: "hub-copy", a local copy of the Hub dataset
    repository (its README's configs, parquet files), or "prepared-parquet", the file
    llm-jp-eval-mm's JIC-VQA script writes (or the folder holding it). `configs`: the configs
    read, in order, or "all" (every config the dataset card lists, in its order); none for a
    prepared file. `split`: the split read. `make`: how to get it."""

    kind: Literal["hub-copy", "prepared-parquet"]
    configs: tuple[str, ...] | Literal["all"]
    split: str
    make: str

    def describe(self) -> str:
        """One line for `mm tasks`' table."""
        if self.kind == "prepared-parquet":
            return f"the prepared {JIC_VQA_FILE.name} (or its folder)"
        configs = "all configs" if self.configs == "all" else "config " + ", ".join(self.configs)
        return f"Hub copy: {configs}; split {self.split}"


@dataclass(frozen=True, kw_only=True)
class TaskInfo:
    """A task: its Hub dataset (`revision` pinned in reference_data, None: unpinned), the split
    it reads, its default metrics, its cluster and display name (llm-jp-eval-mm's
    metadata.py), and what `--data` holds for it."""

    name: str
    dataset: str
    revision: str | None
    split: str
    metrics: tuple[str, ...]
    cluster: str
    display_name: str
    data: DataLayout


Builder = Callable[[Source, Options], Iterator[TaskItem]]
VISUAL, KNOWLEDGE, ENGLISH, OTHER = "視覚中心", "言語・知識中心", "英語", "その他"


@dataclass(frozen=True, kw_only=True)
class Task:
    """One row of the task table (llm-jp-eval-mm's metadata.py and its Task classes): its Hub
    dataset, the split it reads, its default metrics (what `mm run` and `mm evaluate` score
    when none are named), its cluster and display name, how its items are built, and the
    configs it reads ("all": every config the dataset card lists)."""

    name: str
    dataset: str
    split: str
    metrics: tuple[str, ...]
    cluster: str
    display_name: str
    build: Builder
    configs: tuple[str, ...] | Literal["all"] = ("default",)


# In llm-jp-eval-mm's registration order.
TASKS = (
    Task(name="ja-vg-vqa-500", dataset="SakanaAI/JA-VG-VQA-500", split="test", metrics=("llm-as-a-judge", "rougel"), cluster=VISUAL, display_name="VG-VQA", build=build.ja_vg_vqa_500),  # noqa: E501
    Task(name="japanese-heron-bench", dataset="Silviase/Japanese-Heron-Bench", split="train", metrics=("heron-bench",), cluster=VISUAL, display_name="Heron", build=build.japanese_heron_bench),  # noqa: E501
    Task(name="ja-vlm-bench-in-the-wild", dataset="SakanaAI/JA-VLM-Bench-In-the-Wild", split="test", metrics=("llm-as-a-judge", "rougel"), cluster=VISUAL, display_name="JVB-ItW", build=build.ja_vlm_bench_in_the_wild),  # noqa: E501
    Task(name="jmmmu", dataset="JMMMU/JMMMU", split="test", metrics=("jmmmu",), cluster=KNOWLEDGE, display_name="JMMMU", build=build.jmmmu, configs="all"),  # noqa: E501
    Task(name="ja-multi-image-vqa", dataset="SakanaAI/JA-Multi-Image-VQA", split="test", metrics=("llm-as-a-judge", "rougel"), cluster=OTHER, display_name="MulIm-VQA", build=build.ja_multi_image_vqa),  # noqa: E501
    Task(name="jdocqa", dataset="speed/JDocQA", split="test", metrics=("jdocqa",), cluster=KNOWLEDGE, display_name="JDocQA", build=build.jdocqa),  # noqa: E501
    Task(name="mmmu", dataset="MMMU/MMMU", split="validation", metrics=("mmmu",), cluster=ENGLISH, display_name="MMMU", build=build.mmmu, configs="all"),  # noqa: E501
    Task(name="llava-bench-in-the-wild", dataset="lmms-lab/llava-bench-in-the-wild", split="train", metrics=("llm-as-a-judge", "rougel"), cluster=ENGLISH, display_name="LLAVA", build=build.llava_bench_in_the_wild),  # noqa: E501
    Task(name="jic-vqa", dataset="line-corporation/JIC-VQA", split="train", metrics=("jic-vqa",), cluster=VISUAL, display_name="JIC", build=build.jic_vqa),  # noqa: E501
    Task(name="mecha-ja", dataset="llm-jp/MECHA-ja", split="test", metrics=("mecha-ja",), cluster=KNOWLEDGE, display_name="MECHA", build=build.mecha_ja),  # noqa: E501
    Task(name="mmmlu", dataset="openai/MMMLU", split="test", metrics=("exact-match",), cluster=ENGLISH, display_name="MMMLU", build=build.mmmlu, configs=("JA_JP",)),  # noqa: E501
    Task(name="cc-ocr", dataset="wulipc/CC-OCR", split="test", metrics=("cc-ocr",), cluster=KNOWLEDGE, display_name="CC-OCR", build=build.cc_ocr, configs=("multi_lan_ocr",)),  # noqa: E501
    Task(name="cvqa", dataset="afaji/cvqa", split="test", metrics=("substring-match",), cluster=VISUAL, display_name="CVQA", build=build.cvqa),  # noqa: E501
    Task(name="ai2d", dataset="lmms-lab/ai2d", split="test", metrics=("ai2d",), cluster=ENGLISH, display_name="AI2D", build=build.ai2d),  # noqa: E501
    Task(name="blink", dataset="BLINK-Benchmark/BLINK", split="val", metrics=("blink",), cluster=ENGLISH, display_name="BLINK", build=build.blink, configs=tuple(build.BLINK_CONFIGS)),  # noqa: E501
    Task(name="docvqa", dataset="lmms-lab/DocVQA", split="validation", metrics=("substring-match",), cluster=ENGLISH, display_name="DocVQA", build=build.docvqa, configs=("DocVQA",)),  # noqa: E501
    Task(name="infographicvqa", dataset="lmms-lab/DocVQA", split="validation", metrics=("substring-match",), cluster=ENGLISH, display_name="InfoVQA", build=build.infographicvqa, configs=("InfographicVQA",)),  # noqa: E501
    Task(name="textvqa", dataset="lmms-lab/textvqa", split="validation", metrics=("substring-match",), cluster=ENGLISH, display_name="TextVQA", build=build.textvqa),  # noqa: E501
    Task(name="chartqa", dataset="lmms-lab/ChartQA", split="test", metrics=("substring-match",), cluster=ENGLISH, display_name="ChartQA", build=build.chartqa),  # noqa: E501
    Task(name="chartqapro", dataset="ahmed-masry/ChartQAPro", split="test", metrics=("substring-match",), cluster=ENGLISH, display_name="ChartQAPro", build=build.chartqapro),  # noqa: E501
    Task(name="okvqa", dataset="lmms-lab/OK-VQA", split="val2014", metrics=("substring-match",), cluster=ENGLISH, display_name="OK-VQA", build=build.okvqa),  # noqa: E501
    Task(name="jawildtext-board-vqa", dataset=build.JAWILDTEXT, split="train", metrics=("jawildtext-board-vqa",), cluster=KNOWLEDGE, display_name="JWTxt-Board", build=build.jawildtext_board_vqa, configs=("board_vqa",)),  # noqa: E501
    Task(name="jawildtext-handwriting-ocr", dataset=build.JAWILDTEXT, split="train", metrics=("jawildtext-handwriting-ocr",), cluster=KNOWLEDGE, display_name="JWTxt-HW", build=build.jawildtext_handwriting_ocr, configs=("handwriting_ocr",)),  # noqa: E501
    Task(name="jawildtext-receipt-kie", dataset=build.JAWILDTEXT, split="train", metrics=("jawildtext-receipt-kie",), cluster=KNOWLEDGE, display_name="JWTxt-Receipt", build=build.jawildtext_receipt_kie, configs=("receipt_kie",)),  # noqa: E501
)  # fmt: skip
TASKS_BY_NAME = {task.name: task for task in TASKS}


def task_names() -> list[str]:
    return [task.name for task in TASKS]


def task_row(name: str) -> Task:
    task = TASKS_BY_NAME.get(name)
    if task is None:
        raise PfgenError(f"unknown task {name!r} (one of {', '.join(task_names())})")
    return task


def jic_vqa_make() -> str:
    """How JIC-VQA's file is made: llm-jp-eval-mm's script (which `mm data fetch` brings)."""
    from pfgen_fast.evalmm.data import default_data_dir

    script = default_data_dir() / JIC_VQA_SCRIPT
    return (
        f"run llm-jp-eval-mm's {JIC_VQA_SCRIPT} in a folder (`python -m pfgen_fast mm data "
        f"fetch` puts it at {script}; it needs datasets, webdataset, backoff and requests): it "
        f"downloads the images line-corporation/JIC-VQA lists and writes {JIC_VQA_FILE} there"
    )


def data_layout(task: Task, revision: str | None) -> DataLayout:
    if task.name == "jic-vqa":
        return DataLayout("prepared-parquet", (), task.split, jic_vqa_make())
    pin = f" --revision {revision}" if revision else ""
    make = f"huggingface-cli download --repo-type dataset {task.dataset}{pin} --local-dir DIR"
    return DataLayout("hub-copy", task.configs, task.split, make)


def task_info(name: str) -> TaskInfo:
    task = task_row(name)
    revision = pinned_revision(task.dataset)
    return TaskInfo(
        name=task.name,
        dataset=task.dataset,
        revision=revision,
        split=task.split,
        metrics=task.metrics,
        cluster=task.cluster,
        display_name=task.display_name,
        data=data_layout(task, revision),
    )


def source_of(info: TaskInfo, data_dir: Path | None) -> Source:
    """Where the task's rows come from: `data_dir` (a local copy of the dataset repository,
    or for JIC-VQA its prepared parquet file or a folder holding jic_vqa.parquet), else the
    Hub (JIC-VQA: dataset/jic_vqa.parquet under the working directory, as the original)."""
    if info.name == "jic-vqa":
        file = JIC_VQA_FILE if data_dir is None else data_dir
        if file.is_dir():
            file = file / JIC_VQA_FILE.name
        if not file.is_file():
            given = "" if data_dir is not None else " (no --data jic-vqa=PATH given)"
            raise DataError(
                f"jic-vqa: {file} not found{given}; --data jic-vqa=PATH takes JIC-VQA's "
                f"prepared parquet file (or its folder): to make it, {info.data.make}"
            )
        return ParquetSource(file)
    if data_dir is not None:
        return LocalSource(data_dir)
    return HubSource(info.name, info.dataset, info.revision)


def check_source(name: str, data_dir: Path | None) -> None:
    """Raises the DataError that reading the task's data would raise for a missing prepared
    file, or a local copy that is not a folder or lacks a config, split or file the task
    reads (rows are not read)."""
    info = task_info(name)
    source = source_of(info, data_dir)
    if not isinstance(source, LocalSource):
        return
    configs = info.data.configs
    if configs == "all":
        names: list[str | None] = list(source.config_names())
    else:
        names = [None if config == "default" else config for config in configs]
    for config in names:
        source.files(source.config(config), info.data.split)


def iter_items(
    name: str,
    data_dir: Path | None = None,
    *,
    evalmm_dir: Path | None = None,
    rotate_choices: bool = False,
    max_items: int | None = None,
) -> Iterator[TaskItem]:
    """The task's items in dataset order (the first `max_items` of them), images undecoded.
    `evalmm_dir`: llm-jp-eval-mm's checkout or fetched copy, whose task files hold the texts
    the prompts add (None: $EVALMM_DIR, else the fetched copy); `rotate_choices`: MECHA-ja's
    four rotations of each item's options."""
    info = task_info(name)
    options = Options(rotate_choices=rotate_choices, evalmm_dir=evalmm_dir)
    items = task_row(name).build(source_of(info, data_dir), options)
    return items if max_items is None else islice(items, max_items)
