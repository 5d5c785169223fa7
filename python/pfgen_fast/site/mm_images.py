"""The images of an llm-jp-eval-mm task's items, as the site shows them: built by the evalmm
room's item builder (the code `mm run` sends them with, so every task's layout is read as the
task reads it, several images per item in their order) from the dataset the runs recorded in
their `run_info.json`, or from `--mm-data TASK=DIR`. Each image is written once under
OUT/images/mm/, named by its content, by `mm run`'s rule (`image_file`): as stored when browsers
show its format and no EXIF orientation turns it, else as a PNG of the pixels the task gives."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.evalmm.outputs import (
    ResultFolder,
    image_failure,
    image_file,
    item_images,
    recorded_data_dir,
    rotated_choices,
)
from pfgen_fast.site.build import write_named

# Formats browsers show (Pillow's names) and their file extensions.
SHOWN_FORMATS = {"PNG": ".png", "JPEG": ".jpg", "GIF": ".gif", "WEBP": ".webp", "BMP": ".bmp"}


@dataclass
class TaskImages:
    """A task's images by question id (paths relative to OUT), or why there are none."""

    paths: dict[str, list[str]] = field(default_factory=dict)
    problem: str | None = None  # shown on the task's run pages
    warned: bool = False  # a dataset given or recorded could not be read: a warning too


def dataset_folders(runs: list[ResultFolder], given: Path | None) -> list[Path | None]:
    """Where the task's dataset is read from: the folder given, else each folder the runs
    recorded (None: a run that read the Hub); empty when no run recorded one."""
    if given is not None:
        return [given]
    return list(dict.fromkeys(recorded_data_dir(run) for run in runs if run.run_info))


def folder_text(folder: Path | None) -> str:
    return "the Hugging Face Hub" if folder is None else str(folder)


def task_images(task: str, runs: list[ResultFolder], given: Path | None, out: Path) -> TaskImages:
    """The images of every item the task's runs answered, from the first dataset folder that
    can be read, written under `out`/images/mm/."""
    folders = dataset_folders(runs, given)
    if not folders:
        return TaskImages(
            problem=f"{task}: images left out: no run records its dataset (the run_info.json "
            f"`mm run` writes); give --mm-data {task}=DIR"
        )
    wanted = {str(p.question_id) for run in runs for p in run.predictions}
    rotated = any(rotated_choices(run) for run in runs)
    problems = []
    for folder in folders:
        try:
            paths, failures = read_images(task, wanted, folder, rotated, out)
        except (PfgenError, OSError, ValueError) as error:
            problems.append(f"{folder_text(folder)}: {error}")
            continue
        except ImportError as error:
            problems.append(
                f"{error.name or error} is not installed (pip install 'pfgen_fast[mm]')"
            )
            break
        if not failures:
            return TaskImages(paths)
        more = f" and {len(failures) - 1} more" if len(failures) > 1 else ""
        problem = f"{task}: images left out: {failures[0]}{more} (dataset {folder_text(folder)})"
        return TaskImages(paths, problem=problem, warned=True)
    return TaskImages(
        problem=f"{task}: images left out: its dataset could not be read from "
        + "; ".join(problems),
        warned=True,
    )


def read_images(
    task: str, wanted: set[str], folder: Path | None, rotated: bool, out: Path
) -> tuple[dict[str, list[str]], list[str]]:
    """The files written for the items' images by question id, and why each image that could
    not be shown was left out (as `mm run` fails its item, the others are shown)."""
    from PIL import Image

    paths: dict[str, list[str]] = {}
    failures = []
    for question_id, images in item_images(task, wanted, folder, rotated):
        paths[question_id] = []
        for number, image in enumerate(images, 1):
            try:
                data, kind = image_file(image, SHOWN_FORMATS)
            except (PfgenError, OSError, ValueError, Image.DecompressionBombError) as error:
                failures.append(f"item {question_id}, {image_failure(number, image, error)}")
                continue
            suffix = SHOWN_FORMATS[kind]
            paths[question_id].append(write_named(out, "images/mm", "image", suffix, data))
    return paths, failures
