"""`build-refs`: reference sets from candidates, through the CLI on real files, and the exact
rare n-gram counting of the core against a plain Python count."""

from __future__ import annotations

import json
import lzma
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_runner import run_cli
from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.pfgen.construct import candidates as candidate_reading
from pfgen_fast.pfgen.construct.build import (
    BuildSettings,
    build_reference_sets,
    closest_to_length,
    select_representative,
)
from pfgen_fast.pfgen.construct.rules import DEFAULT_STYLE_RULES, load_style_rules
from pfgen_fast.pfgen.data import load_question, load_questions

QUESTION_ID = "Q04"


def references(data_dir: Path) -> tuple[str, list[str]]:
    """The question text and published answers of QUESTION_ID (read, never copied)."""
    question = load_question(data_dir / f"{QUESTION_ID}.json")
    return question.question, [a for answers in question.answers.values() for a in answers]


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def build(tmp_path: Path, data_dir: Path, candidates: list[Path], *extra: str | Path):
    out = tmp_path / "out"
    result = run_cli(
        "build-refs",
        "--meta",
        data_dir / "meta",
        "--candidates",
        *candidates,
        "--out",
        out,
        *extra,
    )
    return result, out


def rare_by_definition(texts: list[str], n: int, min_count: int) -> list[bool]:
    """collections.Counter of each candidate's distinct n-grams: the straightforward way."""
    grams = [{t[i : i + n] for i in range(len(t) - n + 1)} for t in texts]
    document_frequency = Counter(g for s in grams for g in s)
    return [any(document_frequency[g] < min_count for g in s) for s in grams]


def count_rare(
    tmp_path: Path, texts: list[str], n: int, min_count: int, budget: int, as_series: bool
) -> tuple[np.ndarray, np.ndarray, dict[str, int], core_pfgen.RareNgramCounter]:
    """The counter's outcome on `texts`, added in batches as lists of str or polars Series."""
    spill = tmp_path / f"spill-{n}-{min_count}-{budget}-{as_series}"
    spill.mkdir()
    counter = core_pfgen.RareNgramCounter(n, min_count, spill, budget)
    for first in range(0, len(texts), 400):
        batch = texts[first : first + 400]
        counter.add(pl.Series(batch, dtype=pl.String) if as_series else batch)
    counted = counter.finish()
    return counted.rare, counted.lengths, counted.stats, counter


@pytest.mark.parametrize("as_series", [False, True])
@pytest.mark.parametrize("budget", [0, 1 << 30])
def test_rare_ngram_counter_is_exact(
    tmp_path: Path, data_dir: Path, budget: int, as_series: bool
) -> None:
    _, answers = references(data_dir)
    rng = np.random.default_rng(3)
    # References with a character swapped now and then: new n-grams, some shared, some not.
    texts = []
    for answer in answers[:1500]:
        chars = list(answer)
        if rng.random() < 0.3:
            chars[int(rng.integers(len(chars)))] = "々ゑ😀"[int(rng.integers(3))]
        texts.append("".join(chars))
    texts += ["", "短い", texts[0], "😀" * 6, "😀" * 6]
    for n, min_count in [(5, 2), (3, 3), (1, 2)]:
        rare, lengths, stats, counter = count_rare(tmp_path, texts, n, min_count, budget, as_series)
        assert rare.tolist() == rare_by_definition(texts, n, min_count)
        assert lengths.tolist() == [len(t) for t in texts]
        assert stats["occurrences"] == sum(max(len(t) - n + 1, 0) for t in texts)
        assert stats["alphabet"] == len(set("".join(texts)))
        assert stats["wide"] == 0
        assert counter.texts([5, 0, len(texts) - 1]) == [texts[5], texts[0], texts[-1]]


@pytest.mark.parametrize("as_series", [False, True])
def test_rare_ngram_counter_beyond_the_narrow_alphabet(tmp_path: Path, as_series: bool) -> None:
    # 7,000 characters (kanji, then astral ones): a 5-gram holding a character ranked past
    # 4,095 takes the exact wide key. Candidates are cut from one long text, a character
    # changed now and then, so wide and narrow n-grams both recur and are rare.
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 5000)]
    alphabet += [chr(c) for c in range(0x20000, 0x20000 + 2000)]
    rng = np.random.default_rng(5)
    source = alphabet + [alphabet[i] for i in rng.integers(len(alphabet), size=20_000)]
    texts = []
    for _ in range(6000):
        start = int(rng.integers(len(source) - 40))
        chars = source[start : start + int(rng.integers(40))]
        if chars and rng.random() < 0.3:
            chars[int(rng.integers(len(chars)))] = alphabet[int(rng.integers(len(alphabet)))]
        texts.append("".join(chars))
    for budget in [0, 1 << 30]:
        rare, _, stats, _ = count_rare(tmp_path, texts, 5, 2, budget, as_series)
        assert rare.tolist() == rare_by_definition(texts, 5, 2)
        assert stats["alphabet"] == len(set("".join(texts))) > 4096
        assert 0 < stats["wide"] < stats["distinct"]


def test_rare_ngram_counter_reads_arrow_views(tmp_path: Path) -> None:
    # Views hold strings of at most 12 bytes inline, longer ones in data buffers.
    texts = ["短い", "これは十三文字よりも長い文章です", "", "abc", "x" * 12, "y" * 13, "😀" * 5]
    series = pl.Series(texts)
    cases = {
        "one chunk": series,
        "two chunks": pl.concat([series.slice(0, 3), series.slice(3)], rechunk=False),
        "a slice (an offset into the views)": series.slice(2, 4),
        "binary views": series.cast(pl.Binary),
    }
    for name, candidates in cases.items():
        spill = tmp_path / name
        spill.mkdir()
        counter = core_pfgen.RareNgramCounter(2, 1, spill, 1 << 30)
        counter.add(candidates)
        lengths = counter.finish().lengths
        expected = candidates.cast(pl.String).to_list()
        assert counter.texts(list(range(len(expected)))) == expected, name
        assert lengths.tolist() == [len(t) for t in expected], name


def test_rare_ngram_counter_refuses_bad_candidates(tmp_path: Path) -> None:
    counter = core_pfgen.RareNgramCounter(5, 2, tmp_path, 1 << 30)
    with pytest.raises(TypeError, match="candidate 1 is not a string"):
        counter.add(["ok", 3])
    with pytest.raises(ValueError, match="lone surrogate"):
        counter.add(["ok", "\ud800"])
    with pytest.raises(TypeError, match="Arrow stream of string views"):
        counter.add(pl.Series([1, 2]))
    with pytest.raises(ValueError, match="must not be null"):
        counter.add(pl.Series(["a", None]))
    assert counter.num_candidates == 0


def test_check_lines() -> None:
    lines = [
        b'{"question": "q", "answer": "a"}',
        b"",
        b'{"question": "q", "answer": 5}',
        b'{"question": "q", "answer": "\\ud800"}',
        b'{"question": "q", "answer": "a", "answer": "b"}',
        b'  {"question": "q", "answer": "b", "source": "S", "extra": [1, {"x": null}]}\r',
        b'{"question": "q", "answer": "\xff"}',
        b'{"question": "q", "answer": "c"}',
    ]
    block = bytearray(b"\n".join(lines) + b"\ntrailing bytes not checked")
    length = len(block) - len(b"trailing bytes not checked")
    checked = core_pfgen.check_candidate_lines(block, length)
    assert checked.num_lines == len(lines)
    assert checked.line_indices.tolist() == [0, 5, 7]
    assert checked.usable == b"\n".join(lines[i] for i in [0, 5, 7]) + b"\n"
    assert [index for index, _ in checked.problems] == [2, 3, 4, 6]
    messages = [message for _, message in checked.problems]
    assert messages[0] == 'field "answer": expected a string, got an integer'
    assert messages[1].startswith("not valid JSON: lone surrogate")
    assert messages[2] == 'field "answer": appears 2 times'
    assert messages[3] == "not valid UTF-8 at byte 29"


def test_builds_a_question_file_in_the_published_format(tmp_path: Path, data_dir: Path) -> None:
    question, answers = references(data_dir)
    records = [{"question": question, "answer": a, "source": "P"} for a in answers]
    # Two equal candidates of source X: normalised, they survive the rare filter (each 5-gram
    # is in 2 candidates) and count once: a set of one, short of --size and flagged.
    records += [{"question": question, "answer": "ＡＢＣ１２３を見て下さい。" * 8}] * 2
    candidates = write_jsonl(tmp_path / "candidates.jsonl", records)
    result, out = build(tmp_path, data_dir, [candidates], "--pool-size", "300", "--size", "200")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    written = json.loads((out / f"{QUESTION_ID}.json").read_text("utf-8"))
    meta = json.loads((data_dir / "meta" / f"{QUESTION_ID}.json").read_text("utf-8"))
    assert list(written) == ["question_id", "question", "category", "note", "keywords", "answers"]
    assert {k: written[k] for k in meta} == meta
    assert list(written["answers"]) == ["P", "X"]
    chosen = written["answers"]["P"]
    assert len(chosen) == 200 and len(set(chosen)) == 200
    assert set(chosen) <= set(answers)  # the published answers are already normalised
    assert abs(np.mean([len(a) for a in chosen]) - 100) < 3
    assert written["answers"]["X"] == ["ABC123を見てください。" * 8]
    raw = (out / f"{QUESTION_ID}.json").read_text("utf-8")
    assert raw == json.dumps(written, ensure_ascii=False, indent=2)
    report = json.loads((out / "build-refs-report.json").read_text("utf-8"))
    sets = {s["source"]: s for s in report["sets"]}
    assert sets["P"]["short"] is False and sets["X"]["short"] is True
    assert "warning: Q04/X" in result.stderr
    steps = [(s["source"], s["step"]) for s in report["steps"]]
    assert steps[:5] == [
        ("P", "read"),
        ("P", "style"),
        ("P", "rare_ngrams"),
        ("P", "length"),
        ("P", "representative"),
    ]
    first = report["steps"][0]
    assert first["in"] == first["out"] == len(answers)
    assert set(first) >= {"length_mean", "length_sd", "seconds", "peak_memory_mb"}
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


def test_style_ng_and_rare_filter_steps(tmp_path: Path, data_dir: Path) -> None:
    question, _ = references(data_dir)
    common = "算数は小学校で学ぶ計算で、数学は中学校からの学問です。"
    texts = [common + "例えば計算を見て下さい。"] * 3 + [common + "答えは１２３です。"] * 2
    texts += [common + "誤りの記述です。"] * 2 + [common + "ひとつだけ珍しい語句"]
    candidates = write_jsonl(
        tmp_path / "c.jsonl", [{"question": question, "answer": t} for t in texts]
    )
    ng = tmp_path / "ng.json"
    ng.write_text(json.dumps({"rules": {QUESTION_ID: ["誤り"]}}), "utf-8")
    result, out = build(tmp_path, data_dir, [candidates], "--ng-rules", ng, "--json")
    assert result.returncode == 0, result.stderr
    written = json.loads((out / f"{QUESTION_ID}.json").read_text("utf-8"))["answers"]["X"]
    assert sorted(written) == sorted(
        [common + "例えば計算を見てください。", common + "答えは123です。"]
    )
    report = json.loads(result.stdout)
    counts = {s["step"]: (s["in"], s["out"]) for s in report["steps"]}
    assert counts["ng_rules"] == (8, 6)
    assert counts["rare_ngrams"] == (6, 5)
    assert counts["representative"] == (5, 2)  # duplicates count once


def test_steps_can_be_switched_off(tmp_path: Path, data_dir: Path) -> None:
    question, _ = references(data_dir)
    texts = ["一つ目の答え", "二つ目の答え", "三つ目の答え"]
    candidates = write_jsonl(
        tmp_path / "c.jsonl", [{"question": question, "answer": t} for t in texts]
    )
    result, out = build(
        tmp_path,
        data_dir,
        [candidates],
        "--no-style",
        "--no-rare-filter",
        "--no-length-selection",
        "--no-representativeness",
        "--size",
        "3",
    )
    assert result.returncode == 0, result.stderr
    written = json.loads((out / f"{QUESTION_ID}.json").read_text("utf-8"))["answers"]["X"]
    assert written == texts
    report = json.loads((out / "build-refs-report.json").read_text("utf-8"))
    assert [s["step"] for s in report["steps"]] == ["read", "representative"]


def test_parquet_and_xz_candidates(tmp_path: Path, data_dir: Path) -> None:
    question, answers = references(data_dir)
    pl.DataFrame({"question": question, "answer": answers[:600]}).write_parquet(
        tmp_path / "a.parquet"
    )
    with lzma.open(tmp_path / "b.jsonl.xz", "wt", encoding="utf-8") as out:
        for answer in answers[600:1200]:
            out.write(json.dumps({"question": question, "answer": answer}) + "\n")
    result, out = build(
        tmp_path,
        data_dir,
        [tmp_path / "a.parquet", tmp_path / "b.jsonl.xz"],
        "--size",
        "300",
        "--no-rare-filter",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((out / "build-refs-report.json").read_text("utf-8"))
    assert report["steps"][0]["in"] == 1200
    written = json.loads((out / f"{QUESTION_ID}.json").read_text("utf-8"))
    assert len(written["answers"]["X"]) == 300


@pytest.mark.slow
def test_bad_parquet_and_xz_candidates(tmp_path: Path, data_dir: Path) -> None:
    question, answers = references(data_dir)
    rows = pl.DataFrame(
        {
            "question": [question, question, None, "知らない質問"],
            "answer": [answers[0], None, answers[1], answers[2]],
            "source": ["P", "P", "P", None],
        }
    )
    rows.write_parquet(tmp_path / "nulls.parquet")
    result, out = build(tmp_path, data_dir, [tmp_path / "nulls.parquet"], "--no-rare-filter")
    assert result.returncode == 1
    nulls = tmp_path / "nulls.parquet"
    assert f'{nulls}: row 2: field "answer": expected a string, got null' in result.stderr
    assert f'{nulls}: row 3: field "question": expected a string, got null' in result.stderr
    assert f'{nulls}: row 4: field "question": not a question' in result.stderr
    assert json.loads((out / f"{QUESTION_ID}.json").read_text("utf-8"))["answers"] == {
        "P": [answers[0]]
    }
    pl.DataFrame({"question": [question], "answer": [5]}).write_parquet(tmp_path / "int.parquet")
    result, _ = build(tmp_path, data_dir, [tmp_path / "int.parquet"])
    assert result.returncode == 1
    assert "column 'answer' must hold strings, not Int64" in result.stderr
    xz = lzma.compress(json.dumps({"question": question, "answer": answers[0]}).encode() * 50)
    (tmp_path / "cut.jsonl.xz").write_bytes(xz[: len(xz) // 2])
    result, out = build(tmp_path, data_dir, [tmp_path / "cut.jsonl.xz"])
    assert result.returncode == 1
    assert "cut.jsonl.xz: not a valid .xz file" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_lines_are_reported_and_skipped(tmp_path: Path, data_dir: Path) -> None:
    question, answers = references(data_dir)
    lines = [json.dumps({"question": question, "answer": a}) for a in answers[:300]]
    lines[3] = json.dumps({"question": question})
    lines[5] = json.dumps({"question": "知らない質問", "answer": "x"})
    lines[7] = "{not json"
    lines[9] = json.dumps({"question": question, "answer": 5})
    lines[11] = json.dumps({"question": question, "answer": "\ud800"})
    lines[13] = json.dumps({"question": question, "answer": "a", "source": ""})
    lines[15] = ""  # blank lines are skipped, not problems
    candidates = tmp_path / "c.jsonl"
    # CRLF line ends, and no line break after the last line.
    candidates.write_text("\r\n".join(lines), "utf-8")
    result, out = build(tmp_path, data_dir, [candidates], "--size", "100", "--no-rare-filter")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f'{candidates}:4: field "answer": missing' in result.stderr
    assert f'{candidates}:6: field "question": not a question of --meta' in result.stderr
    assert f"{candidates}:8: not valid JSON" in result.stderr
    assert f'{candidates}:10: field "answer": expected a string, got an integer' in result.stderr
    assert f"{candidates}:12: not valid JSON: lone surrogate" in result.stderr
    assert f'{candidates}:14: field "source": expected a non-empty string, got ""' in result.stderr
    assert len(json.loads((out / f"{QUESTION_ID}.json").read_text("utf-8"))["answers"]["X"]) == 100
    report = json.loads((out / "build-refs-report.json").read_text("utf-8"))
    assert report["skipped_lines"] == 6
    assert report["steps"][0]["in"] == 300 - 7


def test_blocks_split_lines_anywhere(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocks far smaller than lines: a block boundary falls inside nearly every line, and the
    # buffer must grow for each. The outcome and the line numbers are those of one big block.
    question, answers = references(data_dir)
    lines = [json.dumps({"question": question, "answer": a}) for a in answers[:200]]
    lines[50] = json.dumps({"question": question})
    lines[120] = ""
    candidates = tmp_path / "c.jsonl"
    candidates.write_text("\n".join(lines) + "\n", "utf-8")
    questions = load_questions(data_dir / "meta", require_answers=False)
    settings = BuildSettings(style_rules=None, min_count=None, pool_size=None, final_size=50)
    expected = build_reference_sets(questions, [candidates], "X", settings)
    monkeypatch.setattr(candidate_reading, "BLOCK_BYTES", 7)
    outcome = build_reference_sets(questions, [candidates], "X", settings)
    assert outcome.answers == expected.answers
    assert outcome.problems.messages == [f'{candidates}:51: field "answer": missing']
    assert outcome.steps[0]["in"] == 198


@pytest.mark.parametrize(
    ("rules_file", "content", "message"),
    [
        ("style.json", {"rules": [{"pattern": "(", "replace": ""}]}, "rules[0].pattern"),
        ("style.json", {"rules": [{"pattern": "a"}]}, 'field "rules[0]": expected "replace"'),
        ("ng.json", {"rules": {"Q99": ["x"]}}, "no question 'Q99'"),
        ("ng.json", {"rules": {QUESTION_ID: ["[a-"]}}, f"rules.{QUESTION_ID}[0]"),
    ],
)
def test_invalid_rules_stop_before_writing(
    tmp_path: Path, data_dir: Path, rules_file: str, content: object, message: str
) -> None:
    question, answers = references(data_dir)
    candidates = write_jsonl(
        tmp_path / "c.jsonl", [{"question": question, "answer": a} for a in answers[:50]]
    )
    path = tmp_path / rules_file
    path.write_text(json.dumps(content), "utf-8")
    option = "--style-rules" if rules_file == "style.json" else "--ng-rules"
    result, out = build(tmp_path, data_dir, [candidates], option, path)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (out / f"{QUESTION_ID}.json").exists()


@pytest.mark.parametrize("option", ["--out", "--spill-dir"])
def test_unwritable_directory_is_an_error(tmp_path: Path, data_dir: Path, option: str) -> None:
    question, answers = references(data_dir)
    candidates = write_jsonl(
        tmp_path / "c.jsonl", [{"question": question, "answer": a} for a in answers[:50]]
    )
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    unwritable = blocker / "dir"
    if option == "--out":
        out = unwritable
        result = run_cli(
            "build-refs", "--meta", data_dir / "meta", "--candidates", candidates, "--out", out
        )
    else:
        result, out = build(tmp_path, data_dir, [candidates], option, unwritable)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {unwritable}: cannot write")
    assert "Traceback" not in result.stderr
    assert not (out / f"{QUESTION_ID}.json").exists()


def test_missing_candidates_file(tmp_path: Path, data_dir: Path) -> None:
    result, out = build(tmp_path, data_dir, [tmp_path / "none.jsonl"])
    assert result.returncode == 1
    assert "none.jsonl: no such file" in result.stderr
    assert not any(out.glob("Q*.json"))


def test_default_style_rules() -> None:
    rules = load_style_rules(DEFAULT_STYLE_RULES)
    texts = pl.Series(
        [
            "　ＡＢＣは３．５％、１，０００円です。見て下さい。 ",
            "ご案内致します。一致している。この様に様子を確認する事ができる。出来事の為に出来る。",
            "事件がある事業。",
        ]
    )
    assert rules.apply(texts).to_list() == [
        "ABCは3.5％、1,000円です。見てください。",
        "ご案内いたします。一致している。このように様子を確認することができる。出来事のためにできる。",
        "事件がある事業。",
    ]


def test_selection_rules() -> None:
    lengths = np.array([100, 90, 101, 99, 130, 100])
    assert closest_to_length(np.arange(6), lengths, 100, 3).tolist() == [0, 2, 5]
    assert closest_to_length(np.array([1, 2, 4]), lengths, 100, 2).tolist() == [1, 2]
    texts = [f"t{i}" for i in range(10)] + ["t9"]
    scores = np.array([float(i) for i in range(10)] + [9.0])
    # Distinct texts ranked t9..t0; the top half t9..t5; 3 at evenly spaced ranks.
    assert select_representative(texts, scores, 3, 0.5) == ["t9", "t8", "t6"]
    assert select_representative(texts, scores, 20, 0.5) == [f"t{i}" for i in range(9, -1, -1)]
