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
from pfgen_fast.evalmm.tasks.items import Options, TaskImage, TaskItem
from pfgen_fast.evalmm.tasks.rows import (
    HubSource,
    LocalSource,
    ParquetSource,
    Source,
    pinned_revision,
)

__all__ = [
    "DataLayout",
    "TaskImage",
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


@dataclass(frozen=True)
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

# name, dataset, split, default metrics, cluster, display name, builder (registration order)
TASKS: list[tuple[str, str, str, tuple[str, ...], str, str, Builder]] = [
    ("ja-vg-vqa-500", "SakanaAI/JA-VG-VQA-500", "test", ("llm-as-a-judge", "rougel"), VISUAL, "VG-VQA", build.ja_vg_vqa_500),  # noqa: E501
    ("japanese-heron-bench", "Silviase/Japanese-Heron-Bench", "train", ("heron-bench",), VISUAL, "Heron", build.japanese_heron_bench),  # noqa: E501
    ("ja-vlm-bench-in-the-wild", "SakanaAI/JA-VLM-Bench-In-the-Wild", "test", ("llm-as-a-judge", "rougel"), VISUAL, "JVB-ItW", build.ja_vlm_bench_in_the_wild),  # noqa: E501
    ("jmmmu", "JMMMU/JMMMU", "test", ("jmmmu",), KNOWLEDGE, "JMMMU", build.jmmmu),
    ("ja-multi-image-vqa", "SakanaAI/JA-Multi-Image-VQA", "test", ("llm-as-a-judge", "rougel"), OTHER, "MulIm-VQA", build.ja_multi_image_vqa),  # noqa: E501
    ("jdocqa", "speed/JDocQA", "test", ("jdocqa",), KNOWLEDGE, "JDocQA", build.jdocqa),
    ("mmmu", "MMMU/MMMU", "validation", ("mmmu",), ENGLISH, "MMMU", build.mmmu),
    ("llava-bench-in-the-wild", "lmms-lab/llava-bench-in-the-wild", "train", ("llm-as-a-judge", "rougel"), ENGLISH, "LLAVA", build.llava_bench_in_the_wild),  # noqa: E501
    ("jic-vqa", "line-corporation/JIC-VQA", "train", ("jic-vqa",), VISUAL, "JIC", build.jic_vqa),
    ("mecha-ja", "llm-jp/MECHA-ja", "test", ("mecha-ja",), KNOWLEDGE, "MECHA", build.mecha_ja),
    ("mmmlu", "openai/MMMLU", "test", ("exact-match",), ENGLISH, "MMMLU", build.mmmlu),
    ("cc-ocr", "wulipc/CC-OCR", "test", ("cc-ocr",), KNOWLEDGE, "CC-OCR", build.cc_ocr),
    ("cvqa", "afaji/cvqa", "test", ("substring-match",), VISUAL, "CVQA", build.cvqa),
    ("ai2d", "lmms-lab/ai2d", "test", ("ai2d",), ENGLISH, "AI2D", build.ai2d),
    ("blink", "BLINK-Benchmark/BLINK", "val", ("blink",), ENGLISH, "BLINK", build.blink),
    ("docvqa", "lmms-lab/DocVQA", "validation", ("substring-match",), ENGLISH, "DocVQA", build.docvqa),  # noqa: E501
    ("infographicvqa", "lmms-lab/DocVQA", "validation", ("substring-match",), ENGLISH, "InfoVQA", build.infographicvqa),  # noqa: E501
    ("textvqa", "lmms-lab/textvqa", "validation", ("substring-match",), ENGLISH, "TextVQA", build.textvqa),  # noqa: E501
    ("chartqa", "lmms-lab/ChartQA", "test", ("substring-match",), ENGLISH, "ChartQA", build.chartqa),  # noqa: E501
    ("chartqapro", "ahmed-masry/ChartQAPro", "test", ("substring-match",), ENGLISH, "ChartQAPro", build.chartqapro),  # noqa: E501
    ("okvqa", "lmms-lab/OK-VQA", "val2014", ("substring-match",), ENGLISH, "OK-VQA", build.okvqa),
    ("jawildtext-board-vqa", build.JAWILDTEXT, "train", ("jawildtext-board-vqa",), KNOWLEDGE, "JWTxt-Board", build.jawildtext_board_vqa),  # noqa: E501
    ("jawildtext-handwriting-ocr", build.JAWILDTEXT, "train", ("jawildtext-handwriting-ocr",), KNOWLEDGE, "JWTxt-HW", build.jawildtext_handwriting_ocr),  # noqa: E501
    ("jawildtext-receipt-kie", build.JAWILDTEXT, "train", ("jawildtext-receipt-kie",), KNOWLEDGE, "JWTxt-Receipt", build.jawildtext_receipt_kie),  # noqa: E501
]  # fmt: skip
BUILDERS: dict[str, Builder] = {entry[0]: entry[6] for entry in TASKS}
# each task's default metrics, what `mm evaluate` scores when none are named
METRICS: dict[str, tuple[str, ...]] = {entry[0]: entry[3] for entry in TASKS}


def task_names() -> list[str]:
    return [entry[0] for entry in TASKS]


# The configs a task reads other than its dataset's default one.
CONFIGS: dict[str, tuple[str, ...] | Literal["all"]] = {
    "jmmmu": "all",
    "mmmu": "all",
    "mmmlu": ("JA_JP",),
    "cc-ocr": ("multi_lan_ocr",),
    "blink": tuple(build.BLINK_CONFIGS),
    "docvqa": ("DocVQA",),
    "infographicvqa": ("InfographicVQA",),
    "jawildtext-board-vqa": ("board_vqa",),
    "jawildtext-handwriting-ocr": ("handwriting_ocr",),
    "jawildtext-receipt-kie": ("receipt_kie",),
}


def jic_vqa_make() -> str:
    """How JIC-VQA's file is made: llm-jp-eval-mm's script (which `mm data fetch` brings)."""
    from pfgen_fast.evalmm.data import default_data_dir

    script = default_data_dir() / JIC_VQA_SCRIPT
    return (
        f"run llm-jp-eval-mm's {JIC_VQA_SCRIPT} in a folder (`python -m pfgen_fast mm data "
        f"fetch` puts it at {script}; it needs datasets, webdataset, backoff and requests): it "
        f"downloads the images line-corporation/JIC-VQA lists and writes {JIC_VQA_FILE} there"
    )


def data_layout(name: str, dataset: str, revision: str | None, split: str) -> DataLayout:
    if name == "jic-vqa":
        return DataLayout("prepared-parquet", (), split, jic_vqa_make())
    pin = f" --revision {revision}" if revision else ""
    make = f"huggingface-cli download --repo-type dataset {dataset}{pin} --local-dir DIR"
    return DataLayout("hub-copy", CONFIGS.get(name, ("default",)), split, make)


def task_info(name: str) -> TaskInfo:
    for task, dataset, split, metrics, cluster, display, _ in TASKS:
        if task == name:
            revision = pinned_revision(dataset)
            layout = data_layout(task, dataset, revision, split)
            return TaskInfo(task, dataset, revision, split, metrics, cluster, display, layout)
    raise PfgenError(f"unknown task {name!r} (one of {', '.join(task_names())})")


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
    items = BUILDERS[name](source_of(info, data_dir), options)
    return items if max_items is None else islice(items, max_items)
