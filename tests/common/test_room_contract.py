"""The room shape, checked on every room: its `cli` module declares a ROOM and nothing else,
every command's code lies in the room (`commands/<name>.py`, or `data.py`'s PUBLISHED for
`data`), the jobs every room has carry the same names, and a room imports of another room only
its public `outputs` module (common and the compiled core are what rooms share; `testing`, the
stand-in server for tests, is no room: no room imports it, and it imports no room)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import pfgen_fast
from cli_runner import run_cli
from pfgen_fast import cli
from pfgen_fast.common.published_data import PublishedData
from pfgen_fast.common.rooms import Room

PACKAGE = Path(pfgen_fast.__file__).parent
SHARED = {"common", "_core"}
# The module of a room that other rooms may import: the files it writes and how they are read.
PUBLIC_MODULE = "outputs"
NOT_ROOMS = {*SHARED, "testing"}
ROOM_NAMES = sorted(
    path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()
    and path.name not in NOT_ROOMS
)  # fmt: skip
# Every room has these modules; a room with the job has evaluate.py, leaderboard.py, ...
EVERY_ROOM_HAS = ("cli.py", "data.py", "commands/__init__.py")
# Names that other rooms give a shared job: not to be used.
OTHER_NAMES = {
    "aggregates.py": "aggregate.py",
    "fetch.py": "data.py",
    "runs.py": "data.py",
    "ranking.py": "leaderboard.py",
    "evaluation.py": "evaluate.py",
}


def room_of(name: str) -> Room:
    room = cli.importlib.import_module(f"pfgen_fast.{name}.cli").ROOM
    assert isinstance(room, Room)
    return room


def imported_modules(path: Path, package: str) -> set[str]:
    """Every module a file imports, relative imports resolved, wherever the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join([*base, *([node.module] if node.module else [])]))
            else:
                found.add(node.module or "")
    return found


def package_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1])


def test_every_room_is_registered() -> None:
    assert ROOM_NAMES, "no rooms found"
    assert sorted(cli.ROOMS) == sorted(f"pfgen_fast.{name}.cli" for name in ROOM_NAMES)


@pytest.mark.parametrize("name", ROOM_NAMES)
def test_the_room_has_the_shared_names(name: str) -> None:
    folder = PACKAGE / name
    for required in EVERY_ROOM_HAS:
        assert (folder / required).is_file(), f"{name}/ has no {required}"
    for other, shared in OTHER_NAMES.items():
        assert not list(folder.rglob(other)), f"{name}/: {other} is named {shared} in the rooms"


@pytest.mark.parametrize("name", ROOM_NAMES)
def test_the_cli_module_declares_the_room_and_nothing_else(name: str) -> None:
    path = PACKAGE / name / "cli.py"
    assert imported_modules(path, f"pfgen_fast.{name}") <= {"pfgen_fast.common.rooms"}
    room = room_of(name)
    names = [command.name for command in room.commands]
    assert len(names) == len(set(names)), f"{name}: a command twice"


@pytest.mark.parametrize("name", ROOM_NAMES)
def test_every_command_runs_from_its_own_module_in_the_room(name: str) -> None:
    for command in room_of(name).commands:
        if command.name == "data":
            assert command.target == f"pfgen_fast.{name}.data:PUBLISHED"
            assert isinstance(command.load(), PublishedData)
        else:
            module = command.name.replace("-", "_")
            assert command.target == f"pfgen_fast.{name}.commands.{module}", command
        target = command.load()
        assert callable(target.add_arguments) and callable(target.run), command


def test_room_words_and_top_level_commands_do_not_clash() -> None:
    words = []
    for name in ROOM_NAMES:
        room = room_of(name)
        words += [room.word] if room.word else [command.name for command in room.commands]
    assert len(words) == len(set(words))


@pytest.mark.parametrize("name", [*ROOM_NAMES, "common", "testing"])
def test_a_room_imports_only_the_outputs_of_another(name: str) -> None:
    """A room imports common, the core, and of another room only its `outputs` module (how
    that room's files are read); common and testing import no room (nor testing)."""
    allowed = {"testing"} if name == "testing" else SHARED | ({name} if name != "common" else set())
    for path in sorted((PACKAGE / name).rglob("*.py")):
        for module in imported_modules(path, package_of(path)):
            parts = module.split(".")
            if parts[0] != "pfgen_fast" or len(parts) < 2 or parts[1] in allowed:
                continue
            public = name != "common" and parts[2:] == [PUBLIC_MODULE]
            assert public, f"{path.relative_to(PACKAGE)} imports {module}"


@pytest.mark.parametrize("name", [n for n in ROOM_NAMES if n != "site"])
def test_every_benchmark_room_publishes_how_its_outputs_are_read(name: str) -> None:
    assert (PACKAGE / name / f"{PUBLIC_MODULE}.py").is_file(), f"{name}/ has no outputs.py"


def test_listing_every_command_imports_no_command() -> None:
    """`python -m pfgen_fast` reads every room's declaration at each start: that brings the
    rooms' cli modules and nothing else, and no heavy library."""
    code = (
        "import sys; from pfgen_fast import cli; before = set(sys.modules); "
        "cli.build_parser([]); print(' '.join(sorted(set(sys.modules) - before))); "
        "print(' '.join(sorted(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    added, loaded = (line.split() for line in result.stdout.splitlines())
    rooms_and_their_packages = {*cli.ROOMS, *(name.rsplit(".", 1)[0] for name in cli.ROOMS)}
    assert {m for m in added if m.startswith("pfgen_fast")} <= rooms_and_their_packages
    heavy = {"numpy", "httpx", "rich", "polars", "pfgen_fast._core"}
    assert heavy.isdisjoint(loaded)


def test_score_starts_without_http() -> None:
    """`score` imports its room's data module, which declares the published data: the
    download code (httpx, TLS) comes only with `data fetch`."""
    code = (
        "import sys; from pfgen_fast import cli; cli.build_parser(['score']); print(*sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    assert "pfgen_fast.pfgen.commands.score" in loaded
    assert {"httpx", "ssl", "pfgen_fast.common.archive", "pfgen_fast.common.llm"}.isdisjoint(loaded)


def test_the_contract_check_sees_an_import_of_another_room(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_text("def f():\n    from ..lctg import data\n    import pfgen_fast.judge.cli\n")
    assert imported_modules(path, "pfgen_fast.evalmm") == {
        "pfgen_fast.lctg",
        "pfgen_fast.judge.cli",
    }


def test_help_lists_the_commands_room_by_room() -> None:
    """`--help` shows every room's help: a top-level room's above its commands, a worded room's
    beside its word."""
    result = run_cli("--help")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name in ROOM_NAMES:
        room = room_of(name)
        if room.word is None:
            heading = lines.index(f"  {room.help}")
            below = lines[heading + 1 :]
            # A command's line is indented by 4 (its wrapped help by more).
            listed = [line.split()[0] for line in below if len(line) - len(line.lstrip()) == 4]
            names = [command.name for command in room.commands]
            assert listed[: len(names)] == names
        else:
            assert any(line.split() == [room.word, *room.help.split()] for line in lines), name
