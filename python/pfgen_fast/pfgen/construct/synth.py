"""Synthetic candidate answers for benchmarks and tests of `build-refs`.

A character 5-gram model (4 characters of context) of a question's reference answers, all
sources pooled, generates answers from a start context to an end marker. Its answers recombine
the references' wording, and every 5-gram of a clean answer is one of the references'. Lengths
vary around 100: an end drawn before 70 characters is drawn again a few times, after 90 an
answer ends where it can with high chance, and at 200 it stops. Noise then replaces a few
characters with random characters of the references' alphabet, so some answers hold rare
5-grams, as real candidates do. Deterministic for a seed.
"""

from __future__ import annotations

import lzma
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import polars as pl

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import replaced_atomically
from pfgen_fast.pfgen.data import Question

CONTEXT = 4
# Context padding and end marker: control characters, absent from the answers.
START, END = "\x02", "\x03"
MAX_LENGTH = 200
# Before MIN_LENGTH characters, an end is drawn again up to EARLY_END_REDRAWS times, so that
# fewer answers stop after their first sentence.
MIN_LENGTH = 70
EARLY_END_REDRAWS = 3
# From LATE_LENGTH characters on, an answer that can end here ends with this extra chance.
LATE_LENGTH = 90
LATE_END_CHANCE = 0.9
# Share of characters replaced by a random character.
NOISE_RATE = 0.002
CHUNK = 100_000


class CharModel:
    """Transitions of the model as flat arrays: the edges of state s are `start[s]:start[s+1]`,
    with cumulative probabilities shifted by s (`key`), so that one `searchsorted` of
    `s + uniform` samples the next edge of many states at once."""

    def __init__(self, answers: list[str]) -> None:
        counts: Counter[tuple[str, str]] = Counter()
        for answer in answers:
            padded = START * CONTEXT + answer + END
            for i in range(CONTEXT, len(padded)):
                counts[padded[i - CONTEXT : i], padded[i]] += 1
        contexts = sorted({context for context, _ in counts})
        state_of = {context: index for index, context in enumerate(contexts)}
        edges = sorted(counts.items(), key=lambda item: (state_of[item[0][0]], item[0][1]))
        self.start_state = state_of[START * CONTEXT]
        self.edge_char = np.array([ord(char) for (_, char), _ in edges], dtype=np.uint32)
        self.edge_next = np.array(
            [-1 if char == END else state_of[context[1:] + char] for (context, char), _ in edges],
            dtype=np.int64,
        )
        states = np.array([state_of[context] for (context, _), _ in edges], dtype=np.int64)
        weights = np.array([count for _, count in edges], dtype=np.float64)
        totals = np.bincount(states, weights=weights)
        cumulative = np.cumsum(weights) - np.concatenate(([0.0], np.cumsum(totals)))[states]
        self.key = states + cumulative / totals[states]
        # The last edge of a state ends exactly at s + 1, whatever the rounding.
        last = np.r_[np.flatnonzero(np.diff(states)), len(states) - 1]
        self.key[last] = states[last] + 1.0
        self.end_edge = np.full(len(contexts), -1, dtype=np.int64)
        ends = np.flatnonzero(self.edge_next < 0)
        self.end_edge[states[ends]] = ends
        self.alphabet = np.array(sorted({ord(c) for a in answers for c in a}), dtype=np.uint32)

    def sample(self, count: int, rng: np.random.Generator) -> list[str]:
        """`count` answers (at most MAX_LENGTH characters), noise included."""
        chars = np.zeros((count, MAX_LENGTH), dtype=np.uint32)
        state = np.full(count, self.start_state, dtype=np.int64)
        active = np.arange(count)
        for position in range(MAX_LENGTH):
            if len(active) == 0:
                break
            edge = np.searchsorted(self.key, state[active] + rng.random(len(active)), "right")
            for _ in range(EARLY_END_REDRAWS if position < MIN_LENGTH else 0):
                early = np.flatnonzero(self.edge_next[edge] < 0)
                draws = state[active[early]] + rng.random(len(early))
                edge[early] = np.searchsorted(self.key, draws, "right")
            if position >= LATE_LENGTH:
                can_end = self.end_edge[state[active]]
                stop = (can_end >= 0) & (rng.random(len(active)) < LATE_END_CHANCE)
                edge[stop] = can_end[stop]
            nxt = self.edge_next[edge]
            going = nxt >= 0
            active, edge = active[going], edge[going]
            chars[active, position] = self.edge_char[edge]
            state[active] = nxt[going]
        noisy = (rng.random(chars.shape) < NOISE_RATE) & (chars != 0)
        chars[noisy] = rng.choice(self.alphabet, size=int(noisy.sum()))
        # A row of code points viewed as one fixed-width string; numpy drops the trailing NULs.
        return chars.view(f"<U{MAX_LENGTH}").ravel().tolist()


def synthetic_answers(question: Question, count: int, seed: int) -> Iterator[list[str]]:
    """`count` synthetic answers to `question`, in chunks."""
    references = [answer for answers in question.answers.values() for answer in answers]
    if not references:
        raise PfgenError(f"{question.path}: no reference answers to model")
    model = CharModel(references)
    rng = np.random.default_rng(seed)
    for first in range(0, count, CHUNK):
        yield model.sample(min(CHUNK, count - first), rng)


def write_candidates(path: Path, question: Question, chunks: Iterator[list[str]]) -> int:
    """Writes JSON lines (`.jsonl`, `.jsonl.xz`) or Parquet atomically; returns the count."""
    written = 0
    with replaced_atomically(path) as temporary:
        if path.suffix == ".parquet":
            answers = [answer for chunk in chunks for answer in chunk]
            written = len(answers)
            frame = pl.DataFrame({"question": question.question, "answer": answers})
            frame.write_parquet(temporary)
        else:
            opener = lzma.open if path.name.endswith(".xz") else open
            prefix = b'{"question":' + orjson.dumps(question.question) + b',"answer":'
            with opener(temporary, "wb") as out:
                for chunk in chunks:
                    out.write(b"".join(prefix + orjson.dumps(a) + b"}\n" for a in chunk))
                    written += len(chunk)
    return written
