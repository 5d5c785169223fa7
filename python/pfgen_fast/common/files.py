"""Files as every command reads and writes them: atomic replacement, glob expansion, the user
cache, the one wording of read and write errors, and temporary files and folders named after the
process that made them, so that a later run can remove those of a process that was killed."""

from __future__ import annotations

import errno
import glob
import lzma
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import InputError, PfgenError

# What follows the prefix in the name of a temporary file or folder: the id of the process that
# made it, a dash, and tempfile's random part (a temporary file also ends in `.tmp`).
OWNER = re.compile(r"(\d+)-[A-Za-z0-9_]+(\.tmp)?")


class WriteError(OSError, PfgenError):
    """A file that cannot be written, named as the user named it (not its temporary file): an
    OSError for the callers that catch those, a PfgenError for the CLI."""

    def __init__(self, path: Path, reason: str, code: int = 0) -> None:
        super().__init__(code, reason, str(path))

    def __str__(self) -> str:
        return f"{self.filename}: cannot write: {self.strerror}"

    @classmethod
    def of(cls, path: Path, error: OSError) -> WriteError:
        return cls(path, error.strerror or str(error), error.errno or 0)


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


def process_is_alive(pid: int) -> bool:
    """Whether a process with this id exists (signal 0 checks without sending anything). Any
    doubt counts as alive: only the leftovers of processes known to be gone are removed."""
    if os.name != "posix" or pid <= 0:
        return True  # elsewhere os.kill(pid, 0) is not a harmless probe
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def remove_leftovers(directory: Path, prefix: str) -> None:
    """Removes the temporary files and folders in `directory` named `PREFIX<pid>-<random>`
    (files with `.tmp` after it) whose process has ended: what a killed run left behind."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        owner = OWNER.fullmatch(entry.name, len(prefix))
        if owner is None or process_is_alive(int(owner[1])):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


@contextmanager
def temporary_folder(prefix: str, parent: Path | None = None) -> Iterator[Path]:
    """A new folder `PREFIX<pid>-<random>` in `parent` (default: the system's temporary
    folder), removed when the block ends, however it ends; the folders a killed process left
    there under the same prefix are removed first. WriteError if it cannot be made."""
    where = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    remove_leftovers(where, prefix)
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=where))
    except OSError as error:
        raise WriteError.of(where, error) from None
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def make_parent(path: Path) -> None:
    """Creates the folders above `path`; a WriteError names the part that is not a folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        for parent in reversed(path.parents):
            if parent.exists() and not parent.is_dir():
                raise WriteError(path, f"{parent} is not a directory", errno.ENOTDIR) from None
        raise WriteError.of(path, error) from None


def _new_file_mode() -> int:
    """The mode `open` gives a new file: 0o666 less the umask (read once: setting and
    restoring the umask is not safe while other threads create files)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


NEW_FILE_MODE = _new_file_mode()
# The (folder, prefix) pairs whose leftovers this process has removed already.
_CLEANED: set[tuple[Path, str]] = set()


@dataclass(frozen=True)
class OutputTarget:
    """Where an output named `path` goes. `file`: the file written, the final target of a
    symbolic link (so that the link stays a link, and the new file is renamed into place
    beside its target). `direct`: that file exists and is not a regular file (a character or
    block device, a FIFO, a socket): it is opened and written in place, with no temporary
    file, since a rename would replace the device itself."""

    file: Path
    direct: bool


def output_target(path: Path) -> OutputTarget:
    """How every writer of this module treats `path` (see OutputTarget); a WriteError naming
    `path` when it cannot be looked at (a loop of symbolic links, a folder not searchable)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:  # a new file, or a link to one
        return OutputTarget(Path(os.path.realpath(path)), direct=False)
    except OSError as error:
        raise WriteError.of(path, error) from None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):  # a folder: the rename says it is one
        return OutputTarget(Path(os.path.realpath(path)), direct=False)
    return OutputTarget(path, direct=True)


def output_folder(path: Path) -> Path:
    """Where a folder named `path` is put in place (by a rename): the final target of a
    symbolic link, so that the link stays a link. A WriteError when `path` exists and is not
    a folder (a file, a device, a FIFO): it is never replaced."""
    target = output_target(path)
    if target.direct or target.file.is_file():
        raise WriteError(path, "not a directory", errno.ENOTDIR)
    return target.file


def check_writable_folder(path: Path) -> None:
    """Fails before any work when the folder `path` cannot take files (a file in the way, a
    path through a file, no permission): a WriteError naming it. The folder is created."""
    folder = output_folder(path)
    make_parent(folder)
    try:
        folder.mkdir(exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise WriteError.of(path, error) from None


@contextmanager
def replaced_atomically(path: Path) -> Iterator[Path]:
    """A temporary file beside `path` to write, renamed into place when the block ends without
    an error (removed otherwise): readers see the old file or the new one, never a part. The
    file gets the mode of the one it replaces, or that of a newly created file (the temporary
    file's own is private). Failures to create, write or rename it raise WriteError naming
    `path`; temporary files of `path` that killed processes left are removed first. A symbolic
    link is followed, and a path that is not a regular file (a device, a FIFO) is given to
    write as it is: `output_target`."""
    make_parent(path)
    target = output_target(path)
    if target.direct:
        try:
            yield path
        except OSError as error:
            if error.filename != str(path):
                raise
            raise WriteError.of(path, error) from None
        return
    file = target.file
    make_parent(file)
    try:
        mode = file.stat().st_mode & 0o7777
    except OSError:
        mode = NEW_FILE_MODE
    prefix = f".{file.name}."
    if (file.parent, prefix) not in _CLEANED:  # once per file and process: folders can be large
        _CLEANED.add((file.parent, prefix))
        remove_leftovers(file.parent, prefix)
    try:
        handle, name = tempfile.mkstemp(
            dir=file.parent, prefix=f"{prefix}{os.getpid()}-", suffix=".tmp"
        )
    except OSError as error:
        raise WriteError.of(path, error) from None
    temporary = Path(name)
    try:
        os.fchmod(handle, mode)
        os.close(handle)
        try:
            yield temporary
        except OSError as error:
            if error.filename != name:
                raise
            raise WriteError.of(path, error) from None
        try:
            os.replace(temporary, file)
        except OSError as error:
            raise WriteError.of(path, error) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_atomically(path: Path, data: bytes) -> None:
    """Writes `data` to `path` through `replaced_atomically` (WriteError if it cannot)."""
    with replaced_atomically(path) as temporary:
        try:
            with open(temporary, "wb") as out:
                out.write(data)
        except OSError as error:
            raise WriteError.of(path, error) from None
