"""The two MeCab tokenisations of llm-jp-eval-mm, and batches of texts as token ids.

ROUGE-L: emoji removed, NFKC (or neologdn), whitespace collapsed, then MeCab with unidic-lite
(`-Owakati`), the tokens fugashi gives. BLEU (jdocqa): MeCab with the IPA dictionary, as sacrebleu's
`ja-mecab` tokenizer builds it, on the stripped text. Both need the `pfgen_fast[mm]` extra.
"""

from __future__ import annotations

import multiprocessing
import re
import sys
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from pfgen_fast.common.cpus import usable_cpus
from pfgen_fast.common.errors import PfgenError

MM_EXTRA_HINT = "install the extra: pip install 'pfgen_fast[mm]'"
# The ranges the original deletes after dropping single-code-point emoji.
EMOJI_RANGES = re.compile(
    "[\U0001f600-\U0001f64f\U0001f300-\U0001f5ff\U0001f680-\U0001f6ff"
    "\U0001f1e0-\U0001f1ff\u2702-\u27b0]+"
)
# Half-width and full-width forms, the code points Japanese text most often needs NFKC for.
WIDTH_FORMS = re.compile("[\uff00-\uffef]+")
# sacrebleu's check that MeCab loaded the IPA dictionary (its number of entries).
IPADIC_SIZE = 392126
# Distinct texts per worker below which MeCab runs in this process only (a forked worker
# costs a few milliseconds; MeCab holds the GIL, so threads would not help).
TEXTS_PER_WORKER = 1000
# The parse function and texts forked workers read (inherited, not sent).
_pending: tuple[Callable[[str], str], list[str]] | None = None


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"this metric needs the Python package {module}: {MM_EXTRA_HINT}"
        raise PfgenError(message) from None


@lru_cache(maxsize=1)
def _single_emoji() -> tuple[frozenset[str], dict[int, None], re.Pattern[str]]:
    """What `emoji.is_emoji` accepts as one code point (the keys of one code point in the
    emoji package's table), as a set and as a `str.translate` table deleting them; and a
    pattern finding any code point either deletion could remove (those of the set in the
    Basic Multilingual Plane, the BMP range of EMOJI_RANGES, every code point above the BMP),
    so that texts without one skip both deletions."""
    singles = frozenset(key for key in _require("emoji").EMOJI_DATA if len(key) == 1)
    basic = sorted(ord(key) for key in singles if ord(key) <= 0xFFFF)
    spans: list[list[int]] = []
    for point in basic:
        if spans and spans[-1][1] + 1 == point:
            spans[-1][1] = point
        else:
            spans.append([point, point])
    members = "".join(f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in spans)
    candidates = re.compile(f"[{members}\u2702-\u27b0\U00010000-\U0010ffff]")
    return singles, dict.fromkeys(map(ord, singles)), candidates


@lru_cache(maxsize=1)
def _unidic_tagger() -> Any:
    """MeCab with the unidic-lite dictionary, as fugashi's default Tagger loads it when the
    full unidic package is absent (named here, so an installed unidic changes nothing). The
    MeCab binding of mecab-python3 is used: same engine and dictionary, same tokens."""
    mecab = _require("MeCab")
    dicdir = _require("unidic_lite").DICDIR
    return mecab.Tagger(f'-Owakati -d "{dicdir}" -r "{dicdir}/mecabrc"')


@lru_cache(maxsize=1)
def _ipadic_tagger() -> Any:
    mecab = _require("MeCab")
    ipadic = _require("ipadic")
    tagger = mecab.Tagger(ipadic.MECAB_ARGS + " -Owakati")
    if tagger.dictionary_info().size != IPADIC_SIZE:
        raise PfgenError("MeCab did not load the IPA dictionary of the ipadic package")
    return tagger


def remove_emoji(text: str) -> str:
    """Drops every code point the emoji package calls an emoji (one code point at a time, so
    joiners and variation selectors of longer sequences stay), then the emoji ranges."""
    singles, deletions, candidates = _single_emoji()
    if candidates.search(text) is None:
        return text
    if not singles.isdisjoint(text):
        text = text.translate(deletions)
    return EMOJI_RANGES.sub("", text)


def rouge_normalize(text: str, use_neologdn: bool) -> str:
    """The text as the ROUGE-L tokenizer hands it to MeCab."""
    text = remove_emoji(text)
    if use_neologdn:
        text = _require("neologdn").normalize(text)
    else:
        text = nfkc(text)
    return " ".join(text.split())


def _nfkc_match(match: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", match.group())


def nfkc(text: str) -> str:
    """`unicodedata.normalize("NFKC", text)`. Runs of width forms are normalised first, so that
    the whole text then usually passes NFKC's quick check; the result is the same, because
    replacing any part of a text by its NFKC form leaves the text's NFKD, and so its NFKC,
    unchanged."""
    return unicodedata.normalize("NFKC", WIDTH_FORMS.sub(_nfkc_match, text))


class TextTooLong(PfgenError):
    """A text MeCab refuses to tokenise ("too long sentence": a limit on the lattice of one
    sentence, reached near a million characters of Japanese, far sooner for a run of Latin
    letters). llm-jp-eval-mm's tokenizers fail on it too; cutting it would change the tokens
    near each cut. `text` is the text as given, so that the caller can name its item."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(text, reason)
        self.text = text
        self.reason = reason

    def __str__(self) -> str:
        return (
            f"MeCab cannot tokenise a text of {len(self.text):,} characters "
            f"({self.reason.rstrip('.')})"
        )


def mecab_parse(tagger: Any, text: str, given: str) -> str:
    """`tagger.parse(text)`; TextTooLong (naming `given`, the text before normalisation) when
    MeCab returns nothing."""
    parsed = tagger.parse(text)
    if parsed is None:
        raise TextTooLong(given, tagger.what() or "no output")
    return str(parsed)


def rouge_parse(text: str, use_neologdn: bool = False) -> str:
    """MeCab's output for the ROUGE-L tokens (tokens separated by whitespace)."""
    return mecab_parse(_unidic_tagger(), rouge_normalize(text, use_neologdn), text)


def bleu_parse(text: str) -> str:
    """MeCab's output for sacrebleu's ja-mecab tokens of a segment (which it right-strips,
    then strips)."""
    return mecab_parse(_ipadic_tagger(), text.strip(), text)


def check_neologdn() -> None:
    """A PfgenError unless neologdn can be imported (for --neologdn)."""
    _require("neologdn")


def _parse_range(bounds: tuple[int, int]) -> list[str] | TextTooLong:
    """The outputs of a range of the pending texts, or the text MeCab refused (returned, not
    raised: the pool then ends as usual, with no worker stopped mid-task)."""
    assert _pending is not None
    parse, texts = _pending
    try:
        return [parse(text) for text in texts[bounds[0] : bounds[1]]]
    except TextTooLong as error:
        return error


def parse_all(parse: Callable[[str], str], texts: list[str]) -> list[str]:
    """`parse` of every text; large batches on every usable CPU: this process takes one share,
    forked workers the others, inheriting the dictionary already loaded here (Linux only;
    elsewhere all in this process)."""
    workers = min(usable_cpus(), len(texts) // TEXTS_PER_WORKER)
    if workers < 2 or not sys.platform.startswith("linux"):
        return [parse(text) for text in texts]
    global _pending
    parse(texts[0])
    step = -(-len(texts) // workers)
    bounds = [(start, min(start + step, len(texts))) for start in range(0, len(texts), step)]
    _pending = (parse, texts)
    try:
        with multiprocessing.get_context("fork").Pool(workers - 1) as pool:
            others = pool.map_async(_parse_range, bounds[1:])
            first = _parse_range(bounds[0])
            parts = [first, *others.get()]
            pool.close()
            pool.join()
    finally:
        _pending = None
    outputs = []
    for part in parts:
        if isinstance(part, TextTooLong):
            raise part
        outputs.extend(part)
    return outputs


class ParsedBatch:
    """Distinct texts through a tokenizer whose output separates tokens by whitespace; the
    core splits the outputs (as `str.split()`) and numbers the tokens."""

    def __init__(self, parse: Callable[[str], str]) -> None:
        self._parse = parse
        self._index: dict[str, int] = {}

    def indexes(self, texts: Sequence[str]) -> np.ndarray:
        index = self._index
        numbers = (index.setdefault(text, len(index)) for text in texts)
        return np.fromiter(numbers, dtype=np.uint64, count=len(texts))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids uint32, offsets uint64) as the core takes them."""
        from pfgen_fast._core import evalmm as core_evalmm

        return core_evalmm.token_ids(parse_all(self._parse, list(self._index)))


class TokenBatch:
    """Distinct texts as token-id sequences (tokens from `tokenize`, e.g. characters), back to
    back, for the Rust core: each distinct text is tokenised once, each distinct token gets
    one id."""

    def __init__(self, tokenize: Callable[[str], Sequence[str]]) -> None:
        self._tokenize = tokenize
        self._index: dict[str, int] = {}
        self._vocabulary: dict[str, int] = {}
        self._ids: list[int] = []
        self._offsets: list[int] = [0]

    def add(self, text: str) -> int:
        """The index of `text` in the batch (tokenised on first sight)."""
        index = self._index.get(text)
        if index is not None:
            return index
        vocabulary = self._vocabulary
        for token in self._tokenize(text):
            token_id = vocabulary.get(token)
            if token_id is None:
                token_id = vocabulary[token] = len(vocabulary)
            self._ids.append(token_id)
        self._offsets.append(len(self._ids))
        index = self._index[text] = len(self._index)
        return index

    def indexes(self, texts: Sequence[str]) -> np.ndarray:
        return np.fromiter((self.add(text) for text in texts), dtype=np.uint64, count=len(texts))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids uint32, offsets uint64) as the core takes them."""
        return np.asarray(self._ids, dtype=np.uint32), np.asarray(self._offsets, dtype=np.uint64)
