"""The shared command-line arguments: one declaration, the same behaviour in every command."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from rich.console import Console

from pfgen_fast.common.cli_args import (
    add_data_argument,
    add_jobs_argument,
    add_json_argument,
    add_paths_argument,
    input_paths,
    non_negative_int,
    positive_int,
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
