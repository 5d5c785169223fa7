"""Files as every command reads and writes them: atomic replacement, glob expansion, the user
cache, and the one wording of read errors."""

from __future__ import annotations

import glob
import lzma
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pfgen_fast.common.errors import InputError


def cache_dir() -> Path:
    """The user cache: `$PFGEN_FAST_CACHE`, else `$XDG_CACHE_HOME/pfgen_fast`, else
    `~/.cache/pfgen_fast`. Fetched data, tables and LLM replies live below it."""
    env = os.environ.get("PFGEN_FAST_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pfgen_fast"


def expand_paths(patterns: list[str]) -> tuple[list[Path], list[str]]:
    """Files named by paths or glob patterns (`**` included), in order, without duplicates;
    also the patterns that matched nothing."""
    found: dict[Path, None] = {}
    unmatched: list[str] = []
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(Path(p) for p in glob.glob(pattern, recursive=True))
        else:
            matches = [Path(pattern)] if Path(pattern).exists() else []
        if not matches:
            unmatched.append(pattern)
        found.update(dict.fromkeys(matches))
    return list(found), unmatched


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when its name ends in `.xz`; an InputError naming the
    file otherwise."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None
    if path.suffix != ".xz":
        return data
    try:
        return lzma.decompress(data)
    except lzma.LZMAError as error:
        raise InputError(f"{path}: not a valid .xz file: {error}") from None


def _new_file_mode() -> int:
    """The mode `open` gives a new file: 0o666 less the umask (read once: setting and
    restoring the umask is not safe while other threads create files)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


NEW_FILE_MODE = _new_file_mode()


@contextmanager
def replaced_atomically(path: Path) -> Iterator[Path]:
    """A temporary file beside `path` to write, renamed into place when the block ends without
    an error (removed otherwise): readers see the old file or the new one, never a part. The
    file gets the mode of the one it replaces, or that of a newly created file (the temporary
    file's own is private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = NEW_FILE_MODE
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, mode)
        os.close(handle)
        yield Path(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_atomically(path: Path, data: bytes) -> None:
    """Writes `data` to `path` through `replaced_atomically`."""
    with replaced_atomically(path) as temporary:
        temporary.write_bytes(data)
