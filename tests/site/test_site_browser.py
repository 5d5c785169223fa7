"""The site in a real headless Chromium with the network cut (a proxy that refuses): rows,
sorting both ways, filter and column chooser, run pages with known answers, images that load,
a task's shared items or a run that fail to load, every request a file under OUT, no console
error, and the CSV download equal to the table."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_browser import chromium, missing, requested_urls
from site_inputs import (
    CHANGED_QUESTION,
    JUDGE_ANSWERS,
    JUDGE_QUESTION,
    LCTG_ANSWER,
    MM_ANSWER,
    MM_ANSWER_ID,
    MM_FAILED_ID,
    MM_LAYOUTS,
    MM_REASONING,
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
)

from cli_runner import run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing() is not None, reason=str(missing())),
]
MM_FAILURE = "HTTP 400: the image is too large"  # why the small model failed MM_FAILED_ID


class Site:
    def __init__(self, out: Path, downloads: Path, driver: Any) -> None:
        self.out = out
        self.downloads = downloads
        self.driver = driver
        self.urls: list[str] = []
        self.console: list[dict[str, Any]] = []

    def css(self, selector: str) -> Any:
        return self.driver.find_element("css selector", selector)

    def all(self, selector: str) -> list[Any]:
        return self.driver.find_elements("css selector", selector)

    def wait(self, script: str, timeout: float = 10) -> Any:
        """Polls a JavaScript expression until it is truthy (the page renders asynchronously)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.driver.execute_script(f"return ({script});")
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for: {script}")

    def open_index(self, hash_part: str = "") -> None:
        # A fresh page, unscrolled: a change of the hash alone would keep the last test's
        # filters, and a reload its scroll.
        self.driver.get("about:blank")
        self.driver.get((self.out / "index.html").as_uri() + hash_part)
        self.wait("document.readyState === 'complete'")

    def scroll_y(self) -> float:
        return float(self.driver.execute_script("return window.scrollY;"))

    def scroll_to(self, y: float) -> None:
        self.driver.execute_script("window.scrollTo(0, arguments[0]);", y)

    def collect_logs(self) -> None:
        self.urls += requested_urls(self.driver)
        self.console += self.driver.get_log("browser")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("site")
    results, _ = make_mm(root, failure=MM_FAILURE)
    out = root / "out"
    done = run_cli(
        "site",
        out,
        "--pfgen",
        make_pfgen(root, bench_dir()),
        "--lctg",
        make_lctg(root),
        "--mm",
        results,
        "--judge",
        make_judge(root),
    )
    assert done.returncode == 0, done.stderr
    downloads = root / "downloads"
    downloads.mkdir()
    with chromium(downloads) as driver:
        yield Site(out, downloads, driver)


def column_values(site: Site, board: str, column: str) -> list[Any]:
    return site.driver.execute_script(
        """const [board, column] = arguments;
        return Array.from(document.querySelectorAll(
            `table[data-leaderboard="${board}"] tbody tr:not([hidden])`)).map((row) => {
            const cell = row.querySelector(`td[data-column="${column}"]`);
            return cell.dataset.value !== undefined ? Number(cell.dataset.value) : cell.textContent;
        });""",
        board,
        column,
    )


def test_rows_and_tabs(site: Site) -> None:
    site.open_index()
    runs = [
        r.get_attribute("data-run") for r in site.all('[data-leaderboard="pfgen"] tr[data-run]')
    ]
    assert sorted(runs) == sorted(PFGEN_RUNS)
    assert site.css('section[data-bench="pfgen"]').is_displayed()
    site.css('[data-show="mm"]').click()
    site.wait("!document.querySelector('section[data-bench=\"pfgen\"]').offsetParent")
    rows = site.all('[data-leaderboard="mm"] tr[data-run]')
    assert [r.is_displayed() for r in rows] == [True, True]
    assert {r.get_attribute("data-run") for r in rows} == {
        f"{MM_TASK}/org/vlm-small",
        f"{MM_TASK}/org/vlm-large",
    }
    site.collect_logs()


def test_sorting_both_ways(site: Site) -> None:
    site.open_index("#pfgen")
    for column in ("score", "model", "trials"):
        header = site.css(f'[data-leaderboard="pfgen"] th[data-column="{column}"]')
        header.click()
        values = column_values(site, "pfgen", column)
        key = (lambda v: v.lower()) if column == "model" else (lambda v: v)
        assert (
            values == sorted(values, key=key) and header.get_attribute("aria-sort") == "ascending"
        )
        header.click()
        values = column_values(site, "pfgen", column)
        assert values == sorted(values, key=key, reverse=True)
        assert header.get_attribute("aria-sort") == "descending"
    site.collect_logs()


def test_filter_and_column_chooser(site: Site) -> None:
    site.open_index("#pfgen")
    site.css('[data-board="pfgen"] .filter').send_keys("qwen")
    visible = [r for r in site.all('[data-leaderboard="pfgen"] tr[data-run]') if r.is_displayed()]
    assert [r.get_attribute("data-run") for r in visible] == ["result/Qwen/Qwen-Max/0944f44"]
    site.css('[data-board="pfgen"] .chooser summary').click()
    site.css('[data-board="pfgen"] [data-toggle="fluency"]').click()
    assert not site.css('[data-leaderboard="pfgen"] th[data-column="fluency"]').is_displayed()
    site.collect_logs()


def test_a_pfgen_run_shows_its_answers_with_scores(site: Site) -> None:
    site.open_index("#pfgen")
    run = "result/sbintuitions/sarashina1-13b/9c5badf"
    site.css(f'tr[data-run="{run}"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 50")
    result = json.loads((bench_dir() / run / "result.json").read_text(encoding="utf-8"))
    sample = result["questions"]["Q01"]["samples"][0]
    item = site.css('[data-item="Q01"]')
    assert sample["answer"] in item.text
    assert "F " in item.text and "T " in item.text and "H " in item.text
    site.collect_logs()


def test_back_from_a_run_the_leaderboard_is_scrolled_as_it_was(site: Site) -> None:
    """By the run page's link and by the browser's Back; another tab starts at the top."""
    site.open_index("#pfgen")
    run = "result/sbintuitions/sarashina1-13b/9c5badf"
    site.scroll_to(100)
    site.css(f'tr[data-run="{run}"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 50")
    assert site.scroll_y() == 0
    site.scroll_to(2000)
    assert site.scroll_y() > 1000
    site.scroll_to(0)
    site.css("#run .back").click()
    site.wait("!document.querySelector('#boards').hidden")
    assert site.scroll_y() == 100
    site.css(f'tr[data-run="{run}"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 50")
    site.scroll_to(2000)
    site.driver.back()
    site.wait("!document.querySelector('#boards').hidden")
    assert site.scroll_y() == 100
    site.css('[data-show="mm"]').click()
    site.wait("!document.querySelector('section[data-bench=\"mm\"]').hidden")
    assert site.scroll_y() == 0
    site.collect_logs()


def test_an_mm_run_shows_images_and_every_models_answer(site: Site) -> None:
    site.open_index("#mm")
    site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 3")
    item = site.css(f'[data-item="{MM_ANSWER_ID}"]')
    answers = item.find_elements("css selector", "[data-answer]")
    assert [a.get_attribute("data-answer") for a in answers] == ["org/vlm-small", "org/vlm-large"]
    assert MM_ANSWER in answers[1].text
    # the reasoning the run recorded, folded under its answer
    folded = answers[1].find_element("css selector", "details.reasoning")
    assert folded.get_attribute("open") is None and MM_REASONING not in answers[1].text
    folded.find_element("css selector", "summary").click()
    assert MM_REASONING in answers[1].text
    all_loaded(site, 3)
    widths = site.driver.execute_script(
        "return Array.from(document.querySelectorAll('img.thumb')).map((i) => i.naturalWidth)"
    )
    # two questions of one photo (24×16, its EXIF orientation turning it to 16×24), one of
    # another image
    assert sorted(widths) == [16, 16, 20]
    item.find_element("css selector", "img.thumb").click()
    assert site.css("#lightbox").is_displayed()
    site.wait("document.querySelector('#lightbox img').naturalWidth === 16")
    site.css("#lightbox").click()
    site.collect_logs()


def test_an_mm_run_page_shows_its_generation_and_judge_settings(site: Site) -> None:
    site.open_index("#mm")
    site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 3")
    pairs = site.driver.execute_script(
        "return Array.from(document.querySelectorAll('#run dl.settings > div')).map("
        "(d) => [d.querySelector('dt').textContent, d.querySelector('dd').textContent])"
    )
    shown = dict(pairs)
    assert shown["model_id"] == "org/vlm-small" and shown["max_tokens"] == "256"
    assert shown["strip_reasoning"] == "true" and shown["extra_body"] == '{"top_k": 20}'
    assert shown["judge model"] == "judge-1"
    assert shown["judge max_tokens"] == '{"llm-as-a-judge": 77}'
    site.collect_logs()


def all_loaded(site: Site, count: int) -> None:
    """Every thumbnail scrolled into view (they load lazily), then loaded."""
    site.driver.execute_script(
        "document.querySelectorAll('img.thumb').forEach((i) => i.scrollIntoView())"
    )
    site.wait(
        f"document.querySelectorAll('img.thumb').length === {count} && "
        "Array.from(document.querySelectorAll('img.thumb')).every("
        "(img) => { img.scrollIntoView(); return img.complete && img.naturalWidth > 0; })"
    )


def test_another_model_of_the_task_shows_its_answer_first(site: Site) -> None:
    site.open_index("#mm")
    site.collect_logs()
    start = len(site.urls)
    small = site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"] [data-drill]')
    large = site.css(f'tr[data-run="{MM_TASK}/org/vlm-large"] [data-drill]')
    pages = [small.get_attribute("data-drill"), large.get_attribute("data-drill")]
    small.click()
    site.wait("document.querySelectorAll('[data-answer]').length === 6")
    site.collect_logs()
    middle = len(site.urls)
    site.css("#run a.back").click()
    large.click()
    site.wait(
        "document.querySelectorAll('[data-item]').length === 3 && document.querySelector("
        f"'[data-item=\"{MM_ANSWER_ID}\"] [data-answer]').dataset.answer === 'org/vlm-large'"
    )
    answers = site.all(f'[data-item="{MM_ANSWER_ID}"] [data-answer]')
    assert [a.get_attribute("data-answer") for a in answers] == ["org/vlm-large", "org/vlm-small"]
    assert MM_ANSWER in answers[0].text
    # the item's score is the opened run's (its rougel 1.0, the small model's 0.25)
    assert site.css(f'[data-item="{MM_ANSWER_ID}"] .score').text == "rougel 1"
    site.collect_logs()
    # the first page loads the task's shared items with it; the second loads only itself
    first = [u.rsplit("/", 1)[1].split(".")[0] for u in site.urls[start:middle] if "/runs/" in u]
    second = [u.rsplit("/", 1)[1].split(".")[0] for u in site.urls[middle:] if "/runs/" in u]
    assert len(first) == 2 and first[0] == pages[0]
    assert second == [pages[1]]


def test_missing_shared_items_show_the_note_at_every_opening(tmp_path: Path) -> None:
    """The task's shared script is missing: each opening of a run shows the missing note (not
    "loading…" for ever); once the script is back, the next opening shows the items."""
    results, _ = make_mm(tmp_path)
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", results)
    assert done.returncode == 0, done.stderr
    [script] = (out / "runs").glob("mm-task-*.js")
    kept = script.read_bytes()
    script.unlink()
    missing_note = json.dumps("this run's data is missing")
    with chromium() as driver:
        site = Site(out, tmp_path, driver)
        site.open_index("#mm")
        drill = site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"] [data-drill]')
        for _ in range(3):
            drill.click()
            # `#run` shown: this opening's view, not the last one's hidden note
            site.wait(
                "!document.querySelector('#run').hidden && "
                f"document.querySelector('#run .note').textContent === {missing_note}"
            )
            site.css("#run a.back").click()
            site.wait("!document.querySelector('#boards').hidden")
            assert site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"]').is_displayed()
        script.write_bytes(kept)
        drill.click()
        site.wait("document.querySelectorAll('[data-item]').length === 3")


def test_a_run_that_fails_to_load_leaves_the_next_opened_run_alone(tmp_path: Path) -> None:
    """One run's script is missing; it is opened and, before its load fails, another run: the
    other run's items stay, with no missing note written over them."""
    results, _ = make_mm(tmp_path)
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", results)
    assert done.returncode == 0, done.stderr
    with chromium() as driver:
        site = Site(out, tmp_path, driver)
        site.open_index("#mm")
        small = site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"] [data-drill]')
        large = site.css(f'tr[data-run="{MM_TASK}/org/vlm-large"] [data-drill]')
        ids = [small.get_attribute("data-drill"), large.get_attribute("data-drill")]
        large.click()
        site.wait("document.querySelectorAll('[data-item]').length === 3")
        [script] = (out / "runs").glob(f"{ids[0]}.*.js")
        script.unlink()
        # two openings in one task, as quick clicks would be: the first script cannot fail
        # between them
        driver.execute_script(
            """window.failedScripts = 0;
            document.addEventListener('error', () => { window.failedScripts += 1; }, true);
            for (const id of arguments) {
                history.replaceState(null, '', '#run/' + id);
                window.dispatchEvent(new HashChangeEvent('hashchange'));
            }""",
            *ids,
        )
        site.wait("window.failedScripts === 1")
        assert len(site.all("[data-item]")) == 3
        assert not site.all("#run .note")
        assert site.all(f'[data-item="{MM_ANSWER_ID}"] [data-answer]')[0].get_attribute(
            "data-answer"
        ) == ("org/vlm-large")


def test_lctg_and_judge_runs(site: Site) -> None:
    """What a person needs to judge each item: LCTG's prompt text and what its check looks
    for; the judge's question, both answers, the verdicts with their probability (no "None"),
    the item's score labelled. Screenshots are left in the test's folder."""
    site.open_index("#lctg")
    site.css('[data-leaderboard="lctg"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 8")
    prompt = lctg_prompts()[1]
    item = site.css(f'[data-item="{lctg_item(prompt, "keyword")}"]')
    assert LCTG_ANSWER in item.text and prompt["keyword_answer"] in item.text
    assert " ".join(prompt["prompt_keyword"].split()) in " ".join(item.text.split())
    assert item.find_element("css selector", ".score").text == "checks passed 0.6667"
    site.driver.save_screenshot(str(site.out.parent / "lctg-run.png"))
    site.open_index("#judge")
    site.css('[data-leaderboard="judge"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 12")
    first = site.css('[data-item="p1"]')
    text = first.text
    assert JUDGE_QUESTION in text and JUDGE_ANSWERS[0] in text and JUDGE_ANSWERS[1] in text
    assert "proposed: A, A is better (P 0.7500" in text and "P(A) 0.8000" in text
    assert first.find_element("css selector", ".score").text == "P(verdict) 0.7500"
    assert "BS1: no verdict" in site.css('[data-item="p2"]').text
    assert "None" not in site.css("#run").text
    site.driver.save_screenshot(str(site.out.parent / "judge-run.png"))
    strengths = site.all('[data-leaderboard="judge-rank"] td[data-column="strength"]')
    assert len(strengths) == 3
    site.collect_logs()


def test_a_failed_mm_item_shows_why(site: Site) -> None:
    site.open_index("#mm")
    site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 3")
    [failed, other] = site.all(f'[data-item="{MM_FAILED_ID}"] [data-answer]')
    assert failed.get_attribute("data-answer") == "org/vlm-small"
    assert failed.find_element("css selector", ".failure").text == f"failed: {MM_FAILURE}"
    assert not other.find_elements("css selector", ".failure")
    site.driver.execute_script("arguments[0].scrollIntoView()", failed)
    site.driver.save_screenshot(str(site.out.parent / "mm-failed.png"))
    site.collect_logs()


def test_a_direct_link_to_a_run_page_highlights_its_tab(site: Site) -> None:
    """Opened as the page's first address, or from another benchmark's tab: the run's own
    benchmark's tab is the one marked; back on the leaderboards, that tab's."""
    site.open_index()
    links = {
        bench: site.css(f'[data-leaderboard="{bench}"] [data-drill]').get_attribute("data-drill")
        for bench in ("pfgen", "lctg", "mm", "judge")
    }
    active = "Array.from(document.querySelectorAll('[data-show].active'), (b) => b.dataset.show)"
    for bench, page in links.items():
        site.open_index(f"#run/{page}")
        site.wait("document.querySelectorAll('[data-item]').length > 0")
        assert site.driver.execute_script(f"return {active};") == [bench]
        other = "lctg" if bench != "lctg" else "judge"
        site.open_index(f"#{other}")
        site.driver.execute_script(f"location.hash = 'run/{page}';")
        site.wait("document.querySelectorAll('[data-item]').length > 0")
        assert site.driver.execute_script(f"return {active};") == [bench]
        site.css("#run .back").click()
        site.wait("!document.querySelector('#boards').hidden")
        assert site.driver.execute_script(f"return {active};") == [bench]
    site.collect_logs()


def finished_download(downloads: Path, name: str, timeout: float = 10) -> Path:
    """Waits for Chromium to finish a download: it reserves the final name with an empty file
    while it writes to a `.crdownload` beside it."""
    path = downloads / name
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        writing = any(downloads.glob("*.crdownload"))
        if not writing and path.is_file() and path.stat().st_size > 0:
            return path
        time.sleep(0.05)
    raise AssertionError(f"the download {name} did not finish in {timeout} s")


def test_the_csv_download_equals_the_table(site: Site) -> None:
    site.open_index("#pfgen")
    site.css('[data-leaderboard="pfgen"] th[data-column="score"]').click()
    site.css('[data-board="pfgen"] [data-download="csv"]').click()
    path = finished_download(site.downloads, "pfgen.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    table = site.driver.execute_script(
        """const table = document.querySelector('table[data-leaderboard="pfgen"]');
        const columns = Array.from(table.querySelectorAll('thead th[data-column]'));
        return Array.from(table.tBodies[0].rows).map((row) => [row.dataset.run].concat(
            ...columns.map((th) => {
                const cell = row.querySelector(`td[data-column="${th.dataset.column}"]`);
                const value = cell.dataset.value ?? cell.textContent;
                const spread = {"±": cell.dataset.std, "of": cell.dataset.total};
                return th.dataset.spread ? [value, spread[th.dataset.spread]] : [value];
            })));"""
    )
    header = rows[0]
    assert header[:4] == ["run", "model", "score", "score_std"]
    # Every published run is whole: its trials out of as many trials.
    trials, total = header.index("trials"), header.index("trials_total")
    assert all(row[trials] == row[total] != "" for row in rows[1:])
    assert len(rows) - 1 == len(table) == 3
    for written, shown in zip(rows[1:], table, strict=True):
        assert len(written) == len(shown)
        for a, b in zip(written, shown, strict=True):
            try:
                assert float(a) == float(b)
            except ValueError:
                assert a == b
    site.collect_logs()


def test_no_request_outside_out_and_no_console_error(site: Site) -> None:
    """What every test of the module opened, and a pfgen run and an mm run opened here (the
    test may come first in its pytest worker)."""
    site.open_index("#pfgen")
    site.css('tr[data-run="result/sbintuitions/sarashina1-13b/9c5badf"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 50")
    site.open_index("#mm")
    site.css(f'tr[data-run="{MM_TASK}/org/vlm-small"] [data-drill]').click()
    site.wait("document.querySelectorAll('[data-item]').length === 3")
    all_loaded(site, 3)
    site.collect_logs()
    assert site.urls, "the DevTools log recorded no request"
    inside = site.out.as_uri() + "/"
    outside = [u for u in site.urls if not (u.startswith(inside) or u.startswith("blob:"))]
    assert outside == []
    assert any(u.endswith(".png") for u in site.urls) and any("/runs/" in u for u in site.urls)
    errors = [entry for entry in site.console if entry["level"] == "SEVERE"]
    assert errors == []


def test_every_item_of_every_layout_shows_every_image(
    tmp_path: Path, evalmm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tasks whose datasets lay images out differently (nested question lists, lists of
    images, image_0… and image_1… columns, row-index ids), from the run records alone: each
    item shows each of its images, loaded, before its answers; nothing scrolls sideways at
    1280 px. A screenshot of a multi-image page is left in the test's folder."""
    monkeypatch.setenv("EVALMM_DIR", str(evalmm_dir))
    tasks = (MM_TASK, *MM_LAYOUTS)
    results, datasets = make_mm(tmp_path, tasks=tasks)
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", results)
    assert done.returncode == 0, done.stderr
    with chromium(width=1280) as driver:
        site = Site(out, tmp_path, driver)
        for task in tasks:
            expected = mm_items(task, datasets[task])
            site.open_index("#mm")
            site.css(f'tr[data-run="{task}/org/vlm-small"] [data-drill]').click()
            site.wait(f"document.querySelectorAll('[data-item]').length === {len(expected)}")
            all_loaded(site, sum(len(item.image_sizes) for item in expected))
            shown = driver.execute_script(
                """return Array.from(document.querySelectorAll('[data-item]')).map((item) => [
                    item.dataset.item,
                    Array.from(item.querySelectorAll('img.thumb')).map((i) => i.naturalWidth),
                    Array.from(item.children).findIndex((c) => c.matches('.images')) <
                        Array.from(item.children).findIndex((c) => c.matches('.answers')),
                ]);"""
            )
            assert [row[0] for row in shown] == [item.question_id for item in expected]
            for (_, widths, before), item in zip(shown, expected, strict=True):
                assert widths == [width for width, _ in item.image_sizes], (task, item)
                assert before or not item.image_sizes
            sideways = driver.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert sideways <= 0, task
            driver.save_screenshot(str(tmp_path / f"{task}.png"))
        site.collect_logs()
        assert [e for e in site.console if e["level"] == "SEVERE"] == []


def test_runs_on_two_dataset_copies_show_their_own(tmp_path: Path) -> None:
    """Two runs of one task on two copies of its dataset (item 101: another question and
    another image): each page shows its own copy's question and image beside its own answer
    only; with one copy gone, that run's page says so and shows the question it recorded and
    no image. Screenshots are left in the test's folder."""
    import shutil

    first, datasets = make_mm(tmp_path / "a", models=("org/vlm-a",))
    copy = tmp_path / "b" / "mm-datasets" / MM_TASK
    changed_copy(datasets[MM_TASK], copy)
    second, _ = make_mm(tmp_path / "b", models=("org/vlm-b",))
    out = tmp_path / "out"
    shown = """const item = document.querySelector('[data-item="101"]');
        return [item.querySelector('.field span').textContent,
            Array.from(item.querySelectorAll('img.thumb'), (i) => i.naturalWidth),
            Array.from(item.querySelectorAll('[data-answer]'), (a) => a.dataset.answer),
            Array.from(document.querySelectorAll('#run .run-note'), (n) => n.textContent)];"""
    with chromium(width=1280) as driver:
        site = Site(out, tmp_path, driver)
        for removed in (False, True):
            if removed:
                shutil.rmtree(copy)
            done = run_cli("site", out, "--mm", first, "--mm", second)
            assert done.returncode == 0, done.stderr
            for model, question, widths in (
                ("org/vlm-a", "何色ですか？", [16]),
                ("org/vlm-b", CHANGED_QUESTION, [] if removed else [20]),
            ):
                site.open_index("#mm")
                site.css(f'tr[data-run="{MM_TASK}/{model}"] [data-drill]').click()
                site.wait("document.querySelectorAll('[data-item]').length === 3")
                all_loaded(site, 3 if widths else 0)
                text, loaded, answering, notes = driver.execute_script(shown)
                assert (text, loaded, answering) == (question, widths, [model])
                assert bool(notes) == (removed and model == "org/vlm-b")
                assert all(str(copy) in note for note in notes)
                name = f"{model.split('/')[1]}{'-copy-removed' if removed else ''}.png"
                site.scroll_to(0)
                driver.save_screenshot(str(tmp_path / name))
        site.collect_logs()
        assert [e for e in site.console if e["level"] == "SEVERE"] == []
