"""llm-jp-eval-mm's commands: `python -m pfgen_fast mm COMMAND` (one module each in
`pfgen_fast.evalmm.commands`; `data` is the published files')."""

from pfgen_fast.common.rooms import Command, Room

COMMANDS = "pfgen_fast.evalmm.commands"

ROOM = Room(
    word="mm",
    help="llm-jp-eval-mm (Japanese vision-language tasks): run a model on its tasks, its "
    "scorers, exact, and its leaderboard",
    commands=(
        Command(
            "score",
            "score a JSON lines file (ref, pred, document fields) with one metric",
            f"{COMMANDS}.score",
        ),
        Command(
            "evaluate",
            "re-score an llm-jp-eval-mm result directory (<task>/<model>/prediction.jsonl) "
            "and show a leaderboard",
            f"{COMMANDS}.evaluate",
        ),
        Command(
            "leaderboard",
            "the leaderboard of a result directory's evaluation.jsonl files",
            f"{COMMANDS}.leaderboard",
        ),
        Command(
            "run",
            "run a vision-language model (any OpenAI-compatible server) on tasks, then score "
            "the replies",
            f"{COMMANDS}.run",
        ),
        Command(
            "tasks",
            "llm-jp-eval-mm's tasks: dataset, pinned revision, split, metrics, cluster",
            f"{COMMANDS}.tasks",
        ),
        Command(
            "data",
            "fetch llm-jp-eval-mm's prompt files or verify them",
            "pfgen_fast.evalmm.data:PUBLISHED",
        ),
    ),
)
