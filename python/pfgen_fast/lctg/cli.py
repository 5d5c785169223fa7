"""LCTG Bench's commands: `python -m pfgen_fast lctg COMMAND` (one module each in
`pfgen_fast.lctg.commands`; `data` is the published files')."""

from pfgen_fast.common.rooms import Command, Room

COMMANDS = "pfgen_fast.lctg.commands"

ROOM = Room(
    word="lctg",
    help="LCTG Bench: controllability of generation (CyberAgent)",
    commands=(
        Command(
            "data",
            "fetch LCTG Bench's files or verify a checkout",
            "pfgen_fast.lctg.data:PUBLISHED",
        ),
        Command(
            "generate",
            "generate a task's texts with a model (generated_result_v1.jsonl)",
            f"{COMMANDS}.generate",
        ),
        Command(
            "eval",
            "score generations: remover, quality judge, checks, the benchmark's table",
            f"{COMMANDS}.eval",
        ),
        Command(
            "leaderboard",
            "several evaluations side by side, and a figure per task",
            f"{COMMANDS}.leaderboard",
        ),
    ),
)
