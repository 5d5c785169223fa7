"""The two MeCab tokenisations of llm-jp-eval-mm, and batches of texts as token ids.

ROUGE-L: emoji removed, NFKC (or neologdn), whitespace collapsed, then MeCab with unidic-lite
through fugashi (`-Owakati`). BLEU (jdocqa): MeCab with the IPA dictionary, as sacrebleu's
`ja-mecab` tokenizer builds it, on the stripped text. Both need the `pfgen_fast[mm]` extra.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from pfgen_fast.common.errors import PfgenError

MM_EXTRA_HINT = "install the extra: pip install 'pfgen_fast[mm]'"
# The ranges the original deletes after dropping single-code-point emoji.
EMOJI_RANGES = re.compile(
    "[\U0001f600-\U0001f64f\U0001f300-\U0001f5ff\U0001f680-\U0001f6ff"
    "\U0001f1e0-\U0001f1ff\u2702-\u27b0]+"
)
# sacrebleu's check that MeCab loaded the IPA dictionary (its number of entries).
IPADIC_SIZE = 392126


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"this metric needs the Python package {module}: {MM_EXTRA_HINT}"
        raise PfgenError(message) from None


@lru_cache(maxsize=1)
def _emoji_is_emoji() -> Callable[[str], bool]:
    return _require("emoji").is_emoji


@lru_cache(maxsize=1)
def _unidic_tagger() -> Any:
    fugashi = _require("fugashi")
    unidic_lite = _require("unidic_lite")
    dicdir = unidic_lite.DICDIR
    return fugashi.Tagger(f'-Owakati -d "{dicdir}" -r "{dicdir}/mecabrc"')


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
    is_emoji = _emoji_is_emoji()
    kept = "".join(c for c in text if not is_emoji(c))
    return EMOJI_RANGES.sub("", kept)


def rouge_normalize(text: str, use_neologdn: bool) -> str:
    """The text as the ROUGE-L tokenizer hands it to MeCab."""
    text = remove_emoji(text)
    if use_neologdn:
        text = _require("neologdn").normalize(text)
    else:
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())


def rouge_tokens(text: str, use_neologdn: bool = False) -> list[str]:
    return _unidic_tagger().parse(rouge_normalize(text, use_neologdn)).split()


def bleu_tokens(text: str) -> list[str]:
    """sacrebleu's ja-mecab tokens of a segment (which it right-strips, then strips)."""
    return _ipadic_tagger().parse(text.strip()).split()


def check_neologdn() -> None:
    """A PfgenError unless neologdn can be imported (for --neologdn)."""
    _require("neologdn")


class TokenBatch:
    """Distinct texts as token-id sequences, back to back, for the Rust core: each distinct text
    is tokenised once, each distinct token gets one id."""

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
