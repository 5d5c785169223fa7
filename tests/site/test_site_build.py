"""The site command without a browser: what OUT holds, Japanese text written as UTF-8, the
marks of the page's contract, each mm task's images from its run record, rebuilds that keep
what the site did not write, and bad input (one line each, the site still written)."""

from __future__ import annotations

import html
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from site_inputs import (
    DISAGREEING_ANSWERS,
    JUDGE_ANSWERS,
    JUDGE_QUESTION,
    LCTG_ANSWER,
    MM_ANSWER,
    MM_FAILED_ID,
    MM_GENERATION,
    MM_JUDGE,
    MM_LAYOUTS,
    MM_MODELS,
    MM_REASONING,
    MM_REVISION,
    MM_TASK,
    PFGEN_RUNS,
    bench_dir,
    changed_copy,
    lctg_item,
    lctg_prompts,
    make_judge,
    make_lctg,
    make_mm,
    make_pfgen,
    mm_items,
    mm_text,
)

from cli_runner import run_cli


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inputs")
    results, datasets = make_mm(root)
    return {
        "pfgen": make_pfgen(root, bench_dir()),
        "lctg": make_lctg(root),
        "mm": results,
        "mm-data": datasets[MM_TASK],
        "judge": make_judge(root),
    }


def site_args(inputs: dict[str, Path], out: Path) -> list[str | Path]:
    return [
        "site",
        out,
        "--pfgen",
        inputs["pfgen"],
        "--lctg",
        inputs["lctg"],
        "--mm",
        inputs["mm"],
        "--judge",
        inputs["judge"],
        "--title",
        "結果の一覧",
    ]


@pytest.mark.slow
def test_the_site_holds_every_benchmark(inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = run_cli(*site_args(inputs, out))
    assert done.returncode == 0, done.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    for key in ("pfgen", "lctg", "mm", "judge"):
        assert f'data-leaderboard="{key}"' in index
        assert f'data-show="{key}"' in index
    for run in PFGEN_RUNS:
        assert f'data-run="{run}"' in index
    assert f'data-run="{MM_TASK}/org/vlm-large"' in index
    assert MM_REVISION in index  # a run's settings: its manifest and run_info.json
    assert "<title>結果の一覧</title>" in index
    pages = {p.name: p.read_text(encoding="utf-8") for p in (out / "runs").glob("*.js")}
    assert len(pages) == 3 + 1 + 2 + 1 + 1  # the run pages and the mm task's shared items
    everything = "".join(pages.values())
    assert MM_ANSWER in everything and LCTG_ANSWER in everything and MM_REASONING in everything
    assert '"category":null' not in everything.replace(" ", "")
    assert not re.search(r"\\u[0-9a-fA-F]{4}", everything + index)
    # three items, two images: the nested questions of one image share its file
    assert len([p for p in (out / "images").rglob("*") if p.is_file()]) == 2
    # nothing in OUT points outside it
    assert not re.search(r"(src|href)=\"(https?:)?//", index)


def test_several_runs_of_one_model_show_their_spread(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    again = tmp_path / "again"
    shutil.copytree(inputs["mm"], again)
    evaluation = again / MM_TASK / "org/vlm-large" / "evaluation.jsonl"
    evaluation.write_text(json.dumps({"rougel": {"overall_score": 0.9, "details": {}}}) + "\n")
    out = tmp_path / "out"
    assert run_cli("site", out, "--mm", inputs["mm"], "--mm", again).returncode == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    spread = statistics.stdev([0.7, 0.9])
    cells = re.findall(r'data-column="rougel" data-value="([0-9.]+)" data-std="([0-9.]+)"', index)
    # the small model scored the same twice: a spread of 0
    assert sorted(cells) == [
        ("0.4", "0.0"),
        ("0.4", "0.0"),
        ("0.7", str(spread)),
        ("0.9", str(spread)),
    ]


def test_a_run_page_is_a_script_that_cannot_close_a_script_element(tmp_path: Path) -> None:
    results = tmp_path / "mm" / "task" / "model"
    results.mkdir(parents=True)
    row = {"question_id": "1", "text": "</script><b>x</b>", "answer": "a", "input_text": "q"}
    (results / "prediction.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    done = run_cli("site", tmp_path / "out", "--mm", tmp_path / "mm")
    assert done.returncode == 0, done.stderr
    scripts = [p.read_text(encoding="utf-8") for p in (tmp_path / "out" / "runs").glob("*.js")]
    assert len(scripts) == 2  # the run page and the task's shared items
    text = "".join(scripts)
    assert "</script>" not in text and "<\\/script>" in text


def test_mm_answers_are_written_once_however_many_models(tmp_path: Path) -> None:
    sizes = []
    for count in (2, 6):
        models = tuple(f"org/vlm-{n}" for n in range(count))
        results, _ = make_mm(tmp_path / str(count), models)
        out = tmp_path / str(count) / "out"
        done = run_cli("site", out, "--mm", results)
        assert done.returncode == 0, done.stderr
        written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
        for number, model in enumerate(models):
            for qid in ("101", "102", "103"):
                assert written.count(mm_text(number, model, qid).encode()) == 1
        sizes.append(sum(p.stat().st_size for p in (out / "runs").iterdir()))
    # each model adds its answers and its page, not another copy of every answer
    assert sizes[1] < 3.5 * sizes[0], sizes


def test_a_folder_with_nothing_recognised_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = run_cli("site", tmp_path / "out", "--mm", tmp_path / "empty")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "prediction.jsonl" in lines[0] and str(tmp_path / "empty") in lines[0]
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "empty"]  # no temporary folder left


def test_broken_files_are_named_and_left_out(inputs: dict[str, Path], tmp_path: Path) -> None:
    mm = tmp_path / "mm"
    bad_run = mm / MM_TASK / "broken"
    bad_run.mkdir(parents=True)
    (bad_run / "prediction.jsonl").write_text('{"question_id": "101", "text": \n', "utf-8")
    good_run = mm / MM_TASK / "good"
    good_run.mkdir()
    good = {"question_id": "101", "text": "よい答え", "answer": "a", "input_text": "q"}
    (good_run / "prediction.jsonl").write_text(json.dumps(good) + "\n", "utf-8")
    pfgen = tmp_path / "pfgen"
    bad_result = pfgen / "result" / "org" / "model" / "abc"
    bad_result.mkdir(parents=True)
    (bad_result / "result.json").write_text("{not json", "utf-8")
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", mm, "--pfgen", pfgen)
    assert done.returncode == 1
    warnings = done.stderr.strip().splitlines()
    assert any(str(bad_run / "prediction.jsonl") + ":1" in w for w in warnings), warnings
    assert any(str(bad_result / "result.json") in w for w in warnings), warnings
    assert all(w.startswith("error: ") for w in warnings)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f'data-run="{MM_TASK}/good"' in index
    assert "broken" not in index and 'data-leaderboard="pfgen"' not in index


def test_a_site_replaces_the_one_before_and_no_other_folder(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert run_cli("site", out, "--judge", inputs["judge"]).returncode == 0
    assert run_cli("site", out, "--lctg", inputs["lctg"]).returncode == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-leaderboard="lctg"' in index and 'data-leaderboard="judge"' not in index
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `folder`, by path relative to it."""
    return {
        p.relative_to(folder).as_posix(): None if p.is_dir() else p.read_bytes()
        for p in folder.rglob("*")
    }


def git(folder: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=folder, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_out_may_hold_what_the_site_never_writes(inputs: dict[str, Path], tmp_path: Path) -> None:
    """A git checkout (its own images/ folder, CNAME, notes), or a folder holding only files
    the site would never write: the site goes in beside them and touches none of them;
    rebuilt, likewise."""
    checkout = tmp_path / "checkout"
    mine = {
        "README.md": "# 結果\n".encode(),
        "CNAME": b"results.example.org\n",
        ".nojekyll": b"",
        "images/logo.svg": b"<svg/>",
    }
    for name, data in mine.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_bytes(data)
    git(checkout, "init", "-q")
    git(checkout, "add", ".")
    git(checkout, "commit", "-q", "-m", "mine")
    plain = tmp_path / "plain"
    (plain / "notes").mkdir(parents=True)
    (plain / "notes" / "todo.txt").write_text("mine", "utf-8")
    (plain / "CNAME").write_text("results.example.org\n", "utf-8")
    for out in (checkout, plain):
        before = tree(out)
        for source in ("--judge", "--lctg"):
            done = run_cli("site", out, source, inputs[source.lstrip("-")])
            assert done.returncode == 0, done.stderr
            after = tree(out)
            assert {name: after.get(name) for name in before} == before
            assert 'data-leaderboard="' + source.lstrip("-") in (out / "index.html").read_text()
    assert git(checkout, "status", "--porcelain", "--untracked-files=no") == ""


def test_out_is_refused_where_the_site_would_mix_with_other_files(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """A file; an index.html the site did not write (in a git checkout too); a folder of the
    site's (runs/, assets/, ...) outside a git checkout: one line naming it, nothing touched."""
    cases = {"a file": ("", b"x"), "index": ("index.html", b"<html>mine</html>")}
    cases.update({folder: (f"{folder}/mine.txt", b"mine") for folder in ("runs", "assets")})
    for case, (name, data) in {**cases, "git index": ("index.html", b"mine")}.items():
        out = tmp_path / case
        if name:
            (out / name).parent.mkdir(parents=True)
        (out / name if name else out).write_bytes(data)
        if case.startswith("git"):
            git(out, "init", "-q")
        before = tree(out) if out.is_dir() else out.read_bytes()
        done = run_cli("site", out, "--lctg", inputs["lctg"])
        assert done.returncode == 1, case
        [line] = done.stderr.strip().splitlines()
        blocking = str(out / name.split("/")[0]) if name else str(out)
        assert line.startswith(f"error: {blocking}"), (case, line)
        assert (tree(out) if out.is_dir() else out.read_bytes()) == before, case
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*cases, "git index"])


def site_documents(out: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The run pages and the shared items (by id) of the scripts under OUT/runs."""
    pages, shared = [], {}
    for path in sorted((out / "runs").glob("*.js")):
        text = path.read_text(encoding="utf-8")
        name, _, data = text.partition("(")
        document = json.loads(data.rstrip().removesuffix(");"))
        if name == "window.siteSharedLoaded":
            shared[document["id"]] = document
        else:
            pages.append(document)
    return pages, shared


def task_of(page: dict[str, Any]) -> str:
    return str(page["settings"]["task_id"])


def test_every_layout_shows_every_image_from_the_run_record(
    tmp_path: Path, evalmm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nested question lists, lists of images, image_0… and image_1… columns, row-index ids:
    each item's images, in order, from the dataset its run recorded (no --mm-data)."""
    from PIL import Image

    monkeypatch.setenv("EVALMM_DIR", str(evalmm_dir))
    results, datasets = make_mm(tmp_path, tasks=(MM_TASK, *MM_LAYOUTS))
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", results)
    assert done.returncode == 0, done.stderr
    pages, shared = site_documents(out)
    checked = set()
    for page in pages:
        task = task_of(page)
        items = {item["id"]: item for item in shared[page["shared"]]["items"]}
        expected = mm_items(task, datasets[task])
        assert list(items) == [item.question_id for item in expected]
        for item in expected:
            files = items[item.question_id]["images"]
            sizes = []
            for name in files:
                with Image.open(out / name) as image:
                    sizes.append(image.size)
            assert sizes == item.image_sizes, (task, item.question_id)
        checked.add(task)
    assert checked == {MM_TASK, *MM_LAYOUTS}
    assert any(len(item.image_sizes) > 1 for item in mm_items("jmmmu", datasets["jmmmu"]))


def test_run_settings_show_how_each_run_was_made(inputs: dict[str, Path], tmp_path: Path) -> None:
    """pfgen-bench: every key of a run's config (generate's enable_thinking, strip_reasoning
    and --extra-body keys; the published runners' add_no_think and chat_template, a long one
    shortened); llm-jp-eval-mm: run_info.json's generation and judge settings, one a key."""
    pfgen = tmp_path / "pfgen"
    shutil.copytree(inputs["pfgen"], pfgen)
    result = pfgen / PFGEN_RUNS[0] / "result.json"
    data = json.loads(result.read_text(encoding="utf-8"))
    template = "{% for message in messages %}{{ message['content'] }}{% endfor %}" * 3
    extra = {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}
    data["config"].update(
        enable_thinking=False,
        strip_reasoning=True,
        add_no_think=True,
        chat_template=template,
        **extra,
    )
    result.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out"
    done = run_cli("site", out, "--pfgen", pfgen, "--mm", inputs["mm"])
    assert done.returncode == 0, done.stderr
    pages, _ = site_documents(out)
    [run] = [page for page in pages if page["bench"] == "pfgen" and PFGEN_RUNS[0] in page["title"]]
    settings = run["settings"]
    assert settings["enable_thinking"] is False and settings["strip_reasoning"] is True
    assert settings["add_no_think"] is True and settings["top_k"] == 20
    assert settings["chat_template_kwargs"] == '{"enable_thinking": false}'
    assert settings["chat_template"] == f"{template[:80]}… ({len(template)} characters)"
    index = (out / "index.html").read_text(encoding="utf-8")
    assert html.escape("enable_thinking: false\nstrip_reasoning: true") in index
    for page in (page for page in pages if page["bench"] == "mm"):
        settings = page["settings"]
        assert settings["strip_reasoning"] is MM_GENERATION["strip_reasoning"] is True
        assert settings["extra_body"] == json.dumps(MM_GENERATION["extra_body"])
        assert settings["max_tokens"] == 256 and settings["image_format"] == "original"
        assert settings["judge model"] == MM_JUDGE["model"]
        assert settings["judge max_tokens"] == json.dumps(MM_JUDGE["max_tokens"])
        assert "generation" not in settings and "judge" not in settings


def test_a_percent_encoded_model_folder_shows_its_model_without_a_manifest(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """`mm run --model /models/org/vlm-7b` writes `%2Fmodels%2Forg%2Fvlm-7b/`; a model name
    with `/` is a deeper folder: both are the models' names, from the folders alone."""
    results = tmp_path / "mm"
    shutil.copytree(inputs["mm"], results)
    encoded = results / MM_TASK / "%2Fmodels%2Forg%2Fvlm-7b"
    (results / MM_TASK / "org" / "vlm-small").rename(encoded)
    for manifest in results.rglob("manifest.json"):
        manifest.unlink()
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", results)
    assert done.returncode == 0, done.stderr
    pages, _ = site_documents(out)
    shown = {(page["settings"]["model_id"], page["settings"]["task_id"]) for page in pages}
    assert shown == {("/models/org/vlm-7b", MM_TASK), ("org/vlm-large", MM_TASK)}
    index = (out / "index.html").read_text(encoding="utf-8")
    assert '<td data-column="model">/models/org/vlm-7b</td>' in index


def test_an_image_that_cannot_be_read_leaves_out_that_image_alone(tmp_path: Path) -> None:
    """As `mm run` fails that item alone: the other items' images are shown, the page's note
    and a warning name the item and why."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    results, datasets = make_mm(tmp_path)
    [file] = datasets[MM_TASK].rglob("*.parquet")
    table = pq.read_table(file)
    images = table.column("image").to_pylist()
    missing = tmp_path / "missing.jpg"
    images[0] = {"bytes": None, "path": str(missing)}
    column = table.schema.get_field_index("image")
    pq.write_table(
        table.set_column(column, "image", pa.array(images, type=table["image"].type)), file
    )
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", results)
    assert done.returncode == 0, done.stderr  # every run is shown; the page says what it lacks
    # the first image is that of the first row's two questions
    reason = f"its file {missing} cannot be read (No such file or directory)"
    note = (
        f"{MM_TASK}: images left out: item 101, image 1: {reason} and 1 more (dataset "
        f"{datasets[MM_TASK]})"
    )
    assert done.stderr.splitlines() == [f"warning: {note}"]
    pages, shared = site_documents(out)
    assert all(page["notes"] == [note] for page in pages)
    [items] = [s["items"] for s in shared.values()]
    assert [(item["id"], len(item["images"])) for item in items] == [
        ("101", 0),
        ("102", 0),
        ("103", 1),
    ]


def test_a_moved_dataset_is_a_note_until_mm_data_names_it(tmp_path: Path) -> None:
    results, datasets = make_mm(tmp_path)
    moved = tmp_path / "elsewhere"
    shutil.move(datasets[MM_TASK], moved)
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", results)
    assert done.returncode == 0, done.stderr  # the site is built; the page and a warning say why
    [warning] = done.stderr.strip().splitlines()
    assert warning.startswith("warning: ") and str(datasets[MM_TASK]) in warning
    pages, shared = site_documents(out)
    assert all(str(datasets[MM_TASK]) in " ".join(page["notes"]) for page in pages)
    assert not any(item["images"] for s in shared.values() for item in s["items"])
    done = run_cli("site", out, "--mm", results, "--mm-data", f"{MM_TASK}={moved}")
    assert done.returncode == 0, done.stderr
    pages, shared = site_documents(out)
    assert all(not page["notes"] for page in pages)
    assert all(item["images"] for s in shared.values() for item in s["items"])


def shown_items(out: Path, model: str) -> tuple[dict[str, Any], list[Any]]:
    """The run page of `model` and its items: (question, image sizes, the models answering)."""
    from PIL import Image

    pages, shared = site_documents(out)
    [page] = [p for p in pages if p["settings"]["model_id"] == model]
    data = shared[page["shared"]]
    items = []
    for item in data["items"]:
        sizes = []
        for name in item["images"]:
            with Image.open(out / name) as image:
                sizes.append(image.size)
        answering = [label for label, a in zip(data["labels"], item["answers"], strict=True) if a]
        items.append((item["id"], dict(item["fields"])["question"], sizes, answering))
    return page, items


def test_runs_on_two_copies_of_a_dataset_are_each_shown_against_their_own(tmp_path: Path) -> None:
    """Two runs of one task, each on its own copy of the dataset (another question and other
    images under the same ids): each page shows its own copy's questions and images, and only
    the answers given to them. A copy that cannot be had (removed; --mm-data naming the other):
    that run's page and a warning say so, and it shows the questions it recorded, no images."""
    first, datasets = make_mm(tmp_path / "a", models=("org/vlm-a",))
    copy = tmp_path / "b" / "mm-datasets" / MM_TASK
    changed_copy(datasets[MM_TASK], copy)
    second, _ = make_mm(tmp_path / "b", models=("org/vlm-b",))
    own = {"org/vlm-a": datasets[MM_TASK], "org/vlm-b": copy}
    expected = {
        model: [(i.question_id, i.prompt, i.image_sizes, [model]) for i in mm_items(MM_TASK, data)]
        for model, data in own.items()
    }
    assert expected["org/vlm-a"][0][1] != expected["org/vlm-b"][0][1]
    assert expected["org/vlm-a"][0][2] != expected["org/vlm-b"][0][2]
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", first, "--mm", second)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for model in own:
        page, items = shown_items(out, model)
        assert items == expected[model] and page["notes"] == []
    recorded = [
        (qid, question, [], answering) for qid, question, _, answering in expected["org/vlm-b"]
    ]
    shutil.rmtree(copy)
    done = run_cli("site", out, "--mm", first, "--mm", second)
    assert done.returncode == 0, done.stderr
    [warning] = done.stderr.splitlines()
    assert str(copy) in warning and "cannot be read" in warning
    page, items = shown_items(out, "org/vlm-b")
    assert items == recorded and [warning.removeprefix("warning: ")] == page["notes"]
    assert shown_items(out, "org/vlm-a")[1] == expected["org/vlm-a"]
    done = run_cli(
        "site", out, "--mm", first, "--mm", second, "--mm-data", f"{MM_TASK}={own['org/vlm-a']}"
    )
    assert done.returncode == 0, done.stderr
    [warning] = done.stderr.splitlines()
    assert (
        str(second / MM_TASK / "org/vlm-b") in warning and "item 101: another question" in warning
    )
    page, items = shown_items(out, "org/vlm-b")
    assert (
        items == recorded and len(page["notes"]) == 1 and str(own["org/vlm-a"]) in page["notes"][0]
    )
    assert shown_items(out, "org/vlm-a")[1] == expected["org/vlm-a"]


def page_items(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["id"]: {**item, "fields": dict(item["fields"])} for item in page["items"]}


def test_run_pages_show_what_a_person_needs_to_judge_each_item(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Judge: the question, the reference, both answers by model, each verdict with what it
    means and the proposed one's probability, never "None", the item's score labelled. mm: a
    failed item's reason. LCTG: the prompt's text and what its check looks for, from LCTG
    Bench's files; without them, a note and a warning, and the prompt's id."""
    reason = "HTTP 400: the image is too large"
    results, _ = make_mm(tmp_path, failure=reason)
    out = tmp_path / "out"
    args = ["site", out, "--judge", inputs["judge"], "--lctg", inputs["lctg"], "--mm", results]
    done = run_cli(*args)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    pages, shared = site_documents(out)
    [judge] = [page for page in pages if page["bench"] == "judge"]
    items = page_items(judge)
    agreeing, disagreeing = items["p1"], items["p2"]
    assert agreeing["fields"]["question"] == JUDGE_QUESTION
    assert agreeing["fields"]["reference"] == "東京です。"
    assert agreeing["fields"]["answer A (model-x)"] == JUDGE_ANSWERS[0]
    assert agreeing["fields"]["answer B (model-y)"] == JUDGE_ANSWERS[1]
    assert agreeing["fields"]["verdict"].splitlines() == [
        "proposed: A, A is better (P 0.7500; B 0.1250, C 0.1250)",
        "BS1: A, A is better",
        "BS2: A, A is better",
    ]
    assert (agreeing["score_label"], round(agreeing["score"], 6)) == ("P(verdict)", 0.75)
    assert disagreeing["fields"]["answer A (model-x)"] == DISAGREEING_ANSWERS[0]
    assert "BS1: no verdict (the orders' letters disagree)" in disagreeing["fields"]["verdict"]
    assert "None" not in json.dumps(judge, ensure_ascii=False)
    [mm] = shared.values()
    [failed] = [item for item in mm["items"] if item["id"] == MM_FAILED_ID]
    small, large = (failed["answers"][mm["labels"].index(model)] for model in MM_MODELS)
    assert small["failure"] == reason and small["text"] == "" and large["failure"] is None
    assert {a["score_label"] for item in mm["items"] for a in item["answers"]} == {"rougel"}
    [lctg] = [page for page in pages if page["bench"] == "lctg"]
    prompt = lctg_prompts()[1]
    item = page_items(lctg)[lctg_item(prompt, "keyword")]
    assert item["fields"]["prompt"] == prompt["prompt_keyword"]
    assert item["fields"]["checked"] == f"contains 「{prompt['keyword_answer']}」"
    assert item["score_label"] == "checks passed" and lctg["notes"] == []
    empty = tmp_path / "no-lctg-data"
    empty.mkdir()
    done = run_cli(*args, "--lctg-data", empty)
    assert done.returncode == 0, done.stderr
    [warning] = done.stderr.splitlines()
    assert warning.startswith("warning: ad_text: prompt texts left out") and str(empty) in warning
    [lctg] = [page for page in site_documents(out)[0] if page["bench"] == "lctg"]
    assert lctg["notes"] == [warning.removeprefix("warning: ")]
    item = page_items(lctg)[lctg_item(prompt, "keyword")]
    assert item["fields"]["prompt"] == str(prompt["prompt_id"])


def test_a_rebuild_keeps_what_the_site_did_not_write(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert run_cli("site", out, "--judge", inputs["judge"]).returncode == 0
    mine = {
        ".git/config": b"[core]\n\tbare = false\n",
        ".git/objects/ab/cdef": b"\x00\x01binary",
        "CNAME": b"results.example.org\n",
        ".nojekyll": b"",
        "notes.md": "# メモ\n".encode(),
        "data/table.csv": b"a,b\n1,2\n",
        "runs/mine.txt": b"kept among the site's files\n",
    }
    for name, data in mine.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    judge_pages = {p.name for p in (out / "runs").glob("judge-*.js")}
    assert judge_pages
    done = run_cli("site", out, "--lctg", inputs["lctg"])
    assert done.returncode == 0, done.stderr
    for name, data in mine.items():
        assert (out / name).read_bytes() == data, name
    assert not {p.name for p in (out / "runs").glob("*.js")} & judge_pages
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-leaderboard="lctg"' in index and 'data-leaderboard="judge"' not in index
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_symbolic_link_out_is_followed_and_kept(inputs: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "published"
    link = tmp_path / "site"
    link.symlink_to(target, target_is_directory=True)
    for source in ("--judge", "--lctg"):
        done = run_cli("site", link, source, inputs[source.lstrip("-")])
        assert done.returncode == 0, done.stderr
        assert link.is_symlink() and link.readlink() == target
    index = (target / "index.html").read_text(encoding="utf-8")
    assert 'data-leaderboard="lctg"' in index and 'data-leaderboard="judge"' not in index
    assert sorted(p.name for p in tmp_path.iterdir()) == ["published", "site"]


def test_a_truncated_result_is_named_and_the_figures_drawn_from_the_others(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    tree = tmp_path / "pfgen"
    shutil.copytree(inputs["pfgen"], tree)
    broken = tree / PFGEN_RUNS[0] / "result.json"
    broken.write_bytes(broken.read_bytes()[:1000])
    out = tmp_path / "out"
    done = run_cli("site", out, "--pfgen", tree)
    assert done.returncode == 1
    [warning] = done.stderr.strip().splitlines()
    assert str(broken) in warning and "run left out" in warning
    index = (out / "index.html").read_text(encoding="utf-8")
    # Fig. 1-3 and score against length (Fig. 4-6 need the stability runs: left out)
    assert index.count("<figure>") == 4
    assert "are left out" not in index
    assert f"Left out: {broken}" in index
    assert ".site-" not in done.stderr + done.stdout + index  # no temporary folder named
    assert index.count('data-run="result/') == len(PFGEN_RUNS) - 1


def test_an_analysis_line_not_as_written_leaves_its_run_out_with_one_line(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    tree = tmp_path / "lctg"
    shutil.copytree(inputs["lctg"], tree)
    [analysis] = tree.rglob("lctg-ad_text-analysis.jsonl")
    lines = analysis.read_text("utf-8").splitlines()
    record = json.loads(lines[4])
    record["iteration"] = "2"
    lines[4] = json.dumps(record, ensure_ascii=False)
    analysis.write_text("\n".join(lines) + "\n", "utf-8")
    out = tmp_path / "out"
    done = run_cli("site", out, "--lctg", tree)
    assert done.returncode == 1
    [warning] = done.stderr.strip().splitlines()
    assert f'{analysis}:5: field "iteration": expected an integer, got a string' in warning
    assert "run left out" in warning and "Traceback" not in done.stderr


def test_an_items_line_not_as_written_leaves_its_judge_run_out_with_one_line(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    tree = tmp_path / "judge"
    shutil.copytree(inputs["judge"], tree)
    items = tree / "pairwise" / "items.jsonl"
    written = items.read_bytes()
    assert written.count(b'"alternatives":20') == 2 * len(written.splitlines())
    items.write_bytes(written.replace(b'"alternatives":20', b'"alternatives":"20"', 2))
    done = run_cli("site", tmp_path / "out", "--judge", tree)
    assert (done.returncode, "Traceback" in done.stderr) == (1, False)
    [warning] = done.stderr.strip().splitlines()
    problem = f'{items}:1: order 1: field "alternatives": expected an integer, got a string'
    assert problem in warning and "run left out" in warning
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert 'data-leaderboard="judge"' not in index and 'data-leaderboard="judge-rank"' in index


def test_a_judge_folder_without_results_is_one_warning_and_no_row(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    judge = tmp_path / "judge-input"
    judge.mkdir()
    shutil.copy(inputs["judge"] / "pairwise" / "items.jsonl", judge / "items.jsonl")
    out = tmp_path / "out"
    done = run_cli("site", out, "--judge", judge, "--lctg", inputs["lctg"])
    assert done.returncode == 1
    [warning] = done.stderr.strip().splitlines()
    assert warning.startswith(f"error: {judge}: nothing recognised")
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-leaderboard="judge"' not in index and 'data-run="."' not in index


def whole_site(out: Path) -> bool:
    """Every file index.html names (its assets and every run page's script) is there."""
    index = (out / "index.html").read_text(encoding="utf-8")
    [scripts] = re.findall(r'data-scripts="([^"]*)"', index)
    named = list(json.loads(html.unescape(scripts)).values())
    named += re.findall(r'(?:href|src)="(assets/[^"]+)"', index)
    return all((out / name).is_file() for name in named)


@pytest.mark.slow
def test_a_killed_rebuild_leaves_a_whole_site(inputs: dict[str, Path], tmp_path: Path) -> None:
    """A rebuild killed (SIGKILL) at moments spread over its run: OUT is a whole site each
    time, the old one or the new one, and the next rebuild finishes."""
    out = tmp_path / "site"
    assert run_cli("site", out, "--judge", inputs["judge"]).returncode == 0
    command = [sys.executable, "-m", "pfgen_fast", "site", str(out), "--lctg", str(inputs["lctg"])]
    for delay in (0.2, 0.5, 0.8, 1.0, 1.2, 1.4, 1.7, 2.0):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert whole_site(out), delay
    assert run_cli("site", out, "--lctg", inputs["lctg"]).returncode == 0
    assert whole_site(out)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-leaderboard="lctg"' in index and 'data-leaderboard="judge"' not in index
    written = set(json.loads((out / ".pfgen_fast-site.json").read_text())["files"])
    assert written == {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
