"""The shared command-line arguments: one declaration, the same behaviour in every command."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from rich.console import Console

from cli_runner import run_cli
from pfgen_fast.common.cli_args import (
    add_data_argument,
    add_jobs_argument,
    add_json_argument,
    add_paths_argument,
    fraction,
    fraction_or_none,
    input_paths,
    int_from_to,
    integer,
    model_name,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    task_path,
)


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_paths_argument(parser, "result.json files", ["result/**/result.json"])
    add_data_argument(parser, "./data")
    add_jobs_argument(parser)
    add_json_argument(parser, "the summary")
    return parser


def test_arguments_parse_and_default() -> None:
    args = parser().parse_args(["a", "b", "--data", "d", "--jobs", "3", "--json"])
    assert (args.paths, args.data, args.jobs, args.json) == (["a", "b"], "d", 3, True)
    defaults = parser().parse_args([])
    assert defaults.paths == [] and defaults.data is None and not defaults.json
    assert defaults.jobs >= 1


@pytest.mark.parametrize(
    ("kind", "text", "minimum"),
    [
        (positive_int, "0", 1),
        (positive_int, "x", 1),
        (non_negative_int, "-1", 0),
        (non_negative_int, "1.5", 0),
    ],
)
def test_whole_numbers_below_their_minimum_are_refused(kind, text: str, minimum: int) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=f"whole number of at least {minimum}"):
        kind(text)


def test_whole_numbers_at_their_minimum_are_taken() -> None:
    assert (positive_int("1"), positive_int(" 7 "), non_negative_int("0")) == (1, 7, 0)


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (integer, "1.5", "a whole number"),
        (int_from_to(1, 5), "6", "a whole number from 1 to 5"),
        (int_from_to(1, 5), "x", "a whole number from 1 to 5"),
        (positive_float, "0", "a finite number above 0"),
        (positive_float, "inf", "a finite number above 0"),
        (non_negative_float, "nan", "a finite number of at least 0"),
        (fraction, "0", "a number above 0 and at most 1"),
        (fraction, "1.01", "a number above 0 and at most 1"),
        (fraction_or_none, "high", "a number above 0 and at most 1, or none"),
        (task_path("DIR"), "jdocqa", "TASK=DIR"),
        (task_path("FILE"), "=x", "TASK=FILE"),
        (model_name, " ", "a model name"),
    ],
)
def test_every_type_refuses_in_one_shape(kind, text: str, expected: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        kind(text)
    assert str(refused.value) == f"{text!r}: expected {expected}"


def test_the_types_take_their_values() -> None:
    assert (integer("-3"), int_from_to(1, 5)("5"), fraction("1"), fraction_or_none("None")) == (
        -3,
        5,
        1.0,
        None,
    )
    assert (positive_float("0.5"), non_negative_float("0"), fraction_or_none("0.98")) == (
        0.5,
        0.0,
        0.98,
    )
    assert task_path("FILE")("jdocqa=a=b.jsonl") == ("jdocqa", Path("a=b.jsonl"))
    assert model_name("org/model") == "org/model"


@pytest.mark.parametrize(
    ("words", "option", "text", "expected"),
    [
        (["prompt", "--mode", "qa", "--trial"], "--trial", "0", "a whole number of at least 1"),
        (["synth", "--question", "Q01", "--out", "x.jsonl", "--count"], "--count", "0",
         "a whole number of at least 1"),
        (["build-refs", "--meta", "m", "--candidates", "c", "--out", "o", "--ngram-n"],
         "--ngram-n", "6", "a whole number from 1 to 5"),
        (["build-refs", "--meta", "m", "--candidates", "c", "--out", "o", "--typical-fraction"],
         "--typical-fraction", "0", "a number above 0 and at most 1"),
        (["judge", "rank", "r.jsonl", "--bootstrap"], "--bootstrap", "-1",
         "a whole number of at least 0"),
        (["site", "out", "--mm-data"], "--mm-data", "jdocqa", "TASK=DIR"),
        (["mm", "run", "--task", "ai2d", "--base-url", "http://127.0.0.1:9/v1", "--model"],
         "--model", "", "a model name"),
        (["mm", "run", "--task", "ai2d", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
          "--judge-model"], "--judge-model", "", "a model name"),
    ],
)  # fmt: skip
def test_a_refused_option_is_a_usage_error(
    tmp_path: Path, words: list[str], option: str, text: str, expected: str
) -> None:
    """Before anything runs: one line naming the option and the value, status 2."""
    result = run_cli(*words, text, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: argument {option}: {text!r}: expected {expected}")
    assert result.stderr.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_help_names_the_defaults() -> None:
    text = parser().format_help()
    assert "result/**/result.json" in text and "(default: ./data)" in text


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("a/1/result.json", "a/2/result.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_given_patterns_that_match_nothing_are_warned_about(tree: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=200)
    paths = input_paths(["a/**/result.json", "none/*.json"], ["x/**"], console)
    assert paths == [Path("a/1/result.json"), Path("a/2/result.json")]
    assert "warning: nothing matches none/*.json" in out.getvalue()


def test_defaults_that_match_nothing_are_silent(tree: Path) -> None:
    out = io.StringIO()
    paths = input_paths([], ["a/*/result.json", "data/**/result.json"], Console(file=out))
    assert len(paths) == 2 and out.getvalue() == ""
