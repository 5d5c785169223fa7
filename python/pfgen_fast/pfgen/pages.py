"""Per-run README.md pages in the benchmark's published layout (scoring-spec.md §8).

The published pages are the reference: header, question table, config, then each question's
scores and samples. A sample character is bold when a 3-gram covering it is in more than 10%
of the question's reference answers, and struck through when in fewer than 0.5%.
"""

from __future__ import annotations

import html
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.common.cpus import usable_cpus
from pfgen_fast.common.errors import InputError
from pfgen_fast.pfgen.data import Question
from pfgen_fast.pfgen.exactness import py_sum
from pfgen_fast.pfgen.results import ResultChecker, RunResult, ValidTrials

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


def code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


# Marking works on code points: a special character becomes the first character of its escape
# and the rest of the escape is inserted after it, like the tags around runs and the line
# breaks between texts (sample text has none left once escaped).
ESCAPE_FIRSTS = code_points("".join(escape[0] for escape in ESCAPES.values()))
INSERTS = [escape[1:] for escape in ESCAPES.values()] + ["</b>", "</s>", "\n", "<b>", "<s>"]
# Per ASCII code: the index of its escape in INSERTS, -1 for a character written as it is.
ESCAPE_INDEX = np.full(0x80, -1)
ESCAPE_INDEX[[ord(char) for char in ESCAPES]] = range(len(ESCAPES))
CLOSE_BOLD, CLOSE_STRUCK, TEXT_END, OPEN_BOLD, OPEN_STRUCK = range(len(ESCAPES), len(INSERTS))
INSERT_CODES = code_points("".join(INSERTS))
INSERT_SIZES = np.array([len(insert) for insert in INSERTS])
INSERT_STARTS = np.cumsum(INSERT_SIZES) - INSERT_SIZES


def ordered_sources(by_source: Collection[str]) -> list[str]:
    """The known sources in display order, then any others in their own order."""
    known = [key for key in SOURCE_NAMES if key in by_source]
    return known + [key for key in by_source if key not in SOURCE_NAMES]


@cache
def sources_format(keys: tuple[str, ...], named: bool) -> str:
    """How the pages write the values of sources with these keys, given in this order: in
    display order, `P:{1:.4f}+R:{0:.4f}` for ("R", "P"), or `PFN:{1:.4f}+RAG:{0:.4f}` named."""
    parts = []
    for key in ordered_sources(keys):
        name = SOURCE_NAMES.get(key, key) if named else key
        parts.append(f"{name.replace('{', '{{').replace('}', '}}')}:{{{keys.index(key)}:.4f}}")
    return "+".join(parts)


def format_sources(by_source: Mapping[str, float], named: bool) -> str:
    """`P:0.3192+R:0.0325`, or `PFN:0.3192+RAG:0.0325` named. The format is made once per set
    of sources (all samples of a question share theirs)."""
    return sources_format(tuple(by_source), named).format(*by_source.values())


def source_breakdown(by_source: Mapping[str, float], legacy_sum: bool) -> str:
    """`0.775 (PFN:0.3192+Titech:0.1994)`: the sum, then each source. The benchmark adds the
    values in their result.json key order with its `sum()` (see `pfgen_fast.pfgen.exactness`),
    which decides the last digit now and then."""
    total = py_sum(list(by_source.values()), legacy_sum)
    return f"{total:.3f} ({format_sources(by_source, named=True)})"


def score_lines(scores: Mapping[str, Any], legacy_sum: bool) -> list[str]:
    lines = []
    for measure in ("fluency", "truthfulness"):
        breakdown = source_breakdown(scores[measure], legacy_sum)
        lines.append(f"  - {measure.capitalize()}: {breakdown}")
    return [*lines, f"  - Helpfulness: {scores['helpfulness']:.3f}"]


def sample_heading(scores: Mapping[str, Any]) -> str:
    """`0.548 (=avg(f=(R:0.8114), t=(R:0.8316), h=0.000 [22回, 鳥居*0.5]))`: the keyword
    rules missed, with their factor unless it is zero."""
    missed = [
        f"{name}*{factor:.1f}" if factor > 0 else name
        for name, factor in scores["helpfulness_results"]
    ]
    suffix = f" [{', '.join(missed)}]" if missed else ""
    fluency = format_sources(scores["fluency"], named=False)
    truthfulness = format_sources(scores["truthfulness"], named=False)
    return (
        f"{scores['average']:.3f} (=avg(f=({fluency}), t=({truthfulness}), "
        f"h={scores['helpfulness']:.3f}{suffix}))"
    )


def character_kinds(counts: np.ndarray, num_references: int) -> np.ndarray:
    """Per character, from the number of reference answers holding a 3-gram that covers it:
    1 bold (more than 10% of them), -1 struck through (fewer than 0.5%), 0 plain."""
    counts = counts.astype(np.int64)
    kinds = (counts * BOLD_DIVISOR > num_references).astype(np.int8)
    kinds[counts * STRIKE_DIVISOR < num_references] = -1
    return kinds


def with_inserts(codes: np.ndarray, positions: np.ndarray, inserts: np.ndarray) -> np.ndarray:
    """`codes` with INSERTS[inserts[k]] before index positions[k] for every k; the inserts at
    one index keep their order in `positions`."""
    order = np.argsort(positions, kind="stable")
    positions, inserts = positions[order], inserts[order]
    sizes = INSERT_SIZES[inserts]
    # Each inserted code point's index in INSERT_CODES: its insert's start plus its index
    # within the insert.
    within = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    values = INSERT_CODES[np.repeat(INSERT_STARTS[inserts], sizes) + within]
    return np.insert(codes, np.repeat(positions, sizes), values)


def mark_texts(texts: Sequence[str], kinds: np.ndarray) -> list[str]:
    """The texts, each escaped, with <b> around its runs of kind 1 and <s> around its runs of
    kind -1; `kinds` has one per character of the texts laid end to end. All texts are marked
    together in numpy, as code points."""
    if not texts:
        return []
    # A run starts where the kind changes or a text begins; runs never span two texts.
    text_ends = np.cumsum([len(text) for text in texts])[:-1]
    run_start = np.ones(len(kinds), dtype=bool)
    run_start[1:] = kinds[1:] != kinds[:-1]
    run_start[text_ends[text_ends < len(kinds)]] = True
    starts = np.flatnonzero(run_start)
    ends = np.append(starts, len(kinds))[1:]
    bold, struck = kinds[starts] == 1, kinds[starts] == -1
    codes = code_points("".join(texts)).copy()
    # All escaped characters are ASCII and DEL is not one: other characters count as DEL here.
    escape_of = ESCAPE_INDEX[np.minimum(codes, 0x7F)]
    special = np.flatnonzero(escape_of >= 0)
    escapes = escape_of[special]
    codes[special] = ESCAPE_FIRSTS[escapes]
    # At one index: the rest of an escape, closing tags, a text's end, then opening tags.
    inserted = [
        (special + 1, escapes),
        (ends[bold], CLOSE_BOLD),
        (ends[struck], CLOSE_STRUCK),
        (text_ends, TEXT_END),
        (starts[bold], OPEN_BOLD),
        (starts[struck], OPEN_STRUCK),
    ]
    positions = np.concatenate([at for at, _ in inserted])
    inserts = np.concatenate([np.broadcast_to(what, at.shape) for at, what in inserted])
    marked = with_inserts(codes, positions, inserts)
    return marked.tobytes().decode("utf-32-le").split("\n")


class SampleCoverage:
    """For the sample texts of some runs, per question: the kind of every character (see
    character_kinds), from the largest number of the question's reference answers holding a
    3-gram that covers it. One pass over each question's references serves all pages
    (questions in parallel: the core releases the GIL). Runs whose samples are malformed, or
    questions not in `questions`, are left out: rendering their pages reports them."""

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
        self._kinds: dict[tuple[str, str], bytes] = {}

        def count(qid: str) -> None:
            references = [a for answers in questions[qid].answers.values() for a in answers]
            question_texts = [t for t in texts[qid] if isinstance(t, str)]
            counts = core_pfgen.trigram_coverage(references, question_texts)
            # As bytes: a page joins the kinds of its hundreds of texts at C speed.
            kinds = character_kinds(counts, len(references)).tobytes()
            start = 0
            for text in question_texts:
                self._kinds[qid, text] = kinds[start : start + len(text)]
                start += len(text)

        with ThreadPoolExecutor(max_workers=usable_cpus()) as pool:
            list(pool.map(count, [qid for qid in texts if qid in questions]))

    def kinds(self, question_id: str, text: str) -> bytes:
        """The kind of each character of the text, as int8 bytes."""
        return self._kinds[question_id, text]


def marked_texts(
    question_texts: Sequence[tuple[str, Sequence[str]]], coverage: SampleCoverage
) -> list[str]:
    """The texts of every (question id, texts) group, in order, each escaped, with <b> around
    its common and <s> around its rare characters. The texts of a page are marked together."""
    texts = [text for _, group in question_texts for text in group]
    kinds = b"".join(coverage.kinds(qid, text) for qid, group in question_texts for text in group)
    return mark_texts(texts, np.frombuffer(kinds, dtype=np.int8))


def render_page(run: RunResult, coverage: SampleCoverage, legacy_sum: bool = False) -> str:
    """The README.md of a run; `coverage` holds the kinds of its samples' characters;
    `legacy_sum`: the totals added as on Python <= 3.11. The samples are checked only when
    they fail to render (checking all costs as much as rendering); the error then names the
    field."""
    try:
        return _render_page(run, coverage, legacy_sum)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        ResultChecker(run.path).check(run.data)
        raise InputError(f"{run.path}: cannot render the page: {error!r}") from None


def _render_page(run: RunResult, coverage: SampleCoverage, legacy_sum: bool) -> str:
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
        *valid_trials_lines(run.valid_trials()),
        *score_lines(data["scores"], legacy_sum),
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
            *valid_trials_lines(run.valid_trials(qid)),
            *score_lines(question["scores"], legacy_sum),
            f"- Length: {question['length']:.1f} (±{question['length_std']})",
            "",
            "<dl>",
        ]
        for sample in question["samples"]:
            lines.append(f"<dt>{sample_heading(sample['scores'])}</dt>")
            lines.append(f"<dd>{next(marked)}</dd>")
        lines += ["</dl>", ""]
    return "\n".join(lines) + "\n"


def valid_trials_lines(valid: ValidTrials | None) -> list[str]:
    """The line saying how many trials have a generated answer, where some were given up."""
    if valid is None:
        return []
    return [f"- Valid trials: {valid} (answers the runner gave up on are not scored)"]


def page_is_current(readme: Path, sha1: str) -> bool:
    """Whether the README was made from this exact result.json (its hash comment is near the
    top)."""
    try:
        with readme.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return HASH_COMMENT.format(sha1).encode() in head
