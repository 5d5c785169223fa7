"""Per-run README.md pages in the benchmark's published layout (scoring spec §8).

The published pages are the reference: header, question table, config, then each question's
scores and samples. A sample character is bold when a 3-gram covering it is in more than 10%
of the question's reference answers, and struck through when in fewer than 0.5%.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from pfgen_fast import _core
from pfgen_fast.data import Question
from pfgen_fast.errors import InputError

# Display names of the reference sources, in the order the pages list them.
SOURCE_NAMES = {"P": "PFN", "T": "Titech", "S": "Stockmark", "R": "RAG"}
# Bold above 10% of the reference answers, struck through below 0.5% (as 1/10 and 1/200).
BOLD_DIVISOR = 10
STRIKE_DIVISOR = 200
HASH_COMMENT = "<!-- result.json: {} -->"


def _escape_table() -> dict[str, str]:
    """How the pages write special characters of sample text: control characters spelled
    out (`\\n`), HTML escapes, and Markdown's special characters as numeric references."""
    table = {char: html.escape(char) for char in "&<>\"'"}
    table.update({char: f"&#{ord(char)};" for char in "\\.-*_()#{}|[]`+!"})
    spelled = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
    for code in range(0x20):
        text = spelled.get(chr(code), f"\\x{code:02x}")
        table[chr(code)] = text.replace("\\", "&#92;")
    return table


ESCAPES = _escape_table()
SPECIAL = re.compile("[" + re.escape("".join(ESCAPES)) + "]")


# A run of characters by kind: 1 bold, -1 struck through, 0 plain.
RUN_FORMATS = {1: "<b>{}</b>", -1: "<s>{}</s>", 0: "{}"}


def escape_text(text: str) -> str:
    return SPECIAL.sub(lambda match: ESCAPES[match.group()], text)


@dataclass(frozen=True)
class RunResult:
    """A result.json, checked for the fields the pages and the leaderboard use."""

    path: Path
    sha1: str
    data: dict[str, Any]

    @property
    def config(self) -> dict[str, Any]:
        return self.data.get("config") or {}

    @property
    def model(self) -> str:
        """The model named in the config, else the run's directory."""
        model = self.config.get("model")
        return model if isinstance(model, str) else str(self.path.parent)

    @property
    def mode(self) -> str:
        mode = self.config.get("mode")
        return mode if isinstance(mode, str) else ""


def load_result(path: Path) -> RunResult:
    """Reads and checks one result.json; errors name the file and the field."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON: {error}") from None
    ResultChecker(path).check(data, with_samples=False)
    return RunResult(path, hashlib.sha1(raw).hexdigest(), data)


def load_results(paths: Sequence[Path]) -> tuple[list[RunResult], list[str]]:
    """The result.json files that can be read and checked, and why each other one cannot."""
    runs: list[RunResult] = []
    errors: list[str] = []
    for path in paths:
        try:
            runs.append(load_result(path))
        except InputError as error:
            errors.append(str(error))
    return runs, errors


class ResultChecker:
    """Checks the fields of a result.json that reports read; errors name the field's path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> InputError:
        return InputError(f"{self.path}: field '{where}' {problem}")

    def get(self, container: dict[str, Any], key: str, kind: type, where: str) -> Any:
        name = f"{where}.{key}" if where else key
        if key not in container:
            raise self.fail(name, "is missing")
        value = container[key]
        if kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(name, "must be a number")
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(name, "must be an integer")
        elif not isinstance(value, kind):
            raise self.fail(
                name, f"must be {'an object' if kind is dict else 'a ' + kind.__name__}"
            )
        return value

    def check(self, data: Any, with_samples: bool = True) -> None:
        if not isinstance(data, dict):
            raise InputError(f"{self.path}: expected a JSON object")
        if data.get("config") is not None:
            self.get(data, "config", dict, "")
        self.get(data, "num_trials", int, "")
        for name in ("score", "score_std", "length", "length_std"):
            self.get(data, name, float, "")
        self.scores(self.get(data, "scores", dict, ""), "scores")
        questions = self.get(data, "questions", dict, "")
        for qid in questions:
            question = self.get(questions, qid, dict, "questions")
            self.question(question, f"questions.{qid}", with_samples)

    def question(self, question: dict[str, Any], where: str, with_samples: bool) -> None:
        self.get(question, "question", str, where)
        for name in ("score", "score_std", "length", "length_std"):
            self.get(question, name, float, where)
        self.scores(self.get(question, "scores", dict, where), f"{where}.scores")
        samples = self.get(question, "samples", list, where)
        if not with_samples:
            return
        for index, sample in enumerate(samples):
            sample_where = f"{where}.samples[{index}]"
            if not isinstance(sample, dict):
                raise self.fail(sample_where, "must be an object")
            self.get(sample, "answer", str, sample_where)
            scores = self.get(sample, "scores", dict, sample_where)
            self.scores(scores, f"{sample_where}.scores")
            results = self.get(scores, "helpfulness_results", list, f"{sample_where}.scores")
            for item in results:
                if not (
                    isinstance(item, list)
                    and len(item) == 2
                    and isinstance(item[0], str)
                    and isinstance(item[1], (int, float))
                ):
                    raise self.fail(
                        f"{sample_where}.scores.helpfulness_results", "must hold [name, factor]"
                    )

    def scores(self, scores: dict[str, Any], where: str) -> None:
        for measure in ("fluency", "truthfulness"):
            by_source = self.get(scores, measure, dict, where)
            for source in by_source:
                self.get(by_source, source, float, f"{where}.{measure}")
        for measure in ("helpfulness", "average"):
            self.get(scores, measure, float, where)


def ordered_sources(by_source: Mapping[str, Any]) -> list[str]:
    """The known sources in display order, then any others in their own order."""
    known = [key for key in SOURCE_NAMES if key in by_source]
    return known + [key for key in by_source if key not in SOURCE_NAMES]


def source_breakdown(by_source: Mapping[str, float], sum_order: list[str]) -> str:
    """`0.775 (PFN:0.3192+Titech:0.1994)`: the sum, then each source. The order of the sum
    decides the last digit now and then: the pages add a question's sources in file order
    and the overall ones in display order."""
    parts = "+".join(
        f"{SOURCE_NAMES.get(key, key)}:{by_source[key]:.4f}" for key in ordered_sources(by_source)
    )
    return f"{sum(by_source[key] for key in sum_order):.3f} ({parts})"


def score_lines(scores: Mapping[str, Any], overall: bool) -> list[str]:
    lines = []
    for measure in ("fluency", "truthfulness"):
        by_source = scores[measure]
        order = ordered_sources(by_source) if overall else list(by_source)
        lines.append(f"  - {measure.capitalize()}: {source_breakdown(by_source, order)}")
    return [*lines, f"  - Helpfulness: {scores['helpfulness']:.3f}"]


def compact_sources(by_source: Mapping[str, float]) -> str:
    return "+".join(f"{key}:{by_source[key]:.4f}" for key in ordered_sources(by_source))


def sample_heading(scores: Mapping[str, Any]) -> str:
    """`0.548 (=avg(f=(R:0.8114), t=(R:0.8316), h=0.000 [22回, 鳥居*0.5]))`: the keyword
    rules missed, with their factor unless it is zero."""
    missed = [
        f"{name}*{factor:.1f}" if factor > 0 else name
        for name, factor in scores["helpfulness_results"]
    ]
    suffix = f" [{', '.join(missed)}]" if missed else ""
    return (
        f"{scores['average']:.3f} (=avg(f=({compact_sources(scores['fluency'])}), "
        f"t=({compact_sources(scores['truthfulness'])}), h={scores['helpfulness']:.3f}{suffix}))"
    )


class SampleCoverage:
    """For the sample texts of some runs, per question: for every character, the largest number
    of the question's reference answers holding a 3-gram that covers it. One pass over each
    question's references serves all pages (questions in parallel: the core releases the GIL).
    Runs whose samples are malformed, or questions not in `questions`, are left out: rendering
    their pages reports them."""

    def __init__(self, runs: Iterable[RunResult], questions: Mapping[str, Question]) -> None:
        texts: dict[str, dict[str, None]] = {}
        for run in runs:
            try:
                for qid, question in run.data["questions"].items():
                    samples = [sample["answer"] for sample in question["samples"]]
                    texts.setdefault(qid, {}).update(dict.fromkeys(samples))
            except (KeyError, TypeError, AttributeError):
                continue
        self.num_references = {
            qid: sum(len(answers) for answers in question.answers.values())
            for qid, question in questions.items()
        }
        self._coverage: dict[tuple[str, str], np.ndarray] = {}

        def count(qid: str) -> None:
            references = [a for answers in questions[qid].answers.values() for a in answers]
            question_texts = [t for t in texts[qid] if isinstance(t, str)]
            coverage = _core.trigram_coverage(references, question_texts)
            ends = np.cumsum([len(text) for text in question_texts])
            for text, part in zip(question_texts, np.split(coverage, ends[:-1]), strict=True):
                self._coverage[qid, text] = part

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            list(pool.map(count, [qid for qid in texts if qid in questions]))

    def of(self, question_id: str, text: str) -> np.ndarray:
        return self._coverage[question_id, text]


def marked_texts(
    question_texts: Sequence[tuple[str, Sequence[str]]], coverage: SampleCoverage
) -> list[str]:
    """The texts of every (question id, texts) group, in order, each escaped, with <b> around
    its common and <s> around its rare characters. The texts of a page are classified
    together in numpy; only the runs loop in Python."""
    texts = [text for _, group in question_texts for text in group]
    lengths = [len(text) for text in texts]
    df = np.concatenate(
        [np.zeros(0, dtype=np.uint32)]
        + [coverage.of(qid, text) for qid, group in question_texts for text in group]
    ).astype(np.int64)
    references = np.repeat(
        [coverage.num_references[qid] for qid, _ in question_texts],
        [sum(len(text) for text in group) for _, group in question_texts],
    ).astype(np.int64)
    kinds = (df * BOLD_DIVISOR > references).astype(np.int8)  # 1: bold
    kinds[df * STRIKE_DIVISOR < references] = -1  # -1: struck through, 0: plain
    # A run starts where the kind changes or a text begins; runs never span two texts.
    text_ends = np.cumsum(lengths, dtype=np.int64)
    run_start = np.ones(len(df), dtype=bool)
    run_start[1:] = kinds[1:] != kinds[:-1]
    run_start[text_ends[:-1][text_ends[:-1] < len(df)]] = True
    starts = np.flatnonzero(run_start)
    bounds = np.append(starts, len(df)).tolist()
    joined = "".join(texts)
    # Only the few runs holding a special character go through the escaping.
    specials = [match.start() for match in SPECIAL.finditer(joined)]
    needs_escape = np.zeros(len(starts), dtype=bool)
    needs_escape[np.searchsorted(starts, specials, side="right") - 1] = True
    pieces = [
        RUN_FORMATS[kind].format(escape_text(joined[start:end]) if escape else joined[start:end])
        for start, end, kind, escape in zip(
            bounds[:-1], bounds[1:], kinds[starts].tolist(), needs_escape.tolist(), strict=True
        )
    ]
    runs_before = np.searchsorted(starts, text_ends).tolist()
    return ["".join(pieces[a:b]) for a, b in zip([0, *runs_before[:-1]], runs_before, strict=True)]


def render_page(run: RunResult, coverage: SampleCoverage) -> str:
    """The README.md of a run; `coverage` holds its samples' 3-gram counts.
    The samples are checked only when they fail to render (checking all costs as much as
    rendering); the error then names the field."""
    try:
        return _render_page(run, coverage)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        ResultChecker(run.path).check(run.data)
        raise InputError(f"{run.path}: cannot render the page: {error!r}") from None


def _render_page(run: RunResult, coverage: SampleCoverage) -> str:
    data = run.data
    questions: dict[str, Any] = data["questions"]
    missing = sorted(set(questions) - set(coverage.num_references))
    if missing:
        raise InputError(f"{run.path}: questions not in the data directory: {', '.join(missing)}")
    marked = iter(
        marked_texts(
            [
                (qid, [sample["answer"] for sample in question["samples"]])
                for qid, question in questions.items()
            ],
            coverage,
        )
    )
    lines = [
        f"# Model: {run.model}",
        "",
        HASH_COMMENT.format(run.sha1),
        "",
        f"- Score: {data['scores']['average']:.3f} "
        f"(±{data['score_std']:.4f}/√{data['num_trials']})",
        *score_lines(data["scores"], overall=True),
        "## Questions",
        "",
        "| Question | Score | Length |",
        "|----------|-------|--------|",
    ]
    for qid, question in questions.items():
        lines.append(
            f"| [{qid}. {question['question']}](#{qid}) "
            f"| <code>{question['score']:.4f} (±{question['score_std']:.4f})</code> "
            f"| <code>{question['length']:.1f} (±{question['length_std']:.1f})</code> |"
        )
    config = json.dumps(data.get("config"), ensure_ascii=False)
    lines += ["", "## Config", "", "```json", config, "```", ""]
    for qid, question in questions.items():
        # The published pages print these standard deviations as Python writes the float.
        lines += [
            f'## <a name="{qid}"></a>{qid}. {question["question"]}',
            "",
            f"- Score: {question['scores']['average']:.3f} (±{question['score_std']})",
            *score_lines(question["scores"], overall=False),
            f"- Length: {question['length']:.1f} (±{question['length_std']})",
            "",
            "<dl>",
        ]
        for sample in question["samples"]:
            lines.append(f"<dt>{sample_heading(sample['scores'])}</dt>")
            lines.append(f"<dd>{next(marked)}</dd>")
        lines += ["</dl>", ""]
    return "\n".join(lines) + "\n"


def page_is_current(readme: Path, sha1: str) -> bool:
    """Whether the README was made from this exact result.json (its hash comment is near the
    top)."""
    try:
        with readme.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return HASH_COMMENT.format(sha1).encode() in head
