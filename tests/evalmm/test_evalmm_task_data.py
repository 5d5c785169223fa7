"""Reading the tasks' datasets: local copies in the Hub layout (with and without YAML configs),
JIC-VQA's prepared file, an unreachable Hub, bad folders, undecodable images, `mm tasks`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cli_runner import run_cli
from pfgen_fast.common.errors import DataError, PfgenError
from pfgen_fast.evalmm import tasks
from pfgen_fast.testing import serve
from published import evalmm_dir

pytest.importorskip("datasets")
import mm_datasets  # noqa: E402


def test_task_list_and_info() -> None:
    names = tasks.task_names()
    assert len(names) == 24 and "mnist" not in names
    info = tasks.task_info("ja-vg-vqa-500")
    assert info.dataset == "SakanaAI/JA-VG-VQA-500"
    assert info.revision is not None and len(info.revision) == 40
    assert info.metrics == ("llm-as-a-judge", "rougel")
    assert info.cluster == "視覚中心"
    assert tasks.task_info("mmmu").cluster == "英語"
    with pytest.raises(PfgenError, match=r"unknown task 'nope' \(one of ja-vg-vqa-500, "):
        tasks.task_info("nope")


def test_every_tasks_default_metrics_are_registered() -> None:
    """What `mm run` and `mm evaluate` score when no metric is named is in the registry."""
    from pfgen_fast.evalmm.metrics.scorers import SCORERS

    assert len({task.name for task in tasks.TASKS}) == len(tasks.TASKS)
    for task in tasks.TASKS:
        assert task.metrics, task.name
        missing = [name for name in task.metrics if name not in SCORERS]
        assert not missing, f"{task.name}: {missing} not registered"


def test_mm_tasks_json_lists_every_task() -> None:
    result = run_cli("mm", "tasks", "--json")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert [entry["name"] for entry in listed] == tasks.task_names()
    keys = {"name", "dataset", "revision", "split", "metrics", "cluster", "display_name"}
    assert all(keys <= set(entry) for entry in listed)
    assert {entry["cluster"] for entry in listed} == {
        "視覚中心",
        "言語・知識中心",
        "英語",
        "その他",
    }
    table = run_cli("mm", "tasks")
    assert table.returncode == 0 and "unpinned" in table.stdout and "JWTxt-Receipt" in table.stdout
    assert "Hub copy: config JA_JP; split test" in table.stdout
    assert "the prepared jic_vqa.parquet (or its folder)" in table.stdout


def test_mm_tasks_says_what_data_holds_and_how_to_make_it() -> None:
    listed = {
        entry["name"]: entry["data"]
        for entry in json.loads(run_cli("mm", "tasks", "--json").stdout)
    }
    assert set(listed) == set(tasks.task_names())
    jic = listed.pop("jic-vqa")
    assert (jic["kind"], jic["configs"]) == ("prepared-parquet", [])
    assert "scripts/prepare_jic_vqa.py" in jic["make"] and "dataset/jic_vqa.parquet" in jic["make"]
    assert {data["kind"] for data in listed.values()} == {"hub-copy"}
    assert listed["mmmu"]["configs"] == listed["jmmmu"]["configs"] == "all"
    assert listed["jawildtext-receipt-kie"]["configs"] == ["receipt_kie"]
    assert listed["blink"]["split"] == "val" and len(listed["blink"]["configs"]) == 14
    revision = tasks.task_info("ja-vg-vqa-500").revision
    assert listed["ja-vg-vqa-500"] == {
        "kind": "hub-copy",
        "configs": ["default"],
        "split": "test",
        "make": "huggingface-cli download --repo-type dataset SakanaAI/JA-VG-VQA-500 "
        f"--revision {revision} --local-dir DIR",
    }


@pytest.mark.parametrize("name", sorted(mm_datasets.WRITERS))
def test_the_synthetic_copies_hold_what_mm_tasks_says(name: str, tmp_path: Path) -> None:
    """Each listed config with its split and files (the check `mm run` makes first)."""
    tasks.check_source(name, mm_datasets.WRITERS[name](tmp_path / "dataset"))


def test_mm_run_without_jic_vqa_data_says_what_it_needs_before_any_request(
    tmp_path: Path,
) -> None:
    first = mm_datasets.ja_vlm_bench_in_the_wild(tmp_path / "first")
    with serve() as vlm:
        result = run_cli(
            "mm", "run", "--task", "ja-vlm-bench-in-the-wild", "--task", "jic-vqa", "--model",
            "m", "--base-url", vlm.base_url, "--data", f"ja-vlm-bench-in-the-wild={first}",
            "--inference-only", "--out", tmp_path / "out", cwd=tmp_path,
        )  # fmt: skip
        missing_config = run_cli(
            "mm", "run", "--task", "mmmlu", "--model", "m", "--base-url", vlm.base_url,
            "--data", first, "--inference-only", "--out", tmp_path / "out", cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 1 and vlm.received == []
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: jic-vqa: dataset/jic_vqa.parquet not found (no --data jic-vqa=PATH given); "
        "--data jic-vqa=PATH takes JIC-VQA's prepared parquet file (or its folder): to make "
        "it, run llm-jp-eval-mm's scripts/prepare_jic_vqa.py in a folder"
    )
    assert not (tmp_path / "out").exists()
    assert missing_config.returncode == 1 and "no config 'JA_JP'" in missing_config.stderr


def test_max_items_and_images_kept_encoded(tmp_path: Path) -> None:
    folder = mm_datasets.ja_vlm_bench_in_the_wild(tmp_path / "dataset")
    items = list(tasks.iter_items("ja-vlm-bench-in-the-wild", folder, max_items=2))
    assert [item.question_id for item in items] == ["0", "1"]
    data, image_format, turned = items[0].images[0].stored()
    assert image_format == "JPEG" and data.startswith(b"\xff\xd8") and turned
    assert items[1].images[0].stored()[1:] == ("PNG", False)
    # EXIF orientation 6: stored 24x16, given to the model turned to 16x24
    assert items[0].images[0].open().size == (16, 24)


def test_base64_images_give_their_decoded_bytes(tmp_path: Path) -> None:
    folder = mm_datasets.cc_ocr(tmp_path / "dataset")
    items = list(tasks.iter_items("cc-ocr", folder))
    assert [item.question_id for item in items] == ["0", "1"]
    assert [item.input_text for item in items] == ["ocr: 画像の文字を読んで", "ocr: 文字を全部"]
    assert items[1].images[0].stored()[1] == "JPEG"


def test_folder_without_yaml_configs(tmp_path: Path) -> None:
    """Splits from file names, as `datasets` infers them without a README."""
    folder = tmp_path / "dataset"
    columns = {
        "question": ["一つ目", "二つ目"],
        "image": [mm_datasets.make_image(1), mm_datasets.make_image(2)],
        "answer": ["a", "b"],
    }
    mm_datasets.write_table(folder / "data" / "test-00000-of-00001.parquet", columns, ("image",))
    mm_datasets.write_table(
        folder / "data" / "train-00000-of-00001.parquet",
        {k: v[:1] for k, v in columns.items()},
        ("image",),
    )
    items = list(tasks.iter_items("ja-vlm-bench-in-the-wild", folder))
    assert [item.input_text for item in items] == ["一つ目", "二つ目"]
    # configs given by data_dir only
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_dir: data\n---\n", encoding="utf-8"
    )
    items = list(tasks.iter_items("ja-vlm-bench-in-the-wild", folder))
    assert [item.input_text for item in items] == ["一つ目", "二つ目"]
    # the Hub's parquet conversion layout: <config>/<split>/0000.parquet
    converted = tmp_path / "converted"
    mm_datasets.write_table(converted / "default" / "test" / "0000.parquet", columns, ("image",))
    items = list(tasks.iter_items("ja-vlm-bench-in-the-wild", converted))
    assert [item.input_text for item in items] == ["一つ目", "二つ目"]


def test_undecodable_image_fails_only_that_item(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    columns = {
        "question": ["ok", "broken"],
        "image": [mm_datasets.make_image(1), b"not an image"],
        "answer": ["a", "b"],
    }
    mm_datasets.write_repo(folder, {"default": {"test": columns}}, images=("image",))
    good, broken = tasks.iter_items("ja-vlm-bench-in-the-wild", folder)
    assert good.images[0].open().size == (24, 16)
    assert broken.images[0].stored() == (b"not an image", None, False)
    with pytest.raises(DataError, match=r"not an image Pillow can read \(12 bytes\)"):
        broken.images[0].open()


def test_missing_split_config_or_column_named(tmp_path: Path) -> None:
    folder = mm_datasets.mmmlu(tmp_path / "mmmlu")
    readme = folder / "README.md"
    with pytest.raises(DataError, match=r"README.md: no config 'multi_lan_ocr' \(configs: default"):
        list(tasks.iter_items("cc-ocr", folder))
    with pytest.raises(
        DataError, match=r"README.md: config 'default' has no split 'val2014' \(test\)"
    ):
        list(tasks.iter_items("okvqa", folder))
    with pytest.raises(DataError) as raised:
        list(tasks.iter_items("ja-vlm-bench-in-the-wild", folder))
    message = str(raised.value)
    assert message.startswith(f"{folder}/data/test-00000-of-00001.parquet: no column 'question'")
    assert "\n" not in message
    assert readme.is_file()
    with pytest.raises(DataError, match="not a folder"):
        list(tasks.iter_items("textvqa", tmp_path / "absent"))


def test_jic_vqa_needs_its_prepared_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match=r"^jic-vqa: dataset/jic_vqa.parquet not found \(no "):
        list(tasks.iter_items("jic-vqa"))
    mm_datasets.jic_vqa(tmp_path / "dataset")
    assert [item.question_id for item in tasks.iter_items("jic-vqa")] == ["1001", "1068", "1002"]
    file = tmp_path / "dataset" / "jic_vqa.parquet"
    assert len(list(tasks.iter_items("jic-vqa", file))) == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "dataset", "pinned"),
    [("textvqa", "lmms-lab/textvqa", True), ("jdocqa", "speed/JDocQA", False)],
)
def test_unreachable_hub_names_both_ways(
    tmp_path: Path, task: str, dataset: str, pinned: bool
) -> None:
    """No network (the Hub offline, an empty cache): one line naming --data and the download;
    a dataset with no pinned revision is said to be unpinned."""
    script = textwrap.dedent(
        f"""
        from pfgen_fast.common.errors import PfgenError
        from pfgen_fast.evalmm import tasks
        try:
            next(tasks.iter_items({task!r}))
        except PfgenError as error:
            print(error)
        """
    )
    env = {
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets"),
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout + result.stderr
    assert lines[0].startswith(f"{task}: cannot load {dataset} from the Hub (")
    assert f"--data {task}=DIR" in lines[0]
    assert f"huggingface-cli download --repo-type dataset {dataset} --local-dir DIR" in lines[0]
    assert (f"{dataset} is unpinned" in result.stderr) is not pinned


def test_without_the_datasets_package_the_hub_is_not_asked(tmp_path: Path) -> None:
    """A Hub task where `datasets` cannot be imported: one line naming the extra and --data,
    and no request to the Hub (a listening socket stands for it)."""
    script = textwrap.dedent(
        """
        import sys
        class NoDatasets:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("datasets", "huggingface_hub"):
                    raise ModuleNotFoundError(name)
                return None
        sys.meta_path.insert(0, NoDatasets())
        from pfgen_fast.common.errors import PfgenError
        from pfgen_fast.evalmm import tasks
        try:
            next(tasks.iter_items("textvqa"))
        except PfgenError as error:
            print(error)
        """
    )
    with socket.socket() as hub:
        hub.bind(("127.0.0.1", 0))
        hub.listen()
        hub.setblocking(False)
        endpoint = f"http://127.0.0.1:{hub.getsockname()[1]}"
        result = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env={**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf")},
            timeout=120,
        )
        with pytest.raises(BlockingIOError):
            hub.accept()
    assert result.stdout == (
        "textvqa: reading lmms-lab/textvqa from the Hub needs the datasets package "
        "(pip install 'pfgen_fast[mm]'), or pass a local copy with --data textvqa=DIR "
        "(huggingface-cli download --repo-type dataset lmms-lab/textvqa --local-dir DIR)\n"
    ), result.stderr


@pytest.mark.parametrize("name", ["jmmmu", "mecha-ja", "blink", "cc-ocr", "jawildtext-receipt-kie"])
def test_hub_path_reads_as_the_local_path(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `datasets` path (a local folder given as the dataset id: no network) gives the same
    items as reading the folder's parquet files directly."""
    import datasets

    from pfgen_fast.evalmm.tasks.items import Options
    from pfgen_fast.evalmm.tasks.rows import HubSource

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    folder = mm_datasets.WRITERS[name](tmp_path / "dataset")
    options = Options(evalmm_dir=evalmm_dir())
    through_hub = list(tasks.task_row(name).build(HubSource(name, str(folder), None), options))
    assert through_hub == list(tasks.iter_items(name, folder, evalmm_dir=evalmm_dir()))
