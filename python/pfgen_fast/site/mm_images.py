"""The data an llm-jp-eval-mm task's runs are shown against: each run's own copy of the
dataset (`--mm-data TASK=DIR`, else the folder its `run_info.json` recorded, else the Hub),
checked to be that run's data (every item it answered there, with the question it recorded).
Runs of one copy are shown together; a run whose data cannot be had is shown with its own
questions and no images, and its page says why. Images are built by the evalmm room's item
builder (the code `mm run` sends them with, so every task's layout is read as the task reads
it, several images per item in their order), and each is written once under OUT/images/mm/,
named by its content, by `mm run`'s rule (`image_file`): as stored when browsers show its
format and no EXIF orientation turns it, else as a PNG of the pixels the task gives."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.evalmm.outputs import (
    ResultFolder,
    dataset_items,
    image_failure,
    image_file,
    recorded_data_dir,
    rotated_choices,
)
from pfgen_fast.site.build import write_named

# Formats browsers show (Pillow's names) and their file extensions.
SHOWN_FORMATS = {"PNG": ".png", "JPEG": ".jpg", "GIF": ".gif", "WEBP": ".webp", "BMP": ".bmp"}
IMAGES = "images/mm"


@dataclass
class DataGroup:
    """Runs of a task (their places in the task's list) shown against one dataset copy, with
    their items' images by question id (paths relative to OUT); or the runs whose data could
    not be had (no images)."""

    runs: list[int]
    paths: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # shown on each of its runs' pages


@dataclass
class TaskData:
    """The groups of a task's runs; a note for each run whose data could not be had; and the
    lines the build prints (a dataset given or recorded that could not be used)."""

    groups: list[DataGroup] = field(default_factory=list)
    run_notes: dict[int, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def folder_text(folder: Path | None) -> str:
    return "the Hugging Face Hub" if folder is None else str(folder)


def task_data(task: str, runs: list[ResultFolder], given: Path | None, out: Path) -> TaskData:
    """Each run's own dataset: `given`, else the one its run record names. A run with no record
    (llm-jp-eval-mm's own results) is shown against the first of the task's datasets that holds
    its questions, if any; else its page says so (no warning: nothing names its data)."""
    recorded = [given is not None or bool(run.run_info) for run in runs]
    own = [given if given is not None else recorded_data_dir(run) for run in runs]
    folders = list(dict.fromkeys(f for f, r in zip(own, recorded, strict=True) if r))
    data = TaskData()
    placed: set[int] = set()
    for folder in folders:
        mine = [n for n in range(len(runs)) if recorded[n] and own[n] == folder]
        strays = [n for n in range(len(runs)) if not recorded[n] and n not in placed]
        try:
            group, mismatched = read_dataset(task, runs, mine + strays, folder, out)
        except (PfgenError, OSError, ValueError) as error:
            named = folder is not None and str(error).startswith(str(folder))
            why = str(error) if named else f"{folder_text(folder)}: {error}"
            note = (
                f"{task}: the dataset this run recorded cannot be read ({why}): shown with the "
                "questions the run recorded, no images"
            )
            data.warnings.append(note)
            data.run_notes.update((n, note) for n in mine)
            continue
        except ImportError as error:
            why = f"{error.name or error} is not installed (pip install 'pfgen_fast[mm]')"
            data.warnings.append(f"{task}: images left out: {why}")
            data.groups.append(DataGroup(list(range(len(runs))), notes=[data.warnings[-1]]))
            return data
        for n, reason in mismatched.items():
            if n in mine:
                note = (
                    f"{task}: the dataset {folder_text(folder)} is not the one this run "
                    f"answered ({reason}): shown with the questions it recorded, no images"
                )
                data.warnings.append(f"{runs[n].folder}: {note}")
                data.run_notes[n] = note
        if group.runs:
            data.groups.append(group)
            data.warnings.extend(group.notes)
            placed.update(group.runs)
    unplaced = [n for n in range(len(runs)) if n not in placed]
    for n in unplaced:
        data.run_notes.setdefault(
            n,
            f"{task}: images left out: no run record names the dataset this run answered (the "
            f"run_info.json `mm run` writes) and no dataset of the task holds its questions; "
            f"give --mm-data {task}=DIR",
        )
    if unplaced:
        data.groups.append(DataGroup(unplaced))
    data.warnings = list(dict.fromkeys(data.warnings))
    return data


def read_dataset(
    task: str, runs: list[ResultFolder], candidates: list[int], folder: Path | None, out: Path
) -> tuple[DataGroup, dict[int, str]]:
    """The candidate runs whose items are all in the dataset at `folder` with the questions they
    recorded, with those items' images written under `out`; and why each other candidate's
    data is not this one. An image that cannot be shown is left out alone (as `mm run` fails
    its item alone): the group's note names the first and how many more."""
    from PIL import Image

    asked = {n: {str(p.question_id): p.input_text for p in runs[n].predictions} for n in candidates}
    mismatched: dict[int, str] = {}
    wanted = {qid for questions in asked.values() for qid in questions}
    rotated = any(rotated_choices(runs[n]) for n in candidates)
    paths: dict[str, list[str]] = {}
    failures = []
    found = set()
    for item in dataset_items(task, wanted, folder, rotated):
        found.add(item.question_id)
        for n, questions in asked.items():
            question = questions.get(item.question_id)
            if n not in mismatched and question is not None and question != item.prompt:
                mismatched[n] = f"item {item.question_id}: another question"
        if all(n in mismatched or item.question_id not in q for n, q in asked.items()):
            continue
        paths[item.question_id] = []
        for number, image in enumerate(item.images, 1):
            try:
                data, kind = image_file(image, SHOWN_FORMATS)
            except (PfgenError, OSError, ValueError, Image.DecompressionBombError) as error:
                failures.append(f"item {item.question_id}, {image_failure(number, image, error)}")
                continue
            suffix = SHOWN_FORMATS[kind]
            paths[item.question_id].append(write_named(out, IMAGES, "image", suffix, data))
    for n, questions in asked.items():
        missing = next((qid for qid in questions if qid not in found), None)
        if n not in mismatched and missing is not None:
            mismatched[n] = f"item {missing} is not in it"
    group = DataGroup([n for n in candidates if n not in mismatched])
    group.paths = paths
    if failures:
        more = f" and {len(failures) - 1} more" if len(failures) > 1 else ""
        group.notes.append(
            f"{task}: images left out: {failures[0]}{more} (dataset {folder_text(folder)})"
        )
    return group, mismatched
