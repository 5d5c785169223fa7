"""The command-line options of every command that asks a model: the servers, the model, the
client's limits, `--extra-body`, `--quiet` (no progress), and `--strip-reasoning` for commands
that record answers."""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pfgen_fast.common.cli_args import (
    model_name,
    non_negative_int,
    positive_float,
    positive_int,
    refused,
)
from pfgen_fast.common.jsonl import type_name
from pfgen_fast.common.llm import DEFAULT, SERVER_URL, LLMClient, is_server_url
from pfgen_fast.common.progress import add_quiet_argument, progress_from_args

# Request fields no `--extra-body` may set: what names the model and carries the input, and
# what changes the reply's form (a stream, several choices) from the one the client reads.
CLIENT_FIELDS = ("model", "messages", "prompt", "stream", "n")


def base_url(text: str) -> str:
    """An argument type: a server's base URL (also $OPENAI_BASE_URL, the default it stands
    for)."""
    if not is_server_url(text):
        raise refused(text, f"{SERVER_URL}, e.g. http://127.0.0.1:8000/v1")
    return text


class BaseURLs(argparse.Action):
    """`--base-url`, repeatable: the first in `base_url` (what a command records as its
    server), all of them in `base_urls`."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        urls = [*(getattr(namespace, "base_urls", None) or []), values]
        namespace.base_urls = urls
        namespace.base_url = urls[0]


class ExtraBody:
    """The type of `--extra-body`: a JSON object, none of whose keys the command sets itself
    (`own_fields`, with the client's `CLIENT_FIELDS`)."""

    def __init__(self, own_fields: Collection[str]) -> None:
        self.reserved = frozenset((*CLIENT_FIELDS, *own_fields))

    def __call__(self, text: str) -> dict[str, Any]:
        try:
            value = json.loads(text, parse_constant=not_json, parse_float=finite_float)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"not JSON ({error})") from None
        if not isinstance(value, dict):
            raise argparse.ArgumentTypeError(f"expected a JSON object, got {type_name(value)}")
        clashes = sorted(self.reserved & value.keys())
        if clashes:
            raise argparse.ArgumentTypeError(
                f"{', '.join(map(repr, clashes))}: set by this command itself, not by --extra-body"
            )
        return value


def not_json(word: str) -> Any:
    """What Python's JSON reader takes beyond JSON (NaN, Infinity, -Infinity): refused, as no
    server reads it."""
    raise ValueError(f"{word} is not a JSON value; JSON numbers are finite")


def finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent; refused when too large for a float (1e999),
    which Python would read as infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number a server reads")
    return value


def add_llm_arguments(
    parser: argparse.ArgumentParser,
    *,
    request_fields: Collection[str],
    model_flag: str = "--judge-model",
    model_help: str = "the judge model's name as the server knows it",
    base_url_default: str | None = None,
    cache: bool = True,
) -> None:
    """The server options every command that asks a model shares. `request_fields`: the fields
    the command's requests set besides the model and the input (`--extra-body` may not set
    them). With `base_url_default`, `--base-url` is optional: $OPENAI_BASE_URL, else that URL.
    `cache` adds `--no-cache`. `--quiet` comes with them."""
    add_quiet_argument(parser)
    group = parser.add_argument_group("LLM server")
    key_help = "the API key comes from $OPENAI_API_KEY; repeat for several servers of one model"
    if base_url_default is None:
        group.add_argument(
            "--base-url",
            required=True,
            action=BaseURLs,
            type=base_url,
            help=f"OpenAI-compatible API base URL, e.g. http://127.0.0.1:8000/v1 ({key_help})",
        )
    else:
        group.add_argument(
            "--base-url",
            action=BaseURLs,
            type=base_url,
            default=os.environ.get("OPENAI_BASE_URL") or base_url_default,
            help=f"server URL (default: $OPENAI_BASE_URL, else {base_url_default}); {key_help}",
        )
    action = group.add_argument(model_flag, required=True, type=model_name, help=model_help)
    parser.set_defaults(llm_model_dest=action.dest)
    group.add_argument(
        "--extra-body",
        metavar="JSON",
        type=ExtraBody(request_fields),
        default={},
        help="a JSON object merged into every request, for the server's own options, e.g. "
        '\'{"chat_template_kwargs": {"enable_thinking": false}, "top_k": 20}\'; recorded '
        "with the run's settings",
    )
    group.add_argument(
        "--concurrency", type=positive_int, default=8, help="requests at once (default: 8)"
    )
    group.add_argument(
        "--timeout", type=positive_float, default=120.0, help="seconds per request (default: 120)"
    )
    group.add_argument(
        "--max-retries",
        type=non_negative_int,
        default=5,
        help="retries of a request that failed with a server error, a timeout or a dropped "
        "connection, with exponential backoff and jitter (default: 5)",
    )
    if not cache:
        return
    group.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor store replies in the response cache "
        "($PFGEN_FAST_CACHE/llm/responses.sqlite3)",
    )


def add_strip_reasoning_argument(parser: argparse.ArgumentParser) -> None:
    """`--strip-reasoning`, for the commands that record or score a model's answer."""
    parser.add_argument(
        "--strip-reasoning",
        action="store_true",
        help="remove <think>…</think> blocks from each answer before it is recorded and "
        "scored; reasoning left open (cut by --max-tokens) leaves an empty answer "
        "(default: answers as the server gives them)",
    )


def client_from_args(
    args: argparse.Namespace,
    *,
    log_path: Path | None,
    accept_400: bool = False,
    show_progress: bool = True,
    cache: bool = True,
    server: tuple[str, str] | None = None,
) -> LLMClient:
    """A client configured by the options of `add_llm_arguments`, showing a bar per run unless
    `--quiet` (or `show_progress` is False: the command shows its own). `cache` False: never
    the response cache, whatever `--no-cache` says. `server`: the base URL and model of a second
    server the command asks (`mm run`'s judge), which gets no `--extra-body` (that is for the
    command's own server)."""
    base_url, model = server or (
        getattr(args, "base_urls", None) or args.base_url,
        getattr(args, args.llm_model_dest),
    )
    return LLMClient(
        base_url,
        model,
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache_path=DEFAULT if cache and not args.no_cache else None,
        log_path=log_path,
        accept_400=accept_400,
        extra_body=None if server else args.extra_body,
        progress=progress_from_args(args) if show_progress else None,
    )
