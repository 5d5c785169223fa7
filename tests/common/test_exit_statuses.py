"""The exit statuses of README's contract for what is refused before anything runs: 2 and one
line, for the command line alone (no command, no input), a server address that is none, and a
JSON value no server reads (NaN, infinities) in `--extra-body`; nothing written, nothing
sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_fast.testing import serve

# Every command that asks a model, with what it needs besides the server options.
LLM_COMMANDS = {
    "generate": ["generate", "--model", "org/m", "--out", "OUT"],
    "lctg generate": ["lctg", "generate", "--task", "summary", "--model", "m", "--out", "OUT"],
    "lctg eval": ["lctg", "eval", "--task", "summary", "--judge-model", "m", "--out", "OUT", "g"],
    "judge pairwise": ["judge", "pairwise", "items.jsonl", "--judge-model", "m", "--out", "OUT"],
    "judge pointwise": ["judge", "pointwise", "--runs", "r", "--judge-model", "m", "--out", "OUT"],
    "mm run": ["mm", "run", "--task", "jdocqa", "--model", "m", "--out", "OUT"],
    "mm evaluate": ["mm", "evaluate", "results", "--judge-model", "m", "--out", "OUT"],
}


def refused(result: Any, message: str) -> None:
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and message in line and "--help" in line


def command_line(name: str, out: Path) -> list[str]:
    return [str(out) if arg == "OUT" else arg for arg in LLM_COMMANDS[name]]


def test_no_command_lists_the_commands_as_a_usage_error() -> None:
    result = run_cli()
    assert result.returncode == 2 and not result.stdout
    assert "commands:" in result.stderr and "exit status:" in result.stderr


def test_site_without_inputs_is_a_usage_error(tmp_path: Path) -> None:
    refused(run_cli("site", tmp_path / "out"), "give at least one input (--pfgen, --lctg")
    assert not (tmp_path / "out").exists()


# Each command with the first case, the first command with each.
URLS = ["notaurl", "ftp://example.org/v1", "http://", "http://[::1"]
URL_CASES = [(name, URLS[0]) for name in LLM_COMMANDS] + [("generate", url) for url in URLS[1:]]
BODIES = [
    ('{"top_k": NaN}', "NaN is not a JSON value"),
    ('{"a": {"b": [1, Infinity]}}', "Infinity is not a JSON value"),
    ('{"penalty": -Infinity}', "-Infinity is not a JSON value"),
    ('{"top_k": 1e999}', "1e999 is too large"),
]
BODY_CASES = [(name, *BODIES[0]) for name in LLM_COMMANDS] + [
    ("lctg generate", *body) for body in BODIES[1:]
]


@pytest.mark.parametrize(("command", "url"), URL_CASES)
def test_a_base_url_that_is_none_is_a_usage_error(tmp_path: Path, command: str, url: str) -> None:
    flag = "--judge-base-url" if command == "mm run" else "--base-url"
    args = command_line(command, tmp_path / "out")
    result = run_cli(*args, flag, url, cwd=tmp_path)
    refused(result, f"argument {flag}: {url!r}: expected an http:// or https:// URL")
    assert not (tmp_path / "out").exists()


def test_a_base_url_from_the_environment_is_checked_too(tmp_path: Path) -> None:
    args = command_line("generate", tmp_path / "out")
    result = run_cli(*args, cwd=tmp_path, env={"OPENAI_BASE_URL": "localhost:8000"})
    refused(result, "argument --base-url: 'localhost:8000': expected an http:// or https://")


@pytest.mark.parametrize(("command", "body", "message"), BODY_CASES)
def test_extra_body_with_a_number_json_has_not_is_refused(
    tmp_path: Path, command: str, body: str, message: str
) -> None:
    with serve() as server:
        args = command_line(command, tmp_path / "out")
        result = run_cli(*args, "--base-url", server.base_url, "--extra-body", body, cwd=tmp_path)
    refused(result, f"argument --extra-body: not JSON ({message}")
    assert not server.received and not (tmp_path / "out").exists()
