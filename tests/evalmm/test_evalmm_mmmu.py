"""MMMU / JMMMU: the answer parsers (evalmm-spec.md §2) and the two JMMMU list bugs, reproduced in
evaluation order by default and fixed by fix_quirks. The indicator list is read from
llm-jp-eval-mm's own jmmmu_scorer.py (one pair fused by a missing comma)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pfgen_fast.common.errors import InputError
from pfgen_fast.evalmm.metrics.base import Batch, Options
from pfgen_fast.evalmm.metrics.choice_parsing import parse_choice
from pfgen_fast.evalmm.metrics.scorers import get_scorer

OPTIONS = "['東京', '大阪', '名古屋', '福岡']"


def score(
    name: str, items: list[tuple[str, str, dict[str, Any]]], options: Options
) -> tuple[list[Any], dict[str, Any]]:
    scorer = get_scorer(name)
    batch = Batch([i[0] for i in items], [i[1] for i in items], [i[2] for i in items], options)
    scores = scorer.score(batch)
    return scores, scorer.aggregate(scores, batch)


@pytest.mark.parametrize(
    ("response", "letter"),
    [
        ("(B)", "B"),
        ("答えは (C) です。", "C"),
        ("B", "B"),
        ("正解はDです", "D"),
        ("A.", "A"),
        ("、。A！", "A"),
        ("I think (A) is wrong, so the answer is (C)", "C"),
        ("The city with the castle is probably 名古屋 in this picture", "C"),
        ("わかりません", None),
        ("E", None),
    ],
)
def test_multiple_choice(response: str, letter: str | None) -> None:
    assert parse_choice(response, ["東京", "大阪", "名古屋", "福岡"]) == letter


def open_item(answer: str, pred: str, subject: str = "Math") -> tuple[str, str, dict[str, Any]]:
    return answer, pred, {"id": f"validation_{subject}_1", "question_type": "open"}


def test_jmmmu_order_dependence_and_fix(evalmm_dir: Path) -> None:
    items = [open_item("赤", "色=赤。でも青かも"), open_item("赤", "色=赤。でも青かも")]
    items += [open_item("10", "a=10。b=20"), open_item("10", "a=10。b=20")]
    scores, _ = score("jmmmu", items, Options(data_dir=evalmm_dir))
    assert scores == [0, 1, 1, 1]
    scores, _ = score("jmmmu", items[2:], Options(data_dir=evalmm_dir))
    assert scores == [0, 1]
    scores, _ = score("jmmmu", items, Options(data_dir=evalmm_dir, fix_quirks=True))
    assert scores == [0, 0, 0, 0]


def test_jmmmu_fused_indicator(evalmm_dir: Path) -> None:
    items = [open_item("京", "東京ではない。回答は京")]
    assert score("jmmmu", items, Options(data_dir=evalmm_dir))[0] == [0]
    assert score("jmmmu", items, Options(data_dir=evalmm_dir, fix_quirks=True))[0] == [1]


def test_open_numbers_and_strings() -> None:
    items = [
        open_item("1000", "so the total is 1,000 yen"),
        open_item("3.14", "therefore 3.141"),
        open_item("paris", "The answer is Paris."),
        open_item("2", "answer 12"),
    ]
    scores, _ = score("mmmu", items, Options())
    assert scores == [1, 0, 1, 0]


def test_aggregate_by_subject_and_domain() -> None:
    mc = {"question_type": "multiple-choice", "options": OPTIONS}
    items = [
        ("A", "(A)", {**mc, "id": "validation_Accounting_1"}),
        ("B", "(A)", {**mc, "id": "validation_Accounting_2"}),
        ("C", "(C)", {**mc, "id": "validation_Math_1"}),
        ("D", "(D)", {**mc, "id": "test_History_3"}),
    ]
    scores, aggregate = score("mmmu", items, Options())
    assert scores == [1, 0, 1, 1]
    details = aggregate["details"]
    assert details["Overall-Business"] == 0.5 and details["Accounting"] == 0.5
    assert details["Overall-Science"] == 1.0 and details["Overall-Art and Design"] == 0.0
    assert details["Overall-Humanities and Social Science"] == 1.0
    assert aggregate["overall_score"] == 0.75 and details["Overall"] == 0.75
    assert details["Overall-Tech and Engineering"] == 0 and isinstance(
        details["Overall-Tech and Engineering"], int
    )  # an empty domain is written as the integer 0
    assert list(details)[:4] == ["Overall-Art and Design", "Overall-Business", "Accounting",
                                 "Overall-Science"]  # fmt: skip
    # A subject in no domain (JMMMU's culture-specific ones) counts in Overall only.
    items[0] = ("A", "(A)", {**mc, "id": "validation_Japanese_Art_1"})
    scores, aggregate = score("mmmu", items[:3], Options())
    assert "Japanese_Art" not in aggregate["details"]
    assert aggregate["details"]["Overall"] == round(2 / 3, 5)
    assert aggregate["overall_score"] == 2 / 3


def test_aggregate_weights_accuracies_as_the_original(evalmm_dir: Path) -> None:
    """Overall is the sum of accuracy x count over subjects divided by the count: 15 of 22
    right gives 15/22*22 = 14.999999999999998, so Overall differs from 16/23 in the last bit."""
    items = [open_item("1", "1" if i < 15 else "0", "Math") for i in range(22)]
    items.append(open_item("1", "1", "Japanese_Heritage"))
    _, aggregate = score("jmmmu", items, Options(data_dir=evalmm_dir, fix_quirks=True))
    assert aggregate["overall_score"] == (15 / 22 * 22 + 1 / 1 * 1) / 23 != 16 / 23
    details = aggregate["details"]
    assert details["Overall-Science"] == details["Math"] == round(15 / 22, 5)
    assert "Japanese_Heritage" not in details
    assert list(details) == ["Overall-Art and Psychology", "Overall-Business", "Overall-Science",
                             "Math", "Overall-Health and Medicine",
                             "Overall-Tech and Engineering", "Overall"]  # fmt: skip


def test_bad_options() -> None:
    scorer = get_scorer("mmmu")
    assert scorer.check is not None
    doc = {"id": "validation_Math_1", "question_type": "multiple-choice", "options": "[1, "}
    with pytest.raises(InputError, match='x.jsonl:3: field "options"'):
        scorer.check(doc, "x.jsonl:3")
    with pytest.raises(InputError, match='field "id"'):
        scorer.check({"id": "Math", "question_type": "open"}, "x.jsonl:3")


def test_indicators_from_an_installed_eval_mm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, evalmm_dir: Path
) -> None:
    """Without a checkout or fetched copy, the list comes from an installed eval_mm package
    (found, not imported: its __init__ would fail here), checked as a checkout's file is."""
    import json
    import shutil

    from cli_runner import run_cli

    package = tmp_path / "site" / "eval_mm"
    (package / "metrics").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('not to be imported')\n")
    original = evalmm_dir / "src" / "eval_mm" / "metrics" / "jmmmu_scorer.py"
    installed = package / "metrics" / "jmmmu_scorer.py"
    shutil.copyfile(original, installed)
    item = {"ref": "京", "pred": "東京ではない。回答は京", "id": "validation_Math_1",
            "question_type": "open"}  # fmt: skip
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
    command = ["mm", "score", "--metric", "jmmmu", "--json", str(source)]
    checkout = run_cli(*command, cwd=tmp_path, env={"EVALMM_DIR": str(evalmm_dir)})
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    monkeypatch.setenv("EVALMM_DIR", str(tmp_path / "none"))
    found = run_cli(*command, cwd=tmp_path, process=True)  # PYTHONPATH read at start
    assert checkout.returncode == 0 and found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == json.loads(checkout.stdout)
    installed.write_text('_JAPANESE_INDICATORS = ["解答は、" "回答は"]\n', encoding="utf-8")
    changed = run_cli(*command, cwd=tmp_path, process=True)
    assert changed.returncode != 0
    (line,) = changed.stderr.strip().splitlines()
    assert "does not match llm-jp-eval-mm at the pinned commit" in line and str(installed) in line


def test_missing_indicator_file_says_how_to_get_it(tmp_path: Path) -> None:
    from pfgen_fast.common.errors import DataError

    item = open_item("1", "1")
    with pytest.raises(DataError, match="mm data fetch"):
        score("jmmmu", [item], Options(data_dir=tmp_path))
