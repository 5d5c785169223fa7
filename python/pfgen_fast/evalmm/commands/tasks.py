"""`mm tasks`: llm-jp-eval-mm's tasks with their dataset, pinned revision, split, default
metrics, cluster, display name, and what `--data` holds for each and how to make it."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from pfgen_fast.evalmm.commands.score import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Lists llm-jp-eval-mm's tasks. `--data` of `mm run` takes, per task, a local copy of "
        "its Hub dataset repository holding the configs and split listed, or for jic-vqa the "
        "parquet file llm-jp-eval-mm's scripts/prepare_jic_vqa.py writes; each row says how "
        "to make it."
    )
    parser.add_argument("--json", action="store_true", help="print them as a JSON list")


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.common.tables import print_table
    from pfgen_fast.evalmm.tasks import task_info, task_names

    infos = [task_info(name) for name in task_names()]
    if args.json:
        print_json([asdict(info) for info in infos])
        return 0
    columns = ["task", "dataset", "revision", "split", "metrics", "cluster", "display name",
               "--data", "how to make it"]  # fmt: skip
    rows = [
        [i.name, i.dataset, i.revision or "unpinned", i.split, ", ".join(i.metrics), i.cluster,
         i.display_name, i.data.describe(), i.data.make]
        for i in infos
    ]  # fmt: skip
    print_table("llm-jp-eval-mm tasks", columns, rows)
    return 0
