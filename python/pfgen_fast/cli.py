"""`python -m pfgen_fast COMMAND ...`: pfgen-bench's commands (one module each in
`pfgen_fast.pfgen.commands`), and one command per other benchmark room (`lctg`, `mm`, `judge`),
whose own subcommands its `cli` module declares."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import NoReturn

from pfgen_fast.common.errors import PfgenError

# Subcommand name -> (module in pfgen_fast.pfgen.commands, one-line help). Modules are imported
# only when their command runs, so `score` does not pay for plotting or HTTP imports.
COMMANDS: dict[str, tuple[str, str]] = {
    "score": ("score", "score JSON lines of answers (question, answer) against the reference data"),
    "eval": (
        "eval",
        "evaluate trials files and write result.json beside each (the benchmark's make)",
    ),
    "data": ("data", "fetch the published benchmark data or verify a data directory"),
    "prompt": ("prompt", "print the published prompt of every question for one trial"),
    "generate": ("generate", "generate trials with a model server, with the published protocol"),
    "build-refs": (
        "build_refs",
        "build reference answer sets (Qxx.json) from generated candidates, with a step report",
    ),
    "synth": ("synth", "write synthetic candidate answers to one question (for benchmarks)"),
    "report": (
        "report",
        "write README.md beside each result.json, the leaderboard into a README, exports",
    ),
    "plot": ("plot", "draw the paper's figures (PNG and SVG) from result.json files"),
    "stability": (
        "stability",
        "score every run with one reference source at a time and print Pearson r per pair",
    ),
}


# Room command -> (its cli module, one-line help). A room's cli module has `DESCRIPTION`,
# `add_arguments(parser)` (its subcommands) and `run(args) -> int`.
ROOMS: dict[str, tuple[str, str]] = {
    "lctg": ("pfgen_fast.lctg.cli", "LCTG Bench: controllability of generation (CyberAgent)"),
    "mm": ("pfgen_fast.evalmm.cli", "llm-jp-eval-mm's scorers (Japanese vision-language tasks)"),
    "judge": ("pfgen_fast.judge.cli", "pairwise LLM-as-a-judge with verdict probabilities"),
}


# Commands that read large trees of parsed JSON (trials, results, reference answers) and make
# next to no reference cycles: Python's cyclic collector would walk those growing trees again
# and again (a quarter of a second of an evaluation of 66 runs), so it is off while they run.
WITHOUT_CYCLE_COLLECTOR = {"score", "eval", "report", "plot", "stability"}


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors are errors like the others: one line, exit status 1."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="python -m pfgen_fast", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(_module=f"pfgen_fast.pfgen.commands.{module_name}")
    for name, (module_name, help_text) in ROOMS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(_module=module_name)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    # Parse the command name first, then let its module declare its own arguments.
    known, _ = parser.parse_known_args(argv[:1] if argv and not argv[0].startswith("-") else argv)
    module = importlib.import_module(known._module)
    description = getattr(module, "DESCRIPTION", None) or {**COMMANDS, **ROOMS}[known.command][1]
    sub = ArgumentParser(prog=f"python -m pfgen_fast {known.command}", description=description)
    module.add_arguments(sub)
    args = sub.parse_args(argv[1:])
    if known.command in WITHOUT_CYCLE_COLLECTOR:
        gc.disable()
    try:
        return int(module.run(args) or 0)
    except PfgenError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, without a second error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
