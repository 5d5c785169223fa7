"""What the judge's commands share: their output options, the count of calls and the files
they write."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.common.llm import LLMClient, LLMStats
from pfgen_fast.judge.outputs import SUMMARY


def add_output_arguments(parser: argparse.ArgumentParser, files: str) -> None:
    parser.add_argument("--out", type=Path, help=f"write {files} into DIR")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def settings_record(client: LLMClient, requests: dict[str, Any]) -> dict[str, Any]:
    """How the judge was asked: its servers, the request settings and `--extra-body`."""
    return {"base_urls": client.base_urls, **requests, "extra_body": client.extra_body}


def stats_record(stats: LLMStats) -> dict[str, int]:
    return {
        "calls": stats.calls,
        "cached": stats.cached,
        "failed": stats.failed,
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
    }


def write_outputs(
    out: Path, name: str, records: list[dict[str, Any]], summary: dict[str, Any]
) -> None:
    write_atomically(out / name, b"".join(dumps_line(r) for r in records))
    write_atomically(out / SUMMARY, orjson.dumps(summary, option=orjson.OPT_INDENT_2))
