"""Reasoning in a reply's content: `--strip-reasoning`'s rule, what a judge reads its verdict
from, and the per-item reason for a reply without an answer."""

from __future__ import annotations

import argparse
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pfgen_fast.common.llm_options import ExtraBody
from pfgen_fast.common.reasoning import after_reasoning, strip_reasoning, unanswered


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("<think>A か B か</think>\n\nB", "B"),
        ("<THINK>x</Think> y ", "y"),
        ("前置き<think>a</think>答え<think>b</think>です", "前置き答えです"),
        ("<think>reasoning cut short", ""),
        ("answer <think>cut", ""),
        ("<think>a</think>B<think>cut", ""),
        ("reasoning the template opened</think>\nB", "B"),
        ("no reasoning at all ", "no reasoning at all"),
        ("", ""),
    ],
)
def test_strip_reasoning(reply: str, answer: str) -> None:
    assert strip_reasoning(reply) == answer


# Text without the letters of the tags, so that it never forms one.
PLAIN = st.text(alphabet=st.characters(blacklist_characters="<>/thinkTHINK"))


def spec_strip(text: str) -> str:
    """The rule written from its description: reasoning that began with the reply ends at a
    first closing tag met before any opening one; whole blocks go; an opening tag left means
    no answer."""
    first_close = re.search(r"</think>", text, re.I)
    first_open = re.search(r"<think>", text, re.I)
    if first_close and (not first_open or first_close.start() < first_open.start()):
        text = text[first_close.end() :]
    while (block := re.search(r"<think>.*?</think>", text, re.I | re.S)) is not None:
        text = text[: block.start()] + text[block.end() :]
    return "" if re.search(r"<think>", text, re.I) else text.strip()


@given(st.lists(st.one_of(PLAIN, st.sampled_from(["<think>", "</think>", "<THINK>"]))))
def test_strip_reasoning_follows_its_rule(parts: list[str]) -> None:
    text = "".join(parts)
    assert strip_reasoning(text) == spec_strip(text)


@given(PLAIN)
def test_a_judge_reads_a_reply_without_reasoning_as_it_is(text: str) -> None:
    assert after_reasoning(text) == text


def test_a_judge_reads_past_the_reasoning() -> None:
    assert after_reasoning("<think>[[1]] or [[5]]?</think>評価: [[4]]") == "評価: [[4]]"


@pytest.mark.parametrize(
    ("text", "finish", "reason"),
    [
        ("B", "length", None),
        ("", "length", "cut at max_tokens before an answer (raise --max-tokens)"),
        ("  ", "stop", "empty reply"),
        ("", None, "empty reply"),
    ],
)
def test_a_reply_without_an_answer_says_why(text: str, finish: str | None, reason: str) -> None:
    assert unanswered(text, finish) == reason


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object, got a list"),
        ('{"temperature": 0}', "'temperature': set by this command itself"),
        ('{"model": "x", "stream": true}', "'model', 'stream': set by this command itself"),
    ],
)
def test_extra_body_refuses_what_it_cannot_take(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)):
        ExtraBody(["temperature"])(text)


def test_extra_body_takes_a_server_option() -> None:
    body = '{"chat_template_kwargs": {"enable_thinking": false}, "top_k": 20}'
    assert ExtraBody(["temperature"])(body) == {
        "chat_template_kwargs": {"enable_thinking": False},
        "top_k": 20,
    }
