"""A text MeCab refuses (about a million characters of Japanese: "too long sentence") is a
one-line error naming its file, line and field, never a TypeError; the texts it accepts are
scored as before."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import run_cli

LONG = "私は猫です。" * 170_000  # 1,020,000 characters


def write_lines(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def test_rouge_of_a_pred_too_long_for_mecab_names_the_item(tmp_path: Path) -> None:
    # Enough distinct texts that MeCab runs in forked workers too.
    lines: list[dict[str, object]] = [{"ref": f"猫{n}", "pred": f"犬{n}"} for n in range(2500)]
    lines.insert(1200, {"ref": "猫です", "pred": LONG})
    write_lines(tmp_path / "in.jsonl", lines)
    result = run_cli("mm", "score", "--metric", "rougel", "in.jsonl", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        'error: in.jsonl:1201: field "pred": MeCab cannot tokenise a text of 1,020,000 '
        "characters (too long sentence)\n"
    )


def test_bleu_of_a_ref_too_long_for_mecab_names_the_item(tmp_path: Path) -> None:
    lines = [
        {"ref": "はい", "pred": "はい", "answer_type": 3},
        {"ref": "猫" * 1_000_000, "pred": "猫", "answer_type": 3},
    ]
    write_lines(tmp_path / "in.jsonl", lines)
    result = run_cli("mm", "score", "--metric", "jdocqa", "in.jsonl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith('error: in.jsonl:2: field "ref": MeCab cannot tokenise')


def test_a_long_text_mecab_accepts_is_scored(tmp_path: Path) -> None:
    text = "私は猫です。" * 50_000
    source = write_lines(tmp_path / "in.jsonl", [{"ref": text, "pred": text}])
    result = run_cli("mm", "score", "--metric", "rougel", "--json", source, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["overall_score"] == 100.0


def test_evaluate_names_the_run_and_scores_the_others(tmp_path: Path) -> None:
    result = tmp_path / "result"
    for model, pred in (("long", LONG), ("short", "猫です")):
        folder = result / "ja-vg-vqa-500" / model
        folder.mkdir(parents=True)
        line = {"question_id": 0, "text": pred, "answer": "猫です", "input_text": "質問"}
        (folder / "prediction.jsonl").write_text(json.dumps(line, ensure_ascii=False) + "\n")
    ran = run_cli("mm", "evaluate", result, "--metrics", "rougel", cwd=tmp_path)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert 'long/prediction.jsonl:1: field "pred": MeCab cannot tokenise' in ran.stderr
    assert (result / "ja-vg-vqa-500" / "short" / "evaluation.jsonl").is_file()
