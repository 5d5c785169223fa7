"""common.jsonl's whole-file JSON reader (read_json, parse_json) and common.cpus."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from pfgen_fast.common.cpus import usable_cpus
from pfgen_fast.common.errors import DataError, InputError
from pfgen_fast.common.jsonl import parse_json, read_json


def test_reads_what_json_reads(tmp_path: Path) -> None:
    value = {"a": [1, 2.5, "日本語"], "b": None}
    plain = tmp_path / "v.json"
    plain.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    packed = tmp_path / "v.json.xz"
    packed.write_bytes(lzma.compress(plain.read_bytes()))
    assert read_json(plain) == value == read_json(packed)
    # What orjson refuses and json reads: NaN, and UTF-16 text.
    assert str(parse_json(b'{"x": NaN}', "w")["x"]) == "nan"
    assert parse_json(json.dumps(value).encode("utf-16"), "w") == value


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b'{"a": 1,}', b"\xff\xfe\x00", b"[" * 100_000 + b"]" * 100_000],
    ids=["empty", "truncated", "trailing-comma", "bad-bytes", "deep-nesting"],
)
def test_invalid_json_is_one_error_naming_the_place(data: bytes) -> None:
    with pytest.raises(InputError, match=r"^f\.json(:\d+)?: not valid (JSON|UTF-8)"):
        parse_json(data, "f.json")


def test_errors_name_the_file_with_the_kind_asked(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(InputError, match=f"^{missing}: cannot read"):
        read_json(missing)
    broken = tmp_path / "broken.json"
    broken.write_bytes(b"{")
    with pytest.raises(DataError, match=f"^{broken}:1: not valid JSON"):
        read_json(broken, DataError)
    with pytest.raises(DataError, match=f"^{missing}: cannot read"):
        read_json(missing, DataError)


def test_usable_cpus_is_positive() -> None:
    assert usable_cpus() >= 1
