"""LCTG Bench's scoring written from the spec (`lctg-spec.md` §4-§6), kept apart
from pfgen_fast's code: the checks of one generation, the judge's reply parsing, and the
score files the benchmark's scripts write and read back (its `.txt` files with 3 decimals)."""

from __future__ import annotations

REMOVER_FAILURE = "Invalid Error"
SPEC_BLANKS = frozenset(" \u3000\n\t")


def no_blanks(text: str) -> str:
    return "".join(ch for ch in text if ch not in SPEC_BLANKS)


def spec_format(raw: str, cleaned: str) -> bool | None:
    if cleaned == REMOVER_FAILURE:
        return False
    r, k = no_blanks(raw), no_blanks(cleaned)
    if not len(k) > 10:
        return None  # the spec's function falls off its end
    return r[:10] == k[:10] and r[-10:] == k[-10:]


def spec_char_count(cleaned: str, low: int, high: int) -> bool:
    if cleaned == REMOVER_FAILURE:
        return False
    return len(cleaned) >= low and len(cleaned) <= high


def spec_keyword(cleaned: str, keyword: str) -> bool:
    return cleaned != REMOVER_FAILURE and cleaned.find(keyword) >= 0


def spec_prohibited(cleaned: str, word: str) -> bool:
    return cleaned != REMOVER_FAILURE and cleaned.find(word) < 0


def spec_judge_label(first_reply: str, retry_reply: str | None) -> bool | str:
    """The quality label from the first reply and, when it was not 適切/不適切, the retry's."""
    first = no_blanks(first_reply)
    if first in ("適切", "不適切"):
        return first == "適切"
    assert retry_reply is not None
    second = no_blanks(retry_reply)
    if second in ("True", "False"):
        return second == "True"
    return second


def ctg_score_file(results: dict[str, list[bool | None]]) -> str:
    """eval_ctg.py's score file of one iteration: sum of the column (None skipped) over the
    number of joined rows, with 3 decimals."""
    names = {
        "format": "Format",
        "char_count": "Char count",
        "keyword": "Keyword",
        "prohibited_word": "Prohibited word",
    }
    lines = []
    for constraint, column in results.items():
        total = 0
        for value in column:
            if value is not None:
                total += int(value)
        lines.append(f"{names[constraint]}: {total / len(column):.3f}")
    return "\n".join(lines) + "\n"


def quality_all_acc(labels: list[list[bool | str]]) -> str:
    """eval_quality.py's All-Acc line for one constraint (labels[iteration][row])."""
    accs = []
    for iteration in labels:
        kept = [label for label in iteration if isinstance(label, bool)]
        accs.append(kept.count(True) / len(kept))
    return f"All-Acc: {(accs[0] + accs[1] + accs[2]) / 3:.3f}"


def reference_table(
    ctg: dict[str, list[list[bool | None]]], quality: dict[str, list[list[bool | str]]]
) -> dict[str, str]:
    """get_scores.py's row (cells as strings): ctg[constraint][iteration][row] and
    quality[constraint][iteration][row], through the text files the scripts write."""
    files = [ctg_score_file({c: ctg[c][i] for c in ctg}) for i in range(3)]
    read_back: dict[str, list[float]] = {}
    for text in files:
        for line in text.splitlines():
            name, value = line.split(": ")
            read_back.setdefault(name, []).append(float(value))
    names = {"Format": "Format", "Char count": "C-count", "Keyword": "Keyword"}
    names["Prohibited word"] = "P-word"
    means = {names[n]: (v[0] + v[1] + v[2]) / 3 for n, v in read_back.items()}
    quals = {
        label: float(quality_all_acc(quality[c]).split(": ")[1])
        for c, label in zip(ctg, ["Format", "C-count", "Keyword", "P-word"], strict=True)
    }
    row: dict[str, str] = {}
    for label in ["Format", "C-count", "Keyword", "P-word"]:
        row[f"{label}-ctg"] = f"{means[label]:.3f}"
        row[f"{label}-qual"] = f"{quals[label]:.3f}"
    avg_ctg = (means["Format"] + means["C-count"] + means["Keyword"] + means["P-word"]) / 4
    avg_qual = (quals["Format"] + quals["C-count"] + quals["Keyword"] + quals["P-word"]) / 4
    row["Avg-ctg"] = f"{avg_ctg:.3f}"
    row["Avg-qual"] = f"{avg_qual:.3f}"
    return row
