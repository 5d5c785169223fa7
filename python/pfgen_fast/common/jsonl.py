"""JSON as input: JSON lines (each line an object) and whole JSON files, every problem named by
file, line and field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import read_bytes

TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


@dataclass(frozen=True)
class JsonLine:
    where: str  # "PATH:LINE", for messages
    line: int  # from 1
    value: dict[str, Any]


def parse_json_line(raw: bytes, where: str) -> dict[str, Any]:
    """One line's object; an InputError saying what is wrong with it otherwise."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise InputError(f"{where}: {line_problem(raw, error)}") from None
    return require_object(value, where)


def require_object(value: Any, where: str) -> dict[str, Any]:
    """`value` if it is a JSON object; an InputError at `where` otherwise."""
    if not isinstance(value, dict):
        raise InputError(f"{where}: {not_an_object(value)}")
    return value


def line_problem(raw: bytes, error: orjson.JSONDecodeError) -> str:
    """What is wrong with a JSON line orjson refused: its UTF-8, else its JSON."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not valid UTF-8 at byte {bad.start}"
    return json_problem(error)


def json_problem(error: json.JSONDecodeError) -> str:
    """A JSON reader's complaint (orjson's errors are json's kind too)."""
    return f"not valid JSON: {error.msg} (column {error.colno})"


def not_an_object(value: Any) -> str:
    return f"expected a JSON object, got {type_name(value)}"


def missing_field(name: str) -> str:
    return f'field "{name}": missing'


def wrong_type(name: str, expected: str, value: Any) -> str:
    """A field of the wrong kind; `expected` as TYPE_NAMES words it ("a string")."""
    return f'field "{name}": expected {expected}, got {type_name(value)}'


def iter_json_lines(path: Path) -> Iterator[JsonLine]:
    """The objects of a JSON lines file (`.xz` decompressed), blank lines skipped."""
    for number, raw in enumerate(read_bytes(path).split(b"\n"), start=1):
        if raw.strip():
            where = f"{path}:{number}"
            yield JsonLine(where, number, parse_json_line(raw, where))


def parse_json(data: bytes, where: str, error: type[PfgenError] = InputError) -> Any:
    """A whole file's JSON value; `error` (InputError, or DataError for a benchmark's published
    files) `WHERE:LINE: not valid JSON: ...` otherwise. orjson reads it; json (which also reads
    NaN and UTF-16, and words the error) only when orjson cannot."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data)
    except UnicodeDecodeError as bad:
        raise error(f"{where}: not valid UTF-8 at byte {bad.start}") from None
    except json.JSONDecodeError as problem:
        place = f"{where}:{problem.lineno}"
        raise error(f"{place}: not valid JSON: {problem.msg} (column {problem.colno})") from None
    except ValueError as problem:  # e.g. an integer too long to convert
        raise error(f"{where}: not valid JSON: {problem}") from None
    except RecursionError:
        raise error(f"{where}: not valid JSON: nested too deeply") from None


def read_json(path: Path, error: type[PfgenError] = InputError) -> Any:
    """The JSON value of a file (`.xz` decompressed); `error` naming the file otherwise."""
    try:
        data = read_bytes(path)
    except InputError as problem:
        raise error(str(problem)) from None
    return parse_json(data, str(path), error)


def read_json_object(
    path: Path, error: type[PfgenError] = InputError, what: str = "a JSON object"
) -> dict[str, Any]:
    """A file's JSON object; `error` naming the file otherwise (`what` says what was expected)."""
    value = read_json(path, error)
    if not isinstance(value, dict):
        raise error(f"{path}: expected {what}")
    return value


def type_name(value: Any) -> str:
    return TYPE_NAMES.get(type(value), type(value).__name__)


def require(obj: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    """`obj[name]` when present and of `kind`; an InputError naming the field otherwise. A
    bool is not accepted as a number."""
    if name not in obj:
        raise InputError(f"{where}: {missing_field(name)}")
    value = obj[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        kinds_ok = False
    else:
        kinds_ok = isinstance(value, kinds)
    if not kinds_ok:
        expected = " or ".join(TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise InputError(f"{where}: {wrong_type(name, expected, value)}")
    return value


def dumps_line(obj: Any) -> bytes:
    """One JSON line (UTF-8, non-ASCII kept), newline included."""
    return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
