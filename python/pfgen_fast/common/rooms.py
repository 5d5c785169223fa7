"""The shape every benchmark room declares: its `cli` module holds one `ROOM`, a Room naming
its commands, and imports nothing else, so that listing every room's commands costs next to
nothing. A command's module is imported only when the command runs (or shows its help)."""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Protocol


class CommandTarget(Protocol):
    """What runs a command: a module or an object with these two functions."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


@dataclass(frozen=True)
class Command:
    """A command: its name on the command line, its one-line help, and `target`, where its
    `add_arguments` and `run` are: "package.module", or "package.module:NAME" for an object
    of that module (as entry points name objects). `without_cycle_collector`: the command
    builds large trees of parsed JSON with next to no reference cycles, so Python's cyclic
    collector, which would walk those trees again and again, is off while it runs."""

    name: str
    help: str
    target: str
    without_cycle_collector: bool = False

    def load(self) -> CommandTarget:
        module_name, _, attribute = self.target.partition(":")
        module = importlib.import_module(module_name)
        found: CommandTarget = getattr(module, attribute) if attribute else module
        return found


@dataclass(frozen=True)
class Room:
    """A benchmark room: `word` is the command that holds its commands (`python -m pfgen_fast
    WORD COMMAND ...`), or None for commands at the top level (`python -m pfgen_fast COMMAND`).
    `help` is its line in `python -m pfgen_fast --help`: beside its word, or above its
    top-level commands."""

    word: str | None
    help: str
    commands: tuple[Command, ...]
