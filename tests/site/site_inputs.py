"""Small inputs for the site, in the formats pfgen_fast's commands write: llm-jp-eval-mm result
folders (models of some tasks, two unless told) made from the tasks' datasets in their Hub
layouts (the mm tests' writers, `tests/evalmm/mm_datasets.py`), an `lctg eval --out` folder,
and a `judge pairwise --out` folder with the ranking `judge rank` makes of it (the real
command)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_runner import run_cli

EVALMM_TESTS = Path(__file__).resolve().parents[1] / "evalmm"  # mm_datasets.py
MM_TASK = "ja-vg-vqa-500"  # nested question lists: several items share one image
# tasks of other layouts: lists of images, image_0… and image_1… columns, row-index ids
MM_LAYOUTS = ("ja-multi-image-vqa", "jdocqa", "jmmmu", "mecha-ja")
MM_MODELS = ("org/vlm-small", "org/vlm-large")
MM_ANSWER_ID = "102"
MM_ANSWER = "赤いりんごが二つあります"  # the large model's answer to item MM_ANSWER_ID
MM_REASONING = "写真の中央に赤いりんごが見える。"  # the reasoning recorded with it
MM_REVISION = "aa13b70cd939faa1783187a752be2c0ca0d8303b"  # recorded in run_info.json
# the generation and judge settings recorded in run_info.json
MM_GENERATION: dict[str, Any] = {"strip_reasoning": True, "extra_body": {"top_k": 20}}
MM_JUDGE: dict[str, Any] = {"model": "judge-1", "max_tokens": {"llm-as-a-judge": 77}}
LCTG_ANSWER = "新商品のお茶は香りが豊かで、毎日の休憩にぴったりです。"
JUDGE_REPLY = "回答Aのほうが正確です。[[A]]"
PFGEN_RUNS = (
    "result/sbintuitions/sarashina1-13b/9c5badf",
    "result/openai/chatgpt-4o-latest/c275a7b",
    "result/Qwen/Qwen-Max/0944f44",
)


def write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


def mm_text(number: int, model: str, qid: str) -> str:
    """The answer of the `number`th model to item `qid`: each model's answers its own."""
    return MM_ANSWER if (number, qid) == (1, MM_ANSWER_ID) else f"{model} の答え {qid}"


@dataclass(frozen=True)
class MmItem:
    """An item as `mm run` builds it from the dataset: its id, prompt, reference, and the
    sizes of its images in order."""

    question_id: str
    prompt: str
    answer: Any
    image_sizes: list[tuple[int, int]]


def mm_items(task: str, dataset: Path) -> list[MmItem]:
    """The task's items, built by the evalmm room's item builder (as `mm run` does)."""
    from pfgen_fast.evalmm.tasks import iter_items

    return [
        MmItem(item.question_id, item.prompt, item.answer, [i.open().size for i in item.images])
        for item in iter_items(task, dataset)
    ]


def mm_dataset(root: Path, task: str) -> Path:
    """The task's dataset in its Hub layout, written by the mm tests' writers."""
    if str(EVALMM_TESTS) not in sys.path:
        sys.path.append(str(EVALMM_TESTS))
    from mm_datasets import WRITERS

    folder = root / "mm-datasets" / task
    if not folder.exists():
        WRITERS[task](folder)
    return folder


def make_mm(
    root: Path,
    models: tuple[str, ...] = MM_MODELS,
    tasks: tuple[str, ...] = (MM_TASK,),
    record_data: bool = True,
) -> tuple[Path, dict[str, Path]]:
    """A result folder `<task>/<model>/` per task and model, as `mm run` writes it (its
    run_info.json names the dataset folder unless `record_data` is false), and each task's
    dataset folder."""
    results = root / "mm-results"
    datasets = {task: mm_dataset(root, task) for task in tasks}
    for task, dataset in datasets.items():
        items = mm_items(task, dataset)
        for number, model in enumerate(models):
            folder = results / task / model
            rows = []
            for item in items:
                text = mm_text(number, model, item.question_id)
                score = 1.0 if text == MM_ANSWER else 0.25 * (number + 1)
                row = {
                    "question_id": item.question_id,
                    "text": text,
                    "answer": item.answer,
                    "input_text": item.prompt,
                    "rougel": score,
                    "llm-as-a-judge": 5 if text == MM_ANSWER else 2,
                }
                if text == MM_ANSWER:
                    row["reasoning"] = MM_REASONING
                rows.append(row)
            write_lines(folder / "prediction.jsonl", rows)
            evaluation = {
                "rougel": {"overall_score": 0.4 + 0.3 * number, "details": {}},
                "llm-as-a-judge": {"overall_score": 2.5 + number, "details": {}},
            }
            write_lines(folder / "evaluation.jsonl", [evaluation])
            manifest = {
                "schema_version": "1.0",
                "model_id": model,
                "task_id": task,
                "metrics": ["llm-as-a-judge", "rougel"],
                "created_at": "2026-01-01T00:00:00Z",
                "result_dir": str(folder),
            }
            (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
            record = mm_run_info(task, model, dataset if record_data else None)
            (folder / "run_info.json").write_text(json.dumps(record), encoding="utf-8")
    return results, datasets


def mm_run_info(task: str, model: str, dataset: Path | None) -> dict[str, Any]:
    """run_info.json as `mm run` writes it (its own code), with MM_GENERATION and MM_JUDGE,
    and the revision MM_REVISION."""
    from pfgen_fast.evalmm.runner import Generation, TaskRun, run_info
    from pfgen_fast.evalmm.tasks import task_info

    run = TaskRun(
        task=task,
        model=model,
        out=Path("result"),
        data_dir=dataset,
        generation=Generation(**MM_GENERATION),
        metrics=None,
        judge=MM_JUDGE,
    )
    record = run_info(run, task_info(task))
    return {**record, "dataset_revision": MM_REVISION}


def make_lctg(root: Path) -> Path:
    out = root / "lctg-out"
    out.mkdir(parents=True)
    constraints = ["format", "char_count", "keyword", "prohibited_word"]
    records = []
    for prompt_id in (1, 2):
        for constraint in constraints:
            for iteration in range(3):
                text = (
                    LCTG_ANSWER
                    if (prompt_id, constraint, iteration) == (2, "keyword", 1)
                    else (f"広告文 {prompt_id}-{constraint}-{iteration}")
                )
                records.append(
                    {
                        "prompt_id": prompt_id,
                        "constraint": constraint,
                        "iteration": iteration,
                        "raw": "はい、広告文です。\n" + text,
                        "cleaned": text,
                        "remover_status": 200,
                        "check": iteration != 2,
                        "judge_replies": ["適切"],
                        "quality": True,
                    }
                )
    write_lines(out / "lctg-ad_text-analysis.jsonl", records)
    scores = {
        "Format-ctg": 0.667,
        "Format-qual": 1.0,
        "C-count-ctg": 0.5,
        "C-count-qual": 1.0,
        "Keyword-ctg": 0.667,
        "Keyword-qual": 1.0,
        "P-word-ctg": 0.833,
        "P-word-qual": 1.0,
        "Avg-ctg": 0.667,
        "Avg-qual": 1.0,
    }
    document = {
        "task": "ad_text",
        "model": "org/writer-7b",
        "scores": scores,
        "judge": {
            "base_url": "http://127.0.0.1:1/v1",
            "model": "judge-model",
            "sampling": "seed 0",
        },
        "prompts_scored": 2,
        "prompts_in_task": 2,
        "details": {},
    }
    (out / "lctg-ad_text-scores.json").write_text(
        json.dumps(document, ensure_ascii=False), encoding="utf-8"
    )
    return out


def order(first: str, letter: str, probability: float) -> dict[str, Any]:
    rest = (1 - probability) / 2
    probabilities = {x: probability if x == letter else rest for x in "ABC"}
    return {
        "shown_first": first,
        "letter": letter,
        "position": 10,
        "probabilities": probabilities,
        "top_logprobs": [],
        "text": JUDGE_REPLY,
    }


def make_judge(root: Path) -> Path:
    out = root / "judge-out"
    pairwise = out / "pairwise"
    models = ["model-x", "model-y", "model-z"]
    records = []
    number = 0
    for a in models:
        for b in models:
            if a >= b:
                continue
            for letter in "ABAC":
                number += 1
                records.append(
                    {
                        "id": f"p{number}",
                        "task": "qa",
                        "model_a": a,
                        "model_b": b,
                        "verdict": {"proposed": letter, "bs1": letter, "bs2": letter},
                        "consistent": True,
                        "tie_broken": False,
                        "averages": {"A": 0.8 if letter == "A" else 0.1, "B": 0.1, "C": 0.1},
                        "orders": [order("A", letter, 0.8), order("B", letter, 0.7)],
                    }
                )
    write_lines(pairwise / "items.jsonl", records)
    summary = {
        "items": len(records),
        "errors": 0,
        "labelled": 0,
        "robustness": 1.0,
        "tie_breaks": 0,
    }
    (pairwise / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    ranked = run_cli(
        "judge", "rank", pairwise, "--bootstrap", "50", "--table", out / "ranking.json"
    )
    assert ranked.returncode == 0, ranked.stderr
    return out


def bench_dir() -> Path:
    """The pfgen-bench checkout (found by `published.py`); the test is skipped without it."""
    from published import CHECKOUT, require

    return require(CHECKOUT)


def make_pfgen(root: Path, published: Path) -> Path:
    """A result tree of a few published runs (copied as they are) and the checkout's data/."""
    import shutil

    tree = root / "pfgen"
    for run in PFGEN_RUNS:
        source = published / run
        target = tree / run
        target.mkdir(parents=True)
        for name in ("result.json", "config.json"):
            shutil.copy(source / name, target / name)
    shutil.copytree(
        published / "data", tree / "data", ignore=shutil.ignore_patterns("final", "result.json")
    )
    return tree
