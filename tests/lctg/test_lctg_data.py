"""`lctg data fetch` / `verify` with a real archive served from a file:// URL (built from the
published files, laid out as GitHub's), the manifest against the published files, the prompt
sets as the spec describes them, and the benchmark's prompt functions as we call them."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lctg_support import benchmark_prompt_module, benchmark_system_prompt, lctg_dir

from cli_runner import run_cli
from pfgen_fast.common.errors import DataError
from pfgen_fast.lctg.data import PUBLISHED, TASKS, load_prompts
from pfgen_fast.lctg.templates import load_templates

REF = PUBLISHED.load_manifest()["ref"]


def archive(tmp_path: Path, change: str | None = None) -> str:
    """A .tar.gz of the published files under `LCTG-Bench-<sha>/`, with a file that is not
    in the manifest; `change` names a file whose content is altered. Its file:// URL."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(lctg_dir().rglob("*")):
            if not path.is_file():
                continue
            relative = path.relative_to(lctg_dir()).as_posix()
            data = path.read_bytes() + (b"\n" if relative == change else b"")
            info = tarfile.TarInfo(f"LCTG-Bench-{REF}/{relative}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    target = tmp_path / f"{REF}.tar.gz"
    target.write_bytes(buffer.getvalue())
    return target.as_uri()


def test_the_manifest_matches_the_published_files() -> None:
    assert PUBLISHED.verify(lctg_dir()) == []
    assert REF.startswith("c4736cb") and len(REF) == 40


def test_fetch_keeps_the_manifests_files_verified(tmp_path: Path) -> None:
    destination = tmp_path / "data"
    result = run_cli(
        "lctg", "data", "fetch", "--url", archive(tmp_path), "--dest", str(destination)
    )
    assert result.returncode == 0, result.stderr
    kept = sorted(p.relative_to(destination).as_posix() for p in destination.rglob("*.*"))
    assert kept == sorted(PUBLISHED.load_manifest()["files"])
    verified = run_cli("lctg", "data", "verify", str(destination))
    assert verified.returncode == 0 and "every file matches" in verified.stdout


def test_a_changed_file_is_refused_and_nothing_replaced(tmp_path: Path) -> None:
    destination = tmp_path / "data"
    PUBLISHED.fetch(archive(tmp_path), destination)
    bad = tmp_path / "bad"
    bad.mkdir()
    with pytest.raises(DataError, match=r"prompt\.py: SHA-256"):
        PUBLISHED.fetch(archive(bad, change="scripts/utils/prompt.py"), destination)
    assert PUBLISHED.verify(destination) == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".data-")]


def test_the_default_location_is_the_user_cache(tmp_path: Path) -> None:
    env = {"LCTG_BENCH_DIR": ""}
    result = run_cli("lctg", "data", "fetch", "--url", archive(tmp_path), env=env)
    assert result.returncode == 0, result.stderr
    assert "lctg/LCTG-Bench" in result.stdout
    assert run_cli("lctg", "data", "verify", env=env).returncode == 0


def test_missing_data_gives_the_fetch_hint(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere")
    result = run_cli("lctg", "data", "verify", missing)
    assert result.returncode == 1
    assert result.stderr.startswith("error: LCTG Bench data not found")
    assert "lctg data fetch" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_modified_checkout_is_refused_at_load(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(lctg_dir(), copy)
    with (copy / "datasets" / "summary" / "prompts_v1.jsonl").open("a") as handle:
        handle.write("\n")
    with pytest.raises(DataError, match="lctg data fetch"):
        load_prompts(copy, "summary")
    problems = PUBLISHED.verify(copy)
    assert len(problems) == 1 and "summary/prompts_v1.jsonl: SHA-256" in problems[0]


def test_prompt_sets_as_the_spec_describes_them() -> None:
    sizes = {task: len(load_prompts(lctg_dir(), task)) for task in TASKS}
    assert sizes == {"summary": 120, "ad_text": 150, "pros_and_cons": 150}
    summary = load_prompts(lctg_dir(), "summary")
    assert summary[1717].char_range == (120, 120)  # lo == hi
    assert summary[133].char_range == (50, 60)  # the sentence says 50-50; the answer wins
    ad_text = load_prompts(lctg_dir(), "ad_text")
    assert ad_text[100312].char_range == (40, 45)
    for rows in (summary, ad_text):
        for row in rows.values():
            assert row.keyword in row.prompts["keyword"]
            assert row.prohibited_word in row.prompts["prohibited_word"]


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_templates_are_the_benchmarks_functions(task: str) -> None:
    templates = load_templates(lctg_dir(), task)
    assert templates.system_prompt == benchmark_system_prompt()
    module = benchmark_prompt_module()

    @settings(max_examples=25, deadline=None)
    @given(text=st.text(max_size=30), base=st.text(max_size=30))
    def same(text: str, base: str) -> None:
        assert templates.remover(text) == module.get_header_footer_remover_prompt(task, text)
        assert templates.judge(text, base) == module.get_quality_check_prompt(task, text, base)
        retry = module.get_quality_check_prompt_bool(task, text, base)
        assert templates.judge_retry(text, base) == retry

    same()
