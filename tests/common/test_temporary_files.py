"""common.files: temporary files and folders named after their process, the removal of those a
dead process left, and write errors that name the file the user named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import (
    WriteError,
    process_is_alive,
    remove_leftovers,
    replaced_atomically,
    temporary_folder,
    write_atomically,
)


def dead_pid() -> int:
    """The id of a process that has ended (and been waited for)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_process_is_alive() -> None:
    assert process_is_alive(os.getpid())
    assert not process_is_alive(dead_pid())


def test_a_temporary_file_carries_the_process_id(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    with replaced_atomically(target) as temporary:
        assert temporary.name.startswith(f".result.json.{os.getpid()}-")
        assert temporary.name.endswith(".tmp")
        temporary.write_bytes(b"{}")
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_leftovers_of_dead_processes_go_and_the_others_stay(tmp_path: Path) -> None:
    dead = dead_pid()
    left = tmp_path / f".result.json.{dead}-abc123.tmp"
    live = tmp_path / f".result.json.{os.getpid()}-def456.tmp"
    other_file = tmp_path / ".result.json.notes"
    unrelated = tmp_path / f".other.json.{dead}-abc123.tmp"
    for path in (left, live, other_file, unrelated):
        path.write_bytes(b"x")
    write_atomically(tmp_path / "result.json", b"{}")
    assert not left.exists()
    assert live.exists() and other_file.exists() and unrelated.exists()

    folder = tmp_path / f"pfgen-build-refs-{dead}-xyz"
    (folder / "set-0").mkdir(parents=True)
    (folder / "set-0" / "spill-1").write_bytes(b"x")
    remove_leftovers(tmp_path, "pfgen-build-refs-")
    assert not folder.exists()


def test_a_temporary_folder_is_removed_however_the_block_ends(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), temporary_folder("pfgen-test-", tmp_path) as folder:
        assert folder.name.startswith(f"pfgen-test-{os.getpid()}-")
        (folder / "file").write_bytes(b"x")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_write_errors_name_the_target(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    target.mkdir()
    with pytest.raises(WriteError) as caught:
        write_atomically(target, b"{}")
    assert str(caught.value) == f"{target}: cannot write: Is a directory"
    assert isinstance(caught.value, OSError) and isinstance(caught.value, PfgenError)
    assert caught.value.filename == str(target)
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]

    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(WriteError, match=r"file is not a directory"):
        write_atomically(tmp_path / "file" / "sub" / "out.csv", b"")
