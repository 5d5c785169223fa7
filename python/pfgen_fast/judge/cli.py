"""The judge's commands: `python -m pfgen_fast judge COMMAND` (one module each in
`pfgen_fast.judge.commands`)."""

from pfgen_fast.common.rooms import Command, Room

COMMANDS = "pfgen_fast.judge.commands"

ROOM = Room(
    word="judge",
    help="pairwise LLM-as-a-judge with verdict probabilities, rankings, a 10-point judge",
    commands=(
        Command(
            "pairwise",
            "judge pairs in both orders; proposed, BS1 and BS2 verdicts and measures",
            f"{COMMANDS}.pairwise",
        ),
        Command(
            "rank",
            "rank models by Bradley-Terry from pairwise results, with bootstrap intervals",
            f"{COMMANDS}.rank",
        ),
        Command(
            "pointwise",
            "the pfgen-bench paper's 10-point judge over runs, correlated with pfgen scores",
            f"{COMMANDS}.pointwise",
        ),
    ),
)
